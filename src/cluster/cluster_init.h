// r1pi-cluster init: from a list of boards to a cluster mpirun can start r1pi on. Per board: ssh
// without a password (else the exact commands that set it up), the same Open MPI as here, and
// r1pi and r1pi-cluster at this folder's path, copied where absent or different (to a temporary
// name, renamed once whole); then the hostfile, rank 0 first, slots=1.
#pragma once
#include <string>
#include <vector>

namespace r1pi {

struct InitOptions {
  std::vector<std::string> hosts;  // rank order
  std::string ssh;                 // the ssh command's words
  std::string hostfile;            // written when every board is ready
  std::string bin_dir;             // this r1pi-cluster's folder: the same path on every board
};

struct InitReport {
  std::string text;  // a line per board (and the fixes), then the hostfile written or not
  int status = 0;    // 0: every board ready and the hostfile written
};

// Throws r1pi::Error when there is no ssh client, or no r1pi beside this r1pi-cluster to copy.
InitReport init_cluster(const InitOptions& options);

}  // namespace r1pi
