// The TCP connection a request came on, watched from the engine's thread: a client that closed it
// (a stop button, a killed script, a timeout on its side) is seen before the next token, streamed
// or not, without waiting for a write to fail (the first write after a close still succeeds; only
// the peer's reset makes a later one fail). The server's handlers get the socket from
// HttpServer::current_socket; connection_between finds one by its addresses (the tests' use).
#pragma once
#include <sys/socket.h>

#include <string>

namespace r1pi {

class ClientConnection {
 public:
  ClientConnection() = default;  // none known: never seen to close
  explicit ClientConnection(int fd) : fd_(fd) {}
  bool known() const { return fd_ >= 0; }
  // The peer closed or reset the connection (it has nothing more to send: a client that shut
  // down only its sending side also counts as gone). Does not block and reads nothing. The socket
  // belongs to the HTTP server: ask only while its request is being answered.
  bool closed() const;

 private:
  int fd_ = -1;
};

// An address as the requests carry it (cpp-httplib's spelling, kept by http_server.cpp): numeric
// host and port; false when it has none.
bool numeric_address(const sockaddr_storage& address, socklen_t length, std::string& host, int& port);

// The server's socket whose local and peer addresses are these (numeric_address), or none.
ClientConnection connection_between(const std::string& local_addr, int local_port, const std::string& remote_addr,
                                    int remote_port);

}  // namespace r1pi
