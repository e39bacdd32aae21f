#include "cluster/board_check.h"

#include <cstdarg>
#include <cstdio>

namespace r1pi {

namespace {

std::string format(const char* fmt, ...) {
  char text[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof text, fmt, args);
  va_end(args);
  return text;
}

double mb(uint64_t bytes) { return double(bytes) / 1e6; }

// The Raspberry Pi firmware's throttling bits (vcgencmd get_throttled): now, and since boot.
constexpr uint32_t kThrottledNow = 0xF, kThrottledSinceBoot = 0xF0000;
constexpr const char* kPowerFix =
    "the official 27 W (5 V, 5 A) supply and a cooler (the Active Cooler on a Pi 5); check again after a reboot";

// A Pi 5 starts to throttle at 80 C and throttles hard at 85 C.
constexpr double kWarmC = 80, kHotC = 85;

// r1pi's own memory beside the weights and the KV cache: work buffers, the vocabulary, the
// runtime (0.3-0.5 GB measured on boards, docs/raspberry-pi.md).
constexpr uint64_t kOverheadBytes = 400'000'000;

CheckRow cpu_row(const SystemFacts& f, const BoardMeasures& m) {
  CheckRow row{"cpu", Verdict::Ok,
               format("%s, %d CPUs online, %s kernels", f.cpu_model.empty() ? "unknown CPU" : f.cpu_model.c_str(),
                      f.cpus_online, m.kernels.c_str()),
               ""};
  if (m.kernels == "scalar") {
    row.verdict = Verdict::Warn;
    row.value += ": no SIMD kernels for this CPU, several times slower";
    row.fix = "run r1pi on a CPU with NEON, AVX2 or AVX-512 (R1PI_BACKEND unset)";
  }
  return row;
}

CheckRow clock_row(const SystemFacts& f) {
  if (!f.cur_mhz || !f.max_mhz) return {"clock", Verdict::Ok, "not reported (no cpufreq)", ""};
  return {"clock", Verdict::Ok, format("%.0f of %.0f MHz", *f.cur_mhz, *f.max_mhz), ""};
}

CheckRow governor_row(const SystemFacts& f) {
  if (!f.governor) return {"governor", Verdict::Ok, "none (no cpufreq: a VM or a fixed clock)", ""};
  if (*f.governor == "performance") return {"governor", Verdict::Ok, "performance", ""};
  return {"governor", Verdict::Warn,
          *f.governor + ": the clock drops between the syncs and rises late (the records run at performance)",
          "echo performance | sudo tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor"};
}

CheckRow throttling_row(const SystemFacts& f) {
  if (!f.throttled) return {"throttling", Verdict::Ok, "not reported (no vcgencmd: not a Raspberry Pi)", ""};
  const uint32_t bits = *f.throttled;
  if (bits & kThrottledNow)
    return {"throttling", Verdict::Fail, format("throttled=0x%x: under-voltage or throttling now", bits), kPowerFix};
  if (bits & kThrottledSinceBoot)
    return {"throttling", Verdict::Warn, format("throttled=0x%x: under-voltage or throttling since boot", bits),
            kPowerFix};
  return {"throttling", Verdict::Ok, format("throttled=0x%x", bits), ""};
}

CheckRow temperature_row(const SystemFacts& f) {
  if (!f.temperature_c) return {"temperature", Verdict::Ok, "not reported", ""};
  const double t = *f.temperature_c;
  const std::string fix = "a heatsink and fan (the Active Cooler on a Pi 5), and air around the boards";
  if (t >= kHotC) return {"temperature", Verdict::Fail, format("%.1f C: the CPU throttles", t), fix};
  if (t >= kWarmC) return {"temperature", Verdict::Warn, format("%.1f C: near throttling (%.0f C)", t, kHotC), fix};
  return {"temperature", Verdict::Ok, format("%.1f C", t), ""};
}

CheckRow memory_row(const SystemFacts& f, const ModelNeeds& n) {
  const uint64_t need = n.weight_bytes + n.kv_bytes + kOverheadBytes;
  const std::string what = format("%.0f MB needed (weights %.0f, KV cache %.0f at -c %d, r1pi %.0f)", mb(need),
                                  mb(n.weight_bytes), mb(n.kv_bytes), n.n_ctx, mb(kOverheadBytes));
  if (!f.mem_available) return {"memory", Verdict::Warn, what + ", available memory unknown", ""};
  const std::string fix = "a smaller -c, a smaller quantisation, or more boards (each holds a share)";
  if (need > *f.mem_available)
    return {"memory", Verdict::Fail, what + format(", %.0f MB available", mb(*f.mem_available)), fix};
  if (need > *f.mem_available / 10 * 9)
    return {"memory", Verdict::Warn, what + format(", %.0f MB available: little to spare", mb(*f.mem_available)), fix};
  return {"memory", Verdict::Ok, what + format(", %.0f MB available", mb(*f.mem_available)), ""};
}

CheckRow swap_row(const SystemFacts& f) {
  if (f.swap_used == 0) return {"swap", Verdict::Ok, "none in use", ""};
  return {"swap", Verdict::Warn,
          format("%.0f MB in use: pages pushed out now may be the model's, read back from disk each token", mb(f.swap_used)),
          "close what holds the memory, or sudo swapoff -a"};
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Ok: return "ok";
    case Verdict::Warn: return "warn";
    case Verdict::Fail: return "fail";
  }
  return "?";
}

BoardReport check_board(const std::string& board, const SystemFacts& facts, const BoardMeasures& m,
                        const ModelNeeds& needs) {
  BoardReport report{board, {}, 0, m.read_gbps, needs.read_per_token, needs.fingerprint, m.r1pi_sha256};
  report.rows = {cpu_row(facts, m), clock_row(facts), governor_row(facts), throttling_row(facts),
                 temperature_row(facts), memory_row(facts, needs), swap_row(facts),
                 {"page size", Verdict::Ok, format("%ld KiB", m.page_bytes / 1024), ""},
                 {"read rate", Verdict::Ok, format("%.1f GB/s with %d threads", m.read_gbps, m.threads), ""},
                 {"model", Verdict::Ok, needs.summary, ""}};
  report.predicted_tok_s = needs.read_per_token ? m.read_gbps * 1e9 / double(needs.read_per_token) : 0;
  report.rows.push_back({"decode", Verdict::Ok,
                         format("at most %.1f tok/s: %.1f MB read per token at %.1f GB/s", report.predicted_tok_s,
                                mb(needs.read_per_token), m.read_gbps),
                         ""});
  return report;
}

}  // namespace r1pi
