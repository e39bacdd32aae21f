// r1pi-cluster check --compare RUN.csv: a real run's decode (r1pi --timings RUN.csv, rank 0's
// rows) beside the board's bound, and what holds it: memory (within 25% of what the read rate
// allows), compute, or the network (syncs a quarter or more of the time).
#pragma once
#include <string>

#include "cluster/board_check.h"

namespace r1pi {

// The row "measured", from the CSV's decode forwards (one token each: their median Pred and Sync).
// Throws r1pi::Error naming the file when it is not --timings' CSV or holds no decode forward.
CheckRow compare_with_run(const std::string& csv_path, const BoardReport& report);

}  // namespace r1pi
