#include "runtime/mpi/rank_roles.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "common/error.h"
#include "runtime/mpi/rank_watchdog.h"

namespace r1pi {

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// ---- control messages ----

// Both broadcasts of a control message, through the watchdog's non-spinning wait.
void broadcast_message(ControlMessage& m, bool idle = false) {
  complete("rank 0's next control message", [&](MPI_Request* r) {
    return MPI_Ibcast(&m, int(sizeof m), MPI_BYTE, 0, MPI_COMM_WORLD, r);
  }, idle);
}
void broadcast_extra_tokens(std::vector<int32_t>& extra_tokens) {
  complete("the prefill tokens from rank 0", [&](MPI_Request* r) {
    return MPI_Ibcast(extra_tokens.data(), int(extra_tokens.size()), MPI_INT32_T, 0, MPI_COMM_WORLD, r);
  });
}

// Rank 0: the message, then the tokens past the inline ones.
void send_control(ControlMessage& m, std::vector<int32_t>& extra_tokens) {
  broadcast_message(m);
  if (m.n_extra_tokens() > 0) broadcast_extra_tokens(extra_tokens);
}

// The other ranks: the message is validated before the second broadcast is sized from it (an
// unchecked n_tokens could ask for gigabytes, or a length rank 0 never sends), and the tokens that
// follow before anything runs on them. A bad message ends the job.
void receive_control(ControlMessage& m, std::vector<int32_t>& extra_tokens, int n_ctx, int64_t n_vocab,
                     const MpiWorld& world, bool idle) {
  broadcast_message(m, idle);
  std::string problem = m.problem(n_ctx, n_vocab);
  if (problem.empty() && m.n_extra_tokens() > 0) {
    extra_tokens.resize(size_t(m.n_extra_tokens()));
    broadcast_extra_tokens(extra_tokens);
    problem = extra_tokens_problem(extra_tokens.data(), extra_tokens.size(), n_vocab);
  }
  if (!problem.empty()) {
    std::fprintf(stderr, "error: rank %d: invalid control message from rank 0: %s\n", world.rank(),
                 problem.c_str());
    world.abort(1);
  }
}

// ---- choosing the next token(s) from the ranks' vocabulary rows ----
// `logits` holds `rows` rows of this rank's vocabulary slice; every row gets a pick, and all rows
// travel in one reduction (speculative decoding verifies a whole draft at once).

// Greedy: the global argmax of each row by MPI_MAXLOC (largest value, ties to the lowest index:
// exactly the single-rank argmax, and associative, so any reduction tree gives the same answer).
std::vector<int32_t> pick_greedy(const std::vector<float>& logits, int rows, const Shard& shard) {
  struct ValueIndex {
    float value;
    int index;
  };
  const size_t n_rows = size_t(rows), V = logits.size() / n_rows;
  std::vector<ValueIndex> local(n_rows, ValueIndex{-INFINITY, INT_MAX}), global(n_rows);
  for (size_t r = 0; r < n_rows; ++r)
    for (size_t i = 0; i < V; ++i)
      if (logits[r * V + i] > local[r].value || local[r].index == INT_MAX)
        local[r] = {logits[r * V + i], int(shard.vocab.begin + i)};
  complete("the ranks' greedy candidates", [&](MPI_Request* req) {
    return MPI_Ireduce(local.data(), global.data(), rows, MPI_FLOAT_INT, MPI_MAXLOC, 0, MPI_COMM_WORLD, req);
  });
  std::vector<int32_t> picks(n_rows);
  for (size_t r = 0; r < n_rows; ++r) picks[r] = global[r].index;
  return picks;
}

// Sampling: each rank's top_k candidates of every row go to rank 0, which keeps each row's global
// top_k in candidate order: the same list one rank holding every row would build, so the draw
// (a function of the position) is unchanged. first_position: the position row 0's pick takes.
std::vector<int32_t> pick_top_k(const std::vector<float>& logits, int rows, const Shard& shard,
                                int top_k, int n_ranks, const Sampler* sampler, int first_position) {
  // top_k is at most the vocabulary (RootTokenSource caps it) and rows at most a draft: only a
  // vocabulary of 2^28 tokens could make the gather's byte count overflow its int.
  const int64_t per_rank = int64_t(sizeof(Candidate)) * top_k * rows;
  if (per_rank > INT_MAX)
    throw Error("top-k " + std::to_string(top_k) + " x " + std::to_string(rows) +
                " rows: too many candidates for one MPI message");
  const size_t n_rows = size_t(rows), V = logits.size() / n_rows, K = size_t(top_k);
  std::vector<Candidate> mine;
  mine.reserve(K * n_rows);
  for (size_t r = 0; r < n_rows; ++r) {
    std::vector<Candidate> row = top_candidates(logits.data() + r * V, int64_t(V), top_k,
                                                int32_t(shard.vocab.begin));
    row.resize(K, Candidate{-INFINITY, INT32_MAX});  // pad ranks with fewer rows
    mine.insert(mine.end(), row.begin(), row.end());
  }
  std::vector<Candidate> all(sampler ? mine.size() * size_t(n_ranks) : 0);
  complete("the ranks' top-k candidates", [&](MPI_Request* req) {
    return MPI_Igather(mine.data(), int(per_rank), MPI_BYTE, all.data(), int(per_rank), MPI_BYTE, 0,
                       MPI_COMM_WORLD, req);
  });
  if (!sampler) return {};
  std::vector<int32_t> picks(n_rows);
  for (size_t r = 0; r < n_rows; ++r) {
    std::vector<Candidate> row;
    for (size_t rank = 0; rank < size_t(n_ranks); ++rank) {
      const Candidate* from = all.data() + (rank * n_rows + r) * K;
      for (size_t i = 0; i < K; ++i)
        if (from[i].id != INT32_MAX) row.push_back(from[i]);
    }
    std::sort(row.begin(), row.end(), candidate_before);
    row.resize(std::min(row.size(), K));
    picks[r] = sampler->sample_from(row, first_position + int(r));
  }
  return picks;
}

// The picks the message asks for (empty for PickMode::None, and on the ranks other than 0 for
// sampling, which only rank 0 draws).
std::vector<int32_t> pick(const ControlMessage& m, const std::vector<float>& logits, const Shard& shard,
                          int n_ranks, const Sampler* sampler) {
  const int first_position = m.pos + m.n_tokens - m.pick_rows + 1;
  switch (m.pick) {
    case PickMode::Greedy: return pick_greedy(logits, m.pick_rows, shard);
    case PickMode::TopK:
      return pick_top_k(logits, m.pick_rows, shard, m.top_k, n_ranks, sampler, first_position);
    case PickMode::None: break;
  }
  return {};
}

LogitsFor logits_for(const ControlMessage& m) {
  if (m.pick == PickMode::None) return LogitsFor::None;
  return m.pick_rows > 1 ? LogitsFor::All : LogitsFor::Last;
}

uint64_t fnv1a64(uint64_t h, const void* data, size_t n) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

}  // namespace

