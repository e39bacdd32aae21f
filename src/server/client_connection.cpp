#include "server/client_connection.h"

#include <dirent.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstdlib>

namespace r1pi {

namespace {

bool same_address(const sockaddr_storage& a, socklen_t len, const std::string& host, int port) {
  std::string h;
  int p = -1;
  return numeric_address(a, len, h, p) && host == h && port == p;
}

bool is_connection(int fd, const std::string& local_addr, int local_port, const std::string& remote_addr,
                   int remote_port) {
  sockaddr_storage local{}, peer{};
  socklen_t local_len = sizeof local, peer_len = sizeof peer;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0) return false;  // not a socket
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0) return false;    // not connected
  return same_address(local, local_len, local_addr, local_port) && same_address(peer, peer_len, remote_addr, remote_port);
}

}  // namespace

bool numeric_address(const sockaddr_storage& a, socklen_t len, std::string& host, int& port) {
  char h[NI_MAXHOST], p[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&a), len, h, sizeof h, p, sizeof p,
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return false;
  host = h;
  port = std::atoi(p);
  return true;
}

bool ClientConnection::closed() const {
  if (fd_ < 0) return false;
  // A reset shows as an error and a hang-up (the server never shuts its own side while it
  // answers); the end of the client's input only as readable, which is no news here.
  pollfd p{fd_, 0, 0};
  return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0;
}

ClientConnection connection_between(const std::string& local_addr, int local_port, const std::string& remote_addr,
                                    int remote_port) {
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return {};
  int found = -1;
  while (dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != 0 || fd == dirfd(dir)) continue;
    if (is_connection(int(fd), local_addr, local_port, remote_addr, remote_port)) {
      found = int(fd);
      break;
    }
  }
  closedir(dir);
  return found < 0 ? ClientConnection() : ClientConnection(found);
}

}  // namespace r1pi
