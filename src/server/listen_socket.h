// The server's side of the network before any connection: the listening socket, and how many
// connections the process may hold (each is a descriptor).
#pragma once
#include <cstddef>
#include <string>

namespace r1pi {

// A non-blocking socket listening on host:port (0: a free port) with the kernel's whole accept
// backlog; -1 when it cannot. port is set to the port it listens on.
int listen_socket(const std::string& host, int& port);

// Raises the open-file limit to the hard one (often 1024 soft, far more hard) and returns the
// connections that leave room for the process's other descriptors (at most 16,384).
size_t connections_the_descriptors_allow();

}  // namespace r1pi
