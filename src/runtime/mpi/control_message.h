// What rank 0 tells the other ranks before every forward pass: a small fixed-size message with a
// version and a checksum, validated before anything is run. Tokens beyond the inline ones follow
// in a second broadcast (only long prefill batches need it).
#pragma once
#include <cstdint>
#include <string>

namespace r1pi {

enum class ControlOp : uint16_t {
  Forward = 1,  // run tokens[0..n_tokens) at positions pos..; then choose the next token(s) if asked
  Stop = 2,     // leave the message loop (status: 0 normal end, 1 error on rank 0)
};

enum class PickMode : uint16_t {
  None = 0,     // no logits needed (prefill chunks before the last)
  Greedy = 1,   // global argmax (MPI_MAXLOC, ties to the lowest id)
  TopK = 2,     // every rank sends its top_k candidates to rank 0
};

struct ControlMessage {
  static constexpr uint32_t kMagic = 0x49503152;  // "R1PI"
  static constexpr uint16_t kVersion = 2;
  static constexpr int kInlineTokens = 64;

  uint32_t magic = kMagic;
  uint16_t version = kVersion;
  ControlOp op = ControlOp::Stop;
  int32_t pos = 0;
  int32_t n_tokens = 0;
  PickMode pick = PickMode::None;
  uint16_t status = 0;
  int32_t top_k = 0;
  // Picks for the last token only (1), or for every one of the n_tokens (speculative decoding's
  // verification: the token after each draft position).
  int32_t pick_rows = 1;
  int32_t tokens[kInlineTokens] = {};
  uint32_t checksum = 0;

  void seal();  // computes the checksum over everything before it
  // Empty when valid for a model with n_vocab tokens and a context of n_ctx; else the problem.
  // Tokens past the inline ones are checked by extra_tokens_problem() after they arrive.
  std::string problem(int n_ctx, int64_t n_vocab) const;
  // How many tokens follow in a second broadcast. Only for a message that problem() accepted: a
  // receiver sizes that broadcast from it, so it must never come from an unchecked n_tokens.
  int n_extra_tokens() const {
    return op == ControlOp::Forward && n_tokens > kInlineTokens ? n_tokens - kInlineTokens : 0;
  }
};

// Empty when every one of the n tokens that followed a message lies in the vocabulary.
std::string extra_tokens_problem(const int32_t* tokens, size_t n, int64_t n_vocab);

}  // namespace r1pi
