// libFuzzer harness: the control message that rank 0 broadcasts before every forward pass, as the
// other ranks receive it (raw bytes), through ControlMessage::problem() — the only thing that stands
// between a corrupted or foreign message and the worker's forward pass.
//
// Input: 1 flag byte, 8 bytes of context and vocabulary size (reduced to a model's range), then the message bytes (zero-padded to
// the struct). With flag bit 0 the harness seals the message first, so that the fuzzer gets past the
// checksum to the field checks. An accepted message must satisfy everything run_worker() relies on
// (receive_control() in rank_roles.cpp), else the harness aborts; the input's bytes after the message
// are the extra tokens of a long batch, which extra_tokens_problem() must accept exactly when they
// lie in the vocabulary.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/mpi/control_message.h"

namespace {

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "fuzz_control_message: accepted a message that %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 9) return 0;
  const uint8_t flags = data[0];
  // A worker's context and vocabulary come from its own model: positive, and here at most 2^17
  // positions (the extra tokens are allocated) and 2^18 tokens.
  uint32_t raw_ctx, raw_vocab;
  std::memcpy(&raw_ctx, data + 1, 4);
  std::memcpy(&raw_vocab, data + 5, 4);
  const int32_t n_ctx = int32_t(1 + raw_ctx % (1u << 17)), n_vocab = int32_t(1 + raw_vocab % (1u << 18));
  r1pi::ControlMessage m;
  std::memset(static_cast<void*>(&m), 0, sizeof m);
  std::memcpy(&m, data + 9, std::min(size - 9, sizeof m));
  if (flags & 1u) m.seal();

  const std::string problem = m.problem(n_ctx, n_vocab);
  if (!problem.empty()) return 0;

  // What the worker does with an accepted message (rank_roles.cpp, run_worker), checked.
  if (m.magic != r1pi::ControlMessage::kMagic || m.version != r1pi::ControlMessage::kVersion) finding("has a bad header");
  if (m.op == r1pi::ControlOp::Stop) {
    if (m.status > 1) finding("stops with a bad status");
    return 0;
  }
  if (m.op != r1pi::ControlOp::Forward) finding("has an unknown operation");
  if (m.n_tokens < 1 || m.pos < 0 || int64_t(m.pos) + m.n_tokens > n_ctx) finding("lies outside the context");
  if (m.pick != r1pi::PickMode::None && m.pick != r1pi::PickMode::Greedy && m.pick != r1pi::PickMode::TopK)
    finding("has an unknown pick mode");
  if (m.pick == r1pi::PickMode::TopK && m.top_k < 1) finding("asks for top_k < 1");
  if (m.pick != r1pi::PickMode::None && m.pick_rows != 1 && m.pick_rows != m.n_tokens)
    finding("asks for picks of rows it does not run");
  const int inline_tokens = std::min(m.n_tokens, r1pi::ControlMessage::kInlineTokens);
  for (int i = 0; i < inline_tokens; ++i)
    if (m.tokens[i] < 0 || m.tokens[i] >= n_vocab) finding("has a token outside the vocabulary");
  // The worker sizes the second broadcast from n_extra_tokens(): within the context, and exactly
  // the tokens past the inline ones.
  const int extra = m.n_extra_tokens();
  if (extra < 0 || int64_t(extra) + inline_tokens != m.n_tokens) finding("announces a wrong number of extra tokens");
  // Those tokens: the input's bytes after the message (zeros past its end), then checked.
  std::vector<int32_t> tokens(size_t(extra), 0);
  const size_t after = 9 + sizeof m;
  if (extra > 0 && size > after) std::memcpy(tokens.data(), data + after, std::min(size - after, tokens.size() * 4));
  const bool ok = r1pi::extra_tokens_problem(tokens.data(), tokens.size(), n_vocab).empty();
  bool in_range = true;
  for (int32_t t : tokens) in_range = in_range && t >= 0 && t < n_vocab;
  if (ok != in_range) std::abort();
  return 0;
}
