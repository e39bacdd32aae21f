// Several generations sharing forward passes, as a server with slots runs them: the driver of the
// batched-sequences tests (tests/test_batched_sequences.cpp, tests/mpi/mpi_batched_sequences.cpp).
// Header-only: the MPI test programs link no test library.
#pragma once
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/token_source.h"

namespace r1pi::test {

struct SequenceRun {
  std::vector<int32_t> prompt;
  SamplerParams sampler;
  int n_predict = 8;   // tokens generated (end-of-generation ignored)
  int chunk = 64;      // prompt tokens per forward
  int start_step = 0;  // the step at which it joins (when a slot is free)
};

// Runs every sequence through source: sequence i joins at its start step (or the first step after
// it with a free slot; a finished sequence's slot is freed and taken again), feeds its prompt in
// chunks, then one token per step until n_predict tokens. Each step is one forward holding every
// running sequence's piece, in an order that rotates from step to step. Returns each sequence's
// generated ids.
inline std::vector<std::vector<int32_t>> run_batched(TokenSource& source, const std::vector<SequenceRun>& runs) {
  struct State {
    int slot = -1, fed = 0;  // prompt tokens fed so far
    std::vector<int32_t> out;
    bool done = false;
  };
  std::vector<State> st(runs.size());
  std::vector<int> slot_of(size_t(source.n_seqs()), -1);  // the sequence in each slot
  std::vector<Sampler> samplers;
  for (const SequenceRun& r : runs) samplers.emplace_back(r.sampler);
  for (int step = 0;; ++step) {
    // Joins, in order, while slots are free.
    for (size_t i = 0; i < runs.size(); ++i) {
      if (st[i].slot >= 0 || st[i].done || runs[i].start_step > step) continue;
      const auto free = std::find(slot_of.begin(), slot_of.end(), -1);
      if (free == slot_of.end()) break;
      st[i].slot = int(free - slot_of.begin());
      slot_of[size_t(st[i].slot)] = int(i);
      source.truncate(st[i].slot, 0);
    }
    std::vector<size_t> running;
    for (size_t i = 0; i < runs.size(); ++i)
      if (st[i].slot >= 0) running.push_back(i);
    if (running.empty()) {
      if (std::all_of(st.begin(), st.end(), [](const State& s) { return s.done; })) break;
      continue;  // none has joined yet
    }
    std::rotate(running.begin(), running.begin() + step % running.size(), running.end());
    Batch batch;
    std::vector<const Sampler*> pickers;
    std::vector<size_t> picked_for;
    for (size_t i : running) {
      const SequenceRun& r = runs[i];
      State& s = st[i];
      const int n_prompt = int(r.prompt.size());
      if (s.fed < n_prompt) {
        const int n = std::min(r.chunk, n_prompt - s.fed);
        batch.add_run(r.prompt.data() + s.fed, n, s.slot, s.fed, s.fed + n == n_prompt ? LogitsFor::Last : LogitsFor::None);
        s.fed += n;
        if (s.fed < n_prompt) continue;
      } else {
        batch.add(s.out.back(), s.slot, n_prompt + int(s.out.size()) - 1, true);
      }
      pickers.push_back(&samplers[i]);
      picked_for.push_back(i);
    }
    const std::vector<int32_t> picks = source.forward(batch, pickers);
    if (picks.size() != picked_for.size()) throw std::runtime_error("run_batched: wrong number of picks");
    for (size_t k = 0; k < picks.size(); ++k) {
      State& s = st[picked_for[k]];
      s.out.push_back(picks[k]);
      if (int(s.out.size()) == runs[picked_for[k]].n_predict) {
        slot_of[size_t(s.slot)] = -1;
        s.slot = -1;
        s.done = true;
      }
    }
  }
  std::vector<std::vector<int32_t>> out;
  for (State& s : st) out.push_back(std::move(s.out));
  return out;
}

// Prompts of different lengths and settings for n sequences: greedy and seeded sampling
// alternate, the prompts are pseudo-random ids of the vocabulary (first_id and on), chunks and
// start steps differ.
inline std::vector<SequenceRun> mixed_sequences(int n, int32_t n_vocab, int32_t first_id = 3) {
  std::vector<SequenceRun> runs;
  uint64_t h = 88172645463325252ull;
  for (int i = 0; i < n; ++i) {
    SequenceRun r;
    const int len = 3 + (i * 7) % 23;
    for (int t = 0; t < len; ++t) {
      h ^= h << 13, h ^= h >> 7, h ^= h << 17;
      r.prompt.push_back(first_id + int32_t(h % uint64_t(n_vocab - first_id)));
    }
    r.sampler = i % 2 ? SamplerParams{0.8f, 20 + i, 0.9f, 1000u + uint64_t(i)} : SamplerParams{0.0f, 40, 0.95f, 0};
    r.n_predict = 4 + (i * 5) % 9;
    r.chunk = 1 + (i * 3) % 8;
    r.start_step = (i * 2) % 5;
    runs.push_back(std::move(r));
  }
  return runs;
}

}  // namespace r1pi::test
