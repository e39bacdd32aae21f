#include "server/forward_batcher.h"

#include <algorithm>

#include "common/error.h"

namespace r1pi {

void ForwardBatcher::join() {
  std::lock_guard lock(mutex_);
  ++members_;
}

void ForwardBatcher::leave() {
  std::lock_guard lock(mutex_);
  --members_;
  called_.notify_one();  // the others' calls may be all the engine waits for now
}

int ForwardBatcher::members() {
  std::lock_guard lock(mutex_);
  return members_;
}

ForwardBatcher::Stats ForwardBatcher::stats() {
  std::lock_guard lock(mutex_);
  return stats_;
}

void ForwardBatcher::wait_for(Call& call) {
  std::unique_lock lock(mutex_);
  pending_.push_back(&call);
  called_.notify_one();
  answered_.wait(lock, [&] { return call.done; });
  if (!call.error.empty()) throw Error(call.error);
}

std::vector<int32_t> ForwardBatcher::forward(const Batch& batch, const std::vector<const Sampler*>& samplers) {
  Call call{.kind = Call::Forward, .batch = &batch, .samplers = &samplers};
  wait_for(call);
  return std::move(call.picks);
}

void ForwardBatcher::truncate(int seq, int n) {
  Call call{.kind = Call::Truncate, .seq = seq, .n = n};
  wait_for(call);
}

void ForwardBatcher::copy(int src, int dst) {
  Call call{.kind = Call::Copy, .seq = dst, .src = src};
  wait_for(call);
}

bool ForwardBatcher::run(std::chrono::milliseconds wait) {
  std::vector<Call*> calls;
  {
    std::unique_lock lock(mutex_);
    // (no member left: nothing to wait for; the engine's thread has slots to free)
    called_.wait_for(lock, wait, [&] { return int(pending_.size()) >= members_; });
    if (pending_.empty()) return false;
    calls.swap(pending_);
  }
  std::vector<Call*> forwards;
  for (Call* c : calls) {
    if (c->kind == Call::Forward) {
      forwards.push_back(c);
      continue;
    }
    try {
      if (c->kind == Call::Truncate) engine_.truncate(c->seq, c->n);
      else engine_.copy(c->src, c->seq);
    } catch (const Error& e) {
      c->error = e.what();
    }
  }
  if (!forwards.empty()) run_forwards(forwards);
  std::lock_guard lock(mutex_);
  for (Call* c : calls) c->done = true;
  answered_.notify_all();
  return true;
}

// One batch of every member's entries in call order; the picks go back to each in its order.
void ForwardBatcher::run_forwards(const std::vector<Call*>& calls) {
  Batch merged;
  std::vector<const Sampler*> samplers;
  for (const Call* c : calls) {
    const Batch& b = *c->batch;
    for (int i = 0; i < b.size(); ++i)
      merged.add(b.tokens[size_t(i)], b.seqs[size_t(i)], b.positions[size_t(i)], b.logits[size_t(i)] != 0);
    samplers.insert(samplers.end(), c->samplers->begin(), c->samplers->end());
  }
  std::vector<int32_t> picks;
  std::string error;
  try {
    picks = engine_.forward(merged, samplers);
  } catch (const Error& e) {
    error = e.what();
  }
  size_t at = 0;
  for (Call* c : calls) {
    if (!error.empty()) {
      c->error = error;
      continue;
    }
    const size_t n = c->samplers->size();
    c->picks.assign(picks.begin() + int64_t(at), picks.begin() + int64_t(at + n));
    at += n;
  }
  std::lock_guard lock(mutex_);
  ++stats_.forwards;
  stats_.sequences += calls.size();
  stats_.tokens += uint64_t(merged.size());
}

std::vector<int32_t> SlotSource::forward(const Batch& batch, const std::vector<const Sampler*>& samplers) {
  if (chunk_ <= 0 || batch.size() <= chunk_ || batcher_.members() <= 1) return batcher_.forward(batch, samplers);
  std::vector<int32_t> picks;
  size_t next_sampler = 0;
  for (int begin = 0; begin < batch.size(); begin += chunk_) {
    Batch part;
    std::vector<const Sampler*> part_samplers;
    for (int i = begin; i < std::min(batch.size(), begin + chunk_); ++i) {
      part.add(batch.tokens[size_t(i)], batch.seqs[size_t(i)], batch.positions[size_t(i)], batch.logits[size_t(i)] != 0);
      if (batch.logits[size_t(i)]) part_samplers.push_back(samplers[next_sampler++]);
    }
    const std::vector<int32_t> got = batcher_.forward(part, part_samplers);
    picks.insert(picks.end(), got.begin(), got.end());
  }
  return picks;
}

}  // namespace r1pi