// ---- RankMonitor ----

RankMonitor::RankMonitor(LlamaForward& model, Q8_0Sync& sync, const MpiWorld& world,
                         const RankOptions& options)
    : sync_(sync), world_(world), options_(options) {
  if (options_.check_ranks)
    model.set_layer_observer([this](uint32_t layer, const float* x, int64_t n) {
      digest_ = fnv1a64(digest_, &layer, sizeof layer);
      digest_ = fnv1a64(digest_, x, size_t(n) * sizeof(float));
    });
}

void RankMonitor::begin() {
  start_ = now_seconds();
  before_ = sync_.stats();
  digest_ = 1469598103934665603ull;
}

void RankMonitor::end(int B, double extra_sync_seconds) {
  const double total = now_seconds() - start_;
  const SyncStats& s = sync_.stats();
  const double sync = s.seconds - before_.seconds + extra_sync_seconds;
  last_ = {total - sync, sync, s.sent - before_.sent, s.received - before_.received};
  if (options_.timings_all || (options_.timings && world_.is_root()))
    std::fprintf(stderr, "%s%s%d tokens: Pred %.0f ms Sync %.0f ms | Sent %.0f kB Recv %.0f kB\n",
                 options_.timings_all ? "[rank " : "",
                 options_.timings_all ? (std::to_string(world_.rank()) + "] ").c_str() : "", B,
                 (total - sync) * 1e3, sync * 1e3, (s.sent - before_.sent) / 1e3,
                 (s.received - before_.received) / 1e3);
  if (!options_.check_ranks) return;
  std::vector<uint64_t> digests(size_t(world_.size()));
  complete("the ranks' hidden-state digests", [&](MPI_Request* r) {
    return MPI_Iallgather(&digest_, 1, MPI_UINT64_T, digests.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD, r);
  });
  for (int r = 1; r < world_.size(); ++r)
    if (digests[size_t(r)] != digests[0]) {
      if (world_.is_root())
        std::fprintf(stderr, "error: hidden states differ between rank 0 and rank %d (forward %d)\n", r,
                     checked_ + 1);
      world_.abort(1);
    }
  ++checked_;
}

