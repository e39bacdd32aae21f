// One board's checks (r1pi-cluster check): a row per thing that decides how fast, or whether, r1pi
// runs there, each ok / warn / fail with what was found and the fix; and the decode speed the
// board's read rate allows.
#pragma once
#include <string>
#include <vector>

#include "cluster/model_needs.h"
#include "cluster/system_facts.h"

namespace r1pi {

enum class Verdict { Ok, Warn, Fail };
const char* verdict_name(Verdict v);  // "ok", "warn", "fail"

struct CheckRow {
  std::string check;  // "governor"
  Verdict verdict = Verdict::Ok;
  std::string value;  // what was found, and why it is not ok
  std::string fix;    // the command or step that mends it ("" when ok)
};

// What r1pi-cluster measured on the board itself.
struct BoardMeasures {
  std::string kernels;     // the kernel backend r1pi picks on this CPU
  int threads = 0;         // r1pi's threads there (its -t, or every core)
  double read_gbps = 0;    // measure_read_bandwidth with those threads
  long page_bytes = 0;
  std::string r1pi_sha256;  // of the r1pi beside r1pi-cluster ("" when there is none)
};

struct BoardReport {
  std::string board;
  std::vector<CheckRow> rows;
  double predicted_tok_s = 0;  // read rate over the bytes a decode forward reads
  // What a cluster's check compares across boards, and plans with.
  double read_gbps = 0;
  uint64_t read_per_token = 0;
  std::string model_fingerprint, r1pi_sha256;
};

BoardReport check_board(const std::string& board, const SystemFacts& facts, const BoardMeasures& measures,
                        const ModelNeeds& needs);

}  // namespace r1pi
