// r1pi-cluster check --hostfile: every board's own check (r1pi-cluster check --local --json, run
// there over ssh), side by side: a row per board and a column per check, then each problem with its
// fix, what differs between the boards (r1pi, the model at the same path), and the decode bound of
// the cluster with the board that holds it.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace r1pi {

struct ClusterCheckOptions {
  std::vector<std::string> hosts;  // rank order
  std::string ssh;                 // the ssh command, as words for the shell ("ssh -o BatchMode=yes ...")
  std::string remote_command;      // what every board runs: its own check --local --json --warn-ok
  std::string model;               // the model's path (the same on every board)
  std::string bin_dir;             // where r1pi and r1pi-cluster are, on every board
};

struct ClusterReport {
  std::string table;
  nlohmann::ordered_json json;
  int status = 0;  // 0 when every board is ok (with warn_ok: none failed), else 1
};

// Runs the boards' checks at once. Throws r1pi::Error when there is no ssh client to run.
ClusterReport check_cluster(const ClusterCheckOptions& options, bool warn_ok);

}  // namespace r1pi