// ---- rank 0 ----

RootTokenSource::RootTokenSource(LlamaForward& model, Q8_0Sync& sync, const MpiWorld& world,
                                 const RankOptions& options)
    : model_(model), world_(world), monitor_(model, sync, world, options) {}

std::vector<int32_t> RootTokenSource::run(const int32_t* tokens, int B, int pos, const Sampler* sampler,
                                          bool every_row) {
  monitor_.begin();
  ControlMessage m;
  m.op = ControlOp::Forward;
  m.pos = pos;
  m.n_tokens = B;
  m.pick = !sampler ? PickMode::None : sampler->greedy() ? PickMode::Greedy : PickMode::TopK;
  m.pick_rows = every_row ? B : 1;
  // top_k <= 0 means every row: each rank then sends all of its rows. More than every row is every
  // row too: the cap keeps --top-k 10000000 from costing every rank memory for padding (and the
  // gather's int count from overflowing).
  const int32_t n_vocab = int32_t(model_.config().n_vocab), top_k = sampler ? sampler->params().top_k : 0;
  m.top_k = sampler && !sampler->greedy() ? (top_k > 0 ? std::min(top_k, n_vocab) : n_vocab) : 0;
  std::copy(tokens, tokens + std::min(B, ControlMessage::kInlineTokens), m.tokens);
  m.seal();
  std::vector<int32_t> extra(tokens + std::min(B, ControlMessage::kInlineTokens), tokens + B);
  const double t0 = now_seconds();
  send_control(m, extra);
  const double bcast = now_seconds() - t0;

  const std::vector<float>& logits = model_.forward(tokens, B, pos, logits_for(m));
  const double t1 = now_seconds();
  std::vector<int32_t> picks = pick(m, logits, model_.shard(), world_.size(), sampler);
  monitor_.end(B, bcast + (now_seconds() - t1));
  return picks;
}

int32_t RootTokenSource::forward(const int32_t* tokens, int B, int pos, Sampler* sampler) {
  const std::vector<int32_t> picks = run(tokens, B, pos, sampler, false);
  return picks.empty() ? -1 : picks[0];
}

std::vector<int32_t> RootTokenSource::forward_each(const int32_t* tokens, int B, int pos,
                                                   const Sampler& sampler) {
  return run(tokens, B, pos, &sampler, true);
}

void RootTokenSource::stop(uint16_t status) {
  ControlMessage m;
  m.op = ControlOp::Stop;
  m.status = status;
  m.seal();
  std::vector<int32_t> none;
  send_control(m, none);
}

// ---- the other ranks ----

int run_worker(LlamaForward& model, Q8_0Sync& sync, const MpiWorld& world, const RankOptions& options) {
  RankMonitor monitor(model, sync, world, options);
  std::vector<int32_t> extra, tokens;
  for (;;) {
    ControlMessage m;
    receive_control(m, extra, model.n_ctx(), int64_t(model.config().n_vocab), world, options.session);
    if (m.op == ControlOp::Stop) return m.status;
    monitor.begin();
    tokens.assign(m.tokens, m.tokens + std::min(m.n_tokens, ControlMessage::kInlineTokens));
    tokens.insert(tokens.end(), extra.begin(), extra.begin() + (m.n_tokens - int(tokens.size())));
    const std::vector<float>& logits = model.forward(tokens.data(), m.n_tokens, m.pos, logits_for(m));
    const double t1 = now_seconds();
    pick(m, logits, model.shard(), world.size(), nullptr);
    monitor.end(m.n_tokens, now_seconds() - t1);
  }
}

}  // namespace r1pi
