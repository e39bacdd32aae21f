#include "runtime/mpi/control_message.h"

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

std::string ControlMessage::problem(int n_ctx, int64_t n_vocab) const {
  if (magic != kMagic) return "bad magic";
  if (version != kVersion)
    return "version " + std::to_string(version) + " (this build speaks " + std::to_string(kVersion) +
           "; all ranks must run the same r1pi)";
  if (checksum != fnv1a(this, offsetof(ControlMessage, checksum))) return "checksum mismatch";
  if (op == ControlOp::Stop) return status <= 1 ? "" : "bad stop status";
  if (op != ControlOp::Forward) return "unknown operation " + std::to_string(int(op));
  if (n_tokens < 1 || pos < 0 || int64_t(pos) + n_tokens > n_ctx)
    return "positions " + std::to_string(pos) + " + " + std::to_string(n_tokens) +
           " outside the context of " + std::to_string(n_ctx);
  if (pick != PickMode::None && pick != PickMode::Greedy && pick != PickMode::TopK)
    return "unknown pick mode";
  if (pick != PickMode::None && pick_rows != 1 && pick_rows != n_tokens)
    return "pick_rows " + std::to_string(pick_rows) + ": 1 or the " + std::to_string(n_tokens) + " tokens";
  if (pick == PickMode::TopK && (top_k < 1 || top_k > n_vocab))
    return "top_k " + std::to_string(top_k) + " outside 1.." + std::to_string(n_vocab);
  for (int i = 0; i < n_tokens && i < kInlineTokens; ++i)
    if (tokens[i] < 0 || tokens[i] >= n_vocab) return "token id " + std::to_string(tokens[i]) + " out of range";
  return "";
}

std::string extra_tokens_problem(const int32_t* tokens, size_t n, int64_t n_vocab) {
  for (size_t i = 0; i < n; ++i)
    if (tokens[i] < 0 || tokens[i] >= n_vocab)
      return "token id " + std::to_string(tokens[i]) + " out of range (token " +
             std::to_string(ControlMessage::kInlineTokens + i) + " of the batch)";
  return "";
}

}  // namespace r1pi
