#include "runtime/mpi/control_message.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

namespace r1pi {

namespace {
uint32_t fnv1a(const void* data, size_t n) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 16777619u;
  return h;
}
}  // namespace

void ControlMessage::seal() { checksum = fnv1a(this, offsetof(ControlMessage, checksum)); }

std::string ControlMessage::problem(int n_ctx, int64_t n_vocab, int n_seqs) const {
  if (magic != kMagic) return "bad magic";
  if (version != kVersion)
    return "version " + std::to_string(version) + " (this build speaks " + std::to_string(kVersion) +
           "; all ranks must run the same r1pi)";
  if (checksum != fnv1a(this, offsetof(ControlMessage, checksum))) return "checksum mismatch";
  auto bad_slot = [&](int s) { return s < 0 || s >= n_seqs; };
  switch (op) {
    case ControlOp::Stop: return status <= 1 ? "" : "bad stop status";
    case ControlOp::Truncate:
      if (bad_slot(seq)) return "slot " + std::to_string(seq) + " outside 0.." + std::to_string(n_seqs - 1);
      return n < 0 || n > n_ctx ? "truncate to " + std::to_string(n) + " positions of " + std::to_string(n_ctx) : "";
    case ControlOp::Copy:
      if (bad_slot(seq) || bad_slot(src))
        return "copy of slot " + std::to_string(src) + " to " + std::to_string(seq) + " outside 0.." +
               std::to_string(n_seqs - 1);
      return "";
    case ControlOp::Forward: break;
    default: return "unknown operation " + std::to_string(int(op));
  }
  if (n_entries < 1 || n_entries > n_ctx * int64_t(n_seqs))
    return std::to_string(n_entries) + " tokens in a batch (1 to " + std::to_string(n_ctx * int64_t(n_seqs)) + ")";
  return entries_problem(entries, size_t(std::min(n_entries, kInlineEntries)), n_ctx, n_vocab, n_seqs);
}

std::string entries_problem(const BatchEntry* entries, size_t n, int n_ctx, int64_t n_vocab, int n_seqs,
                            size_t first) {
  for (size_t i = 0; i < n; ++i) {
    const BatchEntry& e = entries[i];
    const std::string where = " (token " + std::to_string(first + i) + " of the batch)";
    if (e.token < 0 || e.token >= n_vocab) return "token id " + std::to_string(e.token) + " out of range" + where;
    if (int(e.seq) >= n_seqs) return "slot " + std::to_string(e.seq) + " outside 0.." + std::to_string(n_seqs - 1) + where;
    if (e.pos < 0 || e.pos >= n_ctx)
      return "position " + std::to_string(e.pos) + " outside the context of " + std::to_string(n_ctx) + where;
    if (uint8_t(e.pick) > uint8_t(PickMode::Ruled)) return "unknown pick mode" + where;
    if ((e.pick == PickMode::TopK || e.pick == PickMode::Ruled) && (e.top_k < 1 || e.top_k > n_vocab))
      return "top_k " + std::to_string(e.top_k) + " outside 1.." + std::to_string(n_vocab) + where;
    const PenaltyParams& p = e.penalties;
    if (!std::isfinite(p.repeat) || !std::isfinite(p.frequency) || !std::isfinite(p.presence))
      return "a penalty that is not a number" + where;
    if (p.last_n < -1 || p.last_n > n_ctx)
      return "penalty window of " + std::to_string(p.last_n) + " tokens outside -1.." + std::to_string(n_ctx) + where;
  }
  return "";
}

}  // namespace r1pi
