// libFuzzer harness: the control message that rank 0 broadcasts before every forward pass, as the
// other ranks receive it (raw bytes), through ControlMessage::problem() — the only thing that stands
// between a corrupted or foreign message and the worker's forward pass or slot operation.
//
// Input: 1 flag byte, 9 bytes of context, vocabulary size and slot count (reduced to a model's
// range), then the message bytes (zero-padded to the struct). With flag bit 0 the harness seals the
// message first, so that the fuzzer gets past the checksum to the field checks. An accepted message
// must satisfy everything run_worker() relies on (receive_control() in rank_roles.cpp), else the
// harness aborts; the input's bytes after the message are the extra entries of a long batch, which
// entries_problem() must accept exactly when each is valid.
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

bool entry_ok(const r1pi::BatchEntry& e, int n_ctx, int64_t n_vocab, int n_seqs) {
  using r1pi::PickMode;
  const bool pick_ok = e.pick == PickMode::None || e.pick == PickMode::Greedy || e.pick == PickMode::Row ||
                       ((e.pick == PickMode::TopK || e.pick == PickMode::Ruled) && e.top_k >= 1 && e.top_k <= n_vocab);
  return e.token >= 0 && e.token < n_vocab && int(e.seq) < n_seqs && e.pos >= 0 && e.pos < n_ctx && pick_ok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kHeader = 10;
  if (size < kHeader) return 0;
  const uint8_t flags = data[0];
  // A worker's context, vocabulary and slots come from its own model: positive, and here at most
  // 2^12 positions and 16 slots (the extra entries are allocated) and 2^18 tokens.
  uint32_t raw_ctx, raw_vocab;
  std::memcpy(&raw_ctx, data + 1, 4);
  std::memcpy(&raw_vocab, data + 5, 4);
  const int n_ctx = int(1 + raw_ctx % (1u << 12)), n_seqs = 1 + data[9] % 16;
  const int64_t n_vocab = int64_t(1 + raw_vocab % (1u << 18));
  r1pi::ControlMessage m;
  std::memset(static_cast<void*>(&m), 0, sizeof m);
  std::memcpy(&m, data + kHeader, std::min(size - kHeader, sizeof m));
  if (flags & 1u) m.seal();

  const std::string problem = m.problem(n_ctx, n_vocab, n_seqs);
  if (!problem.empty()) return 0;

  // What the worker does with an accepted message (rank_roles.cpp, run_worker), checked.
  if (m.magic != r1pi::ControlMessage::kMagic || m.version != r1pi::ControlMessage::kVersion) finding("has a bad header");
  switch (m.op) {
    case r1pi::ControlOp::Stop:
      if (m.status > 1) finding("stops with a bad status");
      return 0;
    case r1pi::ControlOp::Truncate:
      if (m.seq < 0 || m.seq >= n_seqs || m.n < 0 || m.n > n_ctx) finding("truncates outside the slots");
      return 0;
    case r1pi::ControlOp::Copy:
      if (m.seq < 0 || m.seq >= n_seqs || m.src < 0 || m.src >= n_seqs) finding("copies outside the slots");
      return 0;
    case r1pi::ControlOp::Forward: break;
    default: finding("has an unknown operation");
  }
  if (m.n_entries < 1 || int64_t(m.n_entries) > int64_t(n_ctx) * n_seqs) finding("has a batch no slots can hold");
  const int inline_entries = std::min(m.n_entries, r1pi::ControlMessage::kInlineEntries);
  for (int i = 0; i < inline_entries; ++i)
    if (!entry_ok(m.entries[i], n_ctx, n_vocab, n_seqs)) finding("has an entry the forward cannot run");
  // The worker sizes the second broadcast from n_extra_entries(): exactly the entries past the
  // inline ones.
  const int extra = m.n_extra_entries();
  if (extra < 0 || int64_t(extra) + inline_entries != m.n_entries) finding("announces a wrong number of extra entries");
  // Those entries: the input's bytes after the message (zeros past its end), then checked.
  std::vector<r1pi::BatchEntry> entries(static_cast<size_t>(extra));
  const size_t after = kHeader + sizeof m;
  if (extra > 0 && size > after)
    std::memcpy(static_cast<void*>(entries.data()), data + after,
                std::min(size - after, entries.size() * sizeof(r1pi::BatchEntry)));
  const bool ok = r1pi::entries_problem(entries.data(), entries.size(), n_ctx, n_vocab, n_seqs).empty();
  bool all_valid = true;
  for (const r1pi::BatchEntry& e : entries) all_valid = all_valid && entry_ok(e, n_ctx, n_vocab, n_seqs);
  if (ok != all_valid) std::abort();
  return 0;
}
