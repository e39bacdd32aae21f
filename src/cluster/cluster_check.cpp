#include "cluster/cluster_check.h"

#include <algorithm>
#include <cstdio>
#include <future>

#include "cluster/check_report.h"
#include "cluster/remote_run.h"
#include "common/error.h"

namespace r1pi {

namespace {

using json = nlohmann::ordered_json;

// What running the check on one board gave.
struct Outcome {
  std::string host;
  int status = -1;
  std::string out, err;
};

Outcome run_on(const std::string& ssh, const std::string& host, const std::string& command) {
  const RemoteResult r = run_remote(ssh, host, command);
  return {host, r.status, r.out, r.err};
}

json row(const std::string& check, const char* status, const std::string& found, const std::string& fix) {
  return {{"check", check}, {"status", status}, {"found", found}, {"fix", fix}};
}

// A board's report: its own checks, or a row saying why there are none.
json board_report(const Outcome& o, const ClusterCheckOptions& opt) {
  json report = json::parse(o.out, nullptr, false);
  if (report.is_object() && report.contains("checks")) {
    report["hostname"] = report["board"];  // what the board calls itself; the row is the hostfile's name
    report["board"] = o.host;
    report["reachable"] = true;
    report["checks"].insert(report["checks"].begin(), row("reachable", "ok", "ssh " + o.host, ""));
    return report;
  }
  std::string found = last_line(o.err.empty() ? o.out : o.err), fix;
  const bool reached = o.status != 255;
  if (!reached) {
    found = "ssh could not reach it or log in: " + found;
    fix = ssh_setup_fix(o.host);
  } else if (o.status == 127 || o.status == 126) {
    found = "no r1pi-cluster at " + opt.bin_dir + " there: " + found;
    fix = "rsync -a " + opt.bin_dir + "/r1pi " + opt.bin_dir + "/r1pi-cluster " + o.host + ":" + opt.bin_dir + "/";
  } else if (found.find(opt.model) != std::string::npos) {
    fix = "the model at the same path on every board: rsync -a " + opt.model + " " + o.host + ":" + opt.model +
          " (or --weights-from-root: rank 0 sends the slices)";
  }
  json out = {{"board", o.host},
              {"reachable", reached},
              {"checks", json::array({reached ? row("reachable", "ok", "ssh " + o.host, "")
                                              : row("reachable", "fail", found, fix)})}};
  if (reached) {  // reached, but its check did not run: why, and the fix
    out["error"] = found;
    out["fix"] = fix;
  }
  return out;
}

// The rows that compare a board with rank 0's (the first board checked): r1pi, the model.
void compare_with_first(json& board, const json& first, const ClusterCheckOptions& opt) {
  const std::string host = board["board"], first_host = first["board"];
  const std::string sha = board.value("r1pi_sha256", ""), first_sha = first.value("r1pi_sha256", "");
  const std::string copy_r1pi = "rsync -a " + opt.bin_dir + "/r1pi " + host + ":" + opt.bin_dir + "/ (one build everywhere)";
  if (sha.empty())
    board["checks"].push_back(row("same r1pi", "fail", "no r1pi beside r1pi-cluster in " + opt.bin_dir, copy_r1pi));
  else if (sha != first_sha)
    board["checks"].push_back(row("same r1pi", "fail",
                                  "sha256 " + sha.substr(0, 12) + ", " + first_host + "'s " + first_sha.substr(0, 12),
                                  copy_r1pi));
  else
    board["checks"].push_back(row("same r1pi", "ok", "sha256 " + sha.substr(0, 12), ""));
  const std::string fp = board.value("model_fingerprint", ""), first_fp = first.value("model_fingerprint", "");
  if (fp != first_fp)
    board["checks"].push_back(row("same model", "fail",
                                  "another file at " + opt.model + " than " + first_host + "'s (fingerprint " +
                                      fp.substr(0, 12) + " against " + first_fp.substr(0, 12) + ")",
                                  "rsync -a " + opt.model + " " + host + ":" + opt.model));
  else
    board["checks"].push_back(row("same model", "ok", "fingerprint " + fp.substr(0, 12), ""));
}

}  // namespace

ClusterReport check_cluster(const ClusterCheckOptions& opt, bool warn_ok) {
  require_ssh_client(opt.ssh);
  std::vector<std::future<Outcome>> running;
  for (const std::string& host : opt.hosts)
    running.push_back(std::async(std::launch::async, run_on, opt.ssh, host, opt.remote_command));
  json boards = json::array();
  for (auto& r : running) boards.push_back(board_report(r.get(), opt));
  const json* first = nullptr;
  for (const json& b : boards)
    if (b.contains("model_fingerprint")) {
      first = &b;
      break;
    }
  if (first) {
    const json reference = *first;
    for (json& b : boards)
      if (b.contains("model_fingerprint")) compare_with_first(b, reference, opt);
  }

  // The table: a row per board, a column per check of the first fully checked board.
  std::vector<std::string> columns;
  for (const json& c : (first ? *first : boards[0])["checks"]) columns.push_back(c["check"]);
  size_t host_width = 5;
  for (const std::string& h : opt.hosts) host_width = std::max(host_width, h.size());
  std::string table = padded("board", host_width);
  for (const std::string& c : columns) table += "  " + c;
  table += "\n";
  int failures = 0, warnings = 0;
  std::string problems;
  for (const json& b : boards) {
    const std::string host = b["board"];
    table += padded(host, host_width);
    for (const std::string& column : columns) {
      std::string status = "-";
      for (const json& c : b["checks"])
        if (c["check"] == column) status = c["status"];
      table += "  " + padded(status, column.size());
    }
    table += "\n";
    for (const json& c : b["checks"]) {
      const std::string status = c["status"];
      if (status == "ok") continue;
      (status == "fail" ? failures : warnings)++;
      problems += host + " " + std::string(c["check"]) + " " + status + ": " + std::string(c["found"]) + "\n";
      if (!std::string(c["fix"]).empty()) problems += "  fix: " + std::string(c["fix"]) + "\n";
    }
    if (b.contains("error")) {
      ++failures;
      problems += host + " check fail: " + std::string(b["error"]) + "\n";
      if (!std::string(b["fix"]).empty()) problems += "  fix: " + std::string(b["fix"]) + "\n";
    }
  }

  // The decode bound: every board reads its share of the bytes a forward reads, at its own rate.
  json prediction = nullptr;
  std::string plan;
  bool all_measured = true;
  double slowest = 0, sum_gbps = 0, fastest_gbps = 0;
  std::string slowest_host;
  uint64_t bytes = 0;
  for (const json& b : boards) {
    const double gbps = b.value("read_gbps", 0.0);
    if (gbps <= 0) {
      all_measured = false;
      continue;
    }
    bytes = b.value("read_per_token", uint64_t(0));
    const double seconds = double(bytes) / double(opt.hosts.size()) / (gbps * 1e9);
    if (seconds > slowest) slowest = seconds, slowest_host = b["board"];
    sum_gbps += gbps;
    fastest_gbps = std::max(fastest_gbps, gbps);
  }
  if (all_measured && bytes > 0) {
    const double even = 1.0 / slowest, weighted = sum_gbps * 1e9 / double(bytes);
    char text[512];
    std::snprintf(text, sizeof text,
                  "decode at most %.1f tok/s on %zu boards with even shares (%s, the slowest reader, holds the "
                  "others back), %.1f with --shard-weights auto; the syncs come on top\n",
                  even, opt.hosts.size(), slowest_host.c_str(), weighted);
    plan = text;
    prediction = {{"even_tok_s", even}, {"by_read_rate_tok_s", weighted}, {"slowest_board", slowest_host}};
  } else {
    plan = "no decode bound: not every board was checked\n";
  }
  ClusterReport report;
  report.table = table + problems + plan + std::to_string(opt.hosts.size()) + " boards, " + std::to_string(warnings) +
                 " warning" + (warnings == 1 ? "" : "s") + ", " + std::to_string(failures) + " failure" +
                 (failures == 1 ? "" : "s") + "\n";
  report.json = {{"boards", boards}, {"prediction", prediction}};
  report.status = failures > 0 || (warnings > 0 && !warn_ok) ? 1 : 0;
  return report;
}

}  // namespace r1pi
