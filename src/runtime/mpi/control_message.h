// What rank 0 tells the other ranks before every forward pass (and every change to the KV cache's
// slots): a small fixed-size message with a version and a checksum, validated before anything is
// run. A batch's entries beyond the inline ones follow in a second broadcast (only long prefill
// batches need it).
#pragma once
#include <cstdint>
#include <string>

#include "sampling/penalties.h"

namespace r1pi {

enum class ControlOp : uint16_t {
  Forward = 1,   // run entries[0..n_entries) as one batch; then pick after each entry that asks
  Stop = 2,      // leave the message loop (status: 0 normal end, 1 error on rank 0)
  Truncate = 3,  // slot seq forgets positions n and later (n = 0 frees it)
  Copy = 4,      // slot seq takes what slot src holds
};

enum class PickMode : uint8_t {
  None = 0,     // no logits for this entry
  Greedy = 1,   // global argmax (MPI_MAXLOC, ties to the lowest id)
  TopK = 2,     // every rank sends its top_k candidates to rank 0
  Row = 3,      // no pick: every rank sends its part of the row, rank 0 keeps the whole row
  Ruled = 4,    // a grammar's row: TopK's candidates (top_k 1 when greedy); rank 0 picks among them
                // when the grammar allows them all, else asks for the row as Row gathers it
};

// One token of the batch: its sequence (KV cache slot), position and how the token after it is
// picked. 32 bytes.
struct BatchEntry {
  int32_t token = 0;
  int32_t pos = 0;
  uint16_t seq = 0;
  PickMode pick = PickMode::None;
  uint8_t reserved = 0;
  int32_t top_k = 0;  // TopK: the candidates each rank sends
  // Greedy and TopK: the repetition penalties each rank applies to its rows first (off: the default).
  PenaltyParams penalties{1.0f, 0, 0.0f, 0.0f};
};

struct ControlMessage {
  static constexpr uint32_t kMagic = 0x49503152;  // "R1PI"
  static constexpr uint16_t kVersion = 5;         // 3: batches of sequences; 4: whole rows; 5: penalties
  static constexpr int kInlineEntries = 64;

  uint32_t magic = kMagic;
  uint16_t version = kVersion;
  ControlOp op = ControlOp::Stop;
  uint16_t status = 0;
  int32_t n_entries = 0;
  int32_t seq = 0, src = 0, n = 0;  // Truncate and Copy
  BatchEntry entries[kInlineEntries] = {};
  uint32_t checksum = 0;

  void seal();  // computes the checksum over everything before it
  // Empty when valid for a model with n_vocab tokens and n_seqs slots of n_ctx positions; else the
  // problem. Entries past the inline ones are checked by entries_problem() after they arrive.
  std::string problem(int n_ctx, int64_t n_vocab, int n_seqs) const;
  // How many entries follow in a second broadcast. Only for a message that problem() accepted: a
  // receiver sizes that broadcast from it, so it must never come from an unchecked n_entries.
  int n_extra_entries() const {
    return op == ControlOp::Forward && n_entries > kInlineEntries ? n_entries - kInlineEntries : 0;
  }
};

// Empty when each of the n entries has a token in the vocabulary, an existing slot, a position in
// the context, a known pick mode (TopK with 1..n_vocab candidates) and finite penalties over a
// window within the context; else the first problem.
// `first`: the index of entries[0] in the batch, for the message.
std::string entries_problem(const BatchEntry* entries, size_t n, int n_ctx, int64_t n_vocab, int n_seqs,
                            size_t first = 0);

}  // namespace r1pi
