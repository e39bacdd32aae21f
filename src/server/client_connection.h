// The TCP connection a request came on, watched from the engine's thread: a client whose connection
// was reset is seen before the next token, streamed or not, without waiting for a write to fail.
// The end of a client's input is not its leaving: a client that half-closes after its request
// (shutdown(SHUT_WR), `nc -N`, some proxies) still reads the answer, and the server cannot tell
// it from one that closed its socket until it writes (a closed socket answers with a reset, and
// the write after that fails). So a streamed answer notices a client that closed at its next
// writes; a whole one, at its write. The server's handlers get the socket from
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
  // The connection was reset or failed: the client is gone. Does not block and reads nothing. The
  // socket belongs to the HTTP server: ask only while its request is being answered.
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
