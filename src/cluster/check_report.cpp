#include "cluster/check_report.h"

#include <algorithm>

namespace r1pi {

std::string padded(const std::string& text, size_t width) {
  return text + std::string(width > text.size() ? width - text.size() : 0, ' ');
}

namespace {

int count(const BoardReport& r, Verdict v) {
  return int(std::count_if(r.rows.begin(), r.rows.end(), [v](const CheckRow& row) { return row.verdict == v; }));
}

}  // namespace

std::string report_table(const BoardReport& r) {
  size_t width = 5;
  for (const CheckRow& row : r.rows) width = std::max(width, row.check.size());
  std::string out = "board " + r.board + "\n" + padded("check", width) + "  status  found\n";
  for (const CheckRow& row : r.rows) {
    out += padded(row.check, width) + "  " + padded(verdict_name(row.verdict), 6) + "  " + row.value + "\n";
    if (!row.fix.empty()) out += std::string(width + 10, ' ') + "fix: " + row.fix + "\n";
  }
  const int warnings = count(r, Verdict::Warn), failures = count(r, Verdict::Fail);
  out += std::to_string(int(r.rows.size()) - warnings - failures) + " ok, " + std::to_string(warnings) + " warning" +
         (warnings == 1 ? "" : "s") + ", " + std::to_string(failures) + " failure" + (failures == 1 ? "" : "s") + "\n";
  return out;
}

nlohmann::ordered_json report_json(const BoardReport& r) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const CheckRow& row : r.rows)
    rows.push_back({{"check", row.check}, {"status", verdict_name(row.verdict)}, {"found", row.value}, {"fix", row.fix}});
  return {{"board", r.board},
          {"checks", rows},
          {"predicted_tok_s", r.predicted_tok_s},
          {"read_gbps", r.read_gbps},
          {"read_per_token", r.read_per_token},
          {"model_fingerprint", r.model_fingerprint},
          {"r1pi_sha256", r.r1pi_sha256}};
}

int report_status(const BoardReport& r, bool warn_ok) {
  if (count(r, Verdict::Fail) > 0) return 1;
  return count(r, Verdict::Warn) > 0 && !warn_ok ? 1 : 0;
}

}  // namespace r1pi
