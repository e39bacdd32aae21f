#include "cluster/run_compare.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/error.h"

namespace r1pi {

namespace {

constexpr const char* kHeader = "pos,tokens,pred_ms,sync_ms,sent_bytes,recv_bytes,accepted";

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

CheckRow compare_with_run(const std::string& csv_path, const BoardReport& report) {
  std::ifstream in(csv_path);
  if (!in) throw Error(csv_path + ": cannot be read");
  std::string line;
  if (!std::getline(in, line) || line != kHeader)
    throw Error(csv_path + ": not a --timings CSV (its first line is not '" + kHeader + "')");
  std::vector<double> pred, sync;
  for (int number = 2; std::getline(in, line); ++number) {
    std::istringstream row(line);
    std::string field[7];
    for (std::string& f : field) std::getline(row, f, ',');
    try {
      if (std::stoi(field[1]) != 1) continue;  // prefill and verification batches: not decode
      pred.push_back(std::stod(field[2]));
      sync.push_back(std::stod(field[3]));
    } catch (const std::exception&) {
      throw Error(csv_path + ": line " + std::to_string(number) + " is not a --timings row: " + line);
    }
  }
  if (pred.empty()) throw Error(csv_path + ": no decode forward (a row of one token) to compare");
  const double pred_ms = median(pred), sync_ms = median(sync), total = pred_ms + sync_ms;
  const double bound_ms = report.predicted_tok_s > 0 ? 1e3 / report.predicted_tok_s : 0;
  const double share = bound_ms > 0 ? bound_ms / pred_ms : 0;
  const char* limit = sync_ms >= 0.25 * total ? "the network (syncs are a quarter or more of each token)"
                      : share >= 0.75        ? "memory (Pred within 25% of the read rate's bound)"
                                             : "compute (Pred well above the read rate's bound)";
  char value[400];
  std::snprintf(value, sizeof value,
                "%zu decode forwards: Pred %.2f + Sync %.2f ms per token (%.1f tok/s), the read rate's bound "
                "%.2f ms (%.0f%% of Pred): held by %s",
                pred.size(), pred_ms, sync_ms, 1e3 / total, bound_ms, 100 * share, limit);
  return {"measured", Verdict::Ok, value, ""};
}

}  // namespace r1pi
