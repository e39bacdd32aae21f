#include "runtime/mpi/rank_roles.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>

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
void broadcast_extra_entries(std::vector<BatchEntry>& extra) {
  complete("the batch's entries from rank 0", [&](MPI_Request* r) {
    return MPI_Ibcast(extra.data(), int(extra.size() * sizeof(BatchEntry)), MPI_BYTE, 0, MPI_COMM_WORLD, r);
  });
}

// Rank 0: the message, then the entries past the inline ones.
void send_control(ControlMessage& m, std::vector<BatchEntry>& extra) {
  broadcast_message(m);
  if (m.n_extra_entries() > 0) broadcast_extra_entries(extra);
}

// The other ranks: the message is validated before the second broadcast is sized from it (an
// unchecked n_entries could ask for gigabytes, or a length rank 0 never sends), and the entries
// that follow before anything runs on them. A bad message ends the job.
void receive_control(ControlMessage& m, std::vector<BatchEntry>& extra, const ModelForward& model,
                     const MpiWorld& world, bool idle) {
  broadcast_message(m, idle);
  const int n_ctx = model.n_ctx(), n_seqs = model.n_seqs();
  const int64_t n_vocab = model.config().n_vocab;
  std::string problem = m.problem(n_ctx, n_vocab, n_seqs);
  if (problem.empty() && m.n_extra_entries() > 0) {
    extra.resize(size_t(m.n_extra_entries()));
    broadcast_extra_entries(extra);
    problem = entries_problem(extra.data(), extra.size(), n_ctx, n_vocab, n_seqs, ControlMessage::kInlineEntries);
  }
  if (!problem.empty()) {
    std::fprintf(stderr, "error: rank %d: invalid control message from rank 0: %s\n", world.rank(),
                 problem.c_str());
    world.abort(1);
  }
}

// ---- choosing the next tokens from the ranks' vocabulary rows ----
// `logits` holds one row of this rank's vocabulary slice per entry that asks for a pick, in batch
// order. The greedy rows travel in one reduction, the sampled ones in one gather (a batch may mix
// sequences of both kinds; speculative decoding verifies a whole draft at once). A grammar's rows
// send their candidates first, and the whole row (on Llama 3, 128,256 floats: 512 KB) only when
// the grammar refuses one of them.

struct RowPick {
  PickMode mode;
  int top_k;
  int position;  // where the picked token goes: the entry's position + 1
  int seq;
  PenaltyParams penalties;
};

std::vector<RowPick> row_picks(const BatchEntry* entries, size_t n) {
  std::vector<RowPick> rows;
  for (size_t i = 0; i < n; ++i)
    if (entries[i].pick != PickMode::None)
      rows.push_back({entries[i].pick, entries[i].top_k, entries[i].pos + 1, entries[i].seq, entries[i].penalties});
  return rows;
}

// The rows with their repetition penalties applied (each rank to its own slice: penalties.h), or
// `logits` itself when no row has any. The slots hold the batch's tokens by now, so a row's
// history is its slot up to and with its entry's token, verification rows included.
const std::vector<float>& penalised(const std::vector<RowPick>& how, const std::vector<float>& logits, size_t V,
                                    const Shard& shard, const KvCache& cache, std::vector<float>& copy) {
  bool any = false;
  for (const RowPick& r : how) any = any || (r.mode != PickMode::Row && r.penalties.active());
  if (!any) return logits;
  copy = logits;
  for (size_t r = 0; r < how.size(); ++r)
    if (how[r].mode != PickMode::Row && how[r].penalties.active())
      apply_penalties(copy.data() + r * V, int64_t(V), int32_t(shard.vocab.begin), cache.tokens(how[r].seq).data(),
                      size_t(how[r].position), how[r].penalties);
  return copy;
}

// Greedy: the global argmax of each row by MPI_MAXLOC (largest value, ties to the lowest index:
// exactly the single-rank argmax, and associative, so any reduction tree gives the same answer).
std::vector<int32_t> pick_greedy(const std::vector<float>& logits, const std::vector<size_t>& rows, size_t V,
                                 const Shard& shard) {
  struct ValueIndex {
    float value;
    int index;
  };
  std::vector<ValueIndex> local(rows.size(), ValueIndex{-INFINITY, INT_MAX}), global(rows.size());
  for (size_t k = 0; k < rows.size(); ++k)
    for (size_t i = 0; i < V; ++i)
      if (logits[rows[k] * V + i] > local[k].value || local[k].index == INT_MAX)
        local[k] = {logits[rows[k] * V + i], int(shard.vocab.begin + i)};
  complete("the ranks' greedy candidates", [&](MPI_Request* req) {
    return MPI_Ireduce(local.data(), global.data(), int(rows.size()), MPI_FLOAT_INT, MPI_MAXLOC, 0, MPI_COMM_WORLD,
                       req);
  });
  std::vector<int32_t> picks(rows.size());
  for (size_t k = 0; k < rows.size(); ++k) picks[k] = global[k].index;
  return picks;
}

// Sampling: each rank's top K candidates of every row (K the largest top_k of the rows) go to
// rank 0, which keeps each row's global top_k in candidate order: the same list one rank holding
// every row would build, so the draw (a function of the position) is unchanged. Rank 0 gets every
// row's list, the other ranks none.
std::vector<std::vector<Candidate>> gather_candidates(const std::vector<float>& logits, const std::vector<size_t>& rows,
                                                      size_t V, const std::vector<RowPick>& how, const Shard& shard,
                                                      int n_ranks, bool root) {
  int top_k = 1;
  for (size_t r : rows) top_k = std::max(top_k, how[r].top_k);
  // top_k is at most the vocabulary (RootTokenSource caps it) and rows at most a batch: only a
  // vocabulary of 2^28 tokens could make the gather's byte count overflow its int.
  const int64_t per_rank = int64_t(sizeof(Candidate)) * top_k * int64_t(rows.size());
  if (per_rank > INT_MAX)
    throw Error("top-k " + std::to_string(top_k) + " x " + std::to_string(rows.size()) +
                " rows: too many candidates for one MPI message");
  const size_t K = size_t(top_k);
  std::vector<Candidate> mine;
  mine.reserve(K * rows.size());
  for (size_t r : rows) {
    std::vector<Candidate> row = top_candidates(logits.data() + r * V, int64_t(V), top_k, int32_t(shard.vocab.begin));
    row.resize(K, Candidate{-INFINITY, INT32_MAX});  // pad ranks with fewer rows
    mine.insert(mine.end(), row.begin(), row.end());
  }
  std::vector<Candidate> all(root ? mine.size() * size_t(n_ranks) : 0);
  complete("the ranks' top-k candidates", [&](MPI_Request* req) {
    return MPI_Igather(mine.data(), int(per_rank), MPI_BYTE, all.data(), int(per_rank), MPI_BYTE, 0,
                       MPI_COMM_WORLD, req);
  });
  std::vector<std::vector<Candidate>> lists(root ? rows.size() : 0);
  for (size_t k = 0; k < lists.size(); ++k) {
    std::vector<Candidate>& row = lists[k];
    for (size_t rank = 0; rank < size_t(n_ranks); ++rank) {
      const Candidate* from = all.data() + (rank * rows.size() + k) * K;
      for (size_t i = 0; i < K; ++i)
        if (from[i].id != INT32_MAX) row.push_back(from[i]);
    }
    std::sort(row.begin(), row.end(), candidate_before);
    row.resize(std::min(row.size(), size_t(how[rows[k]].top_k)));
  }
  return lists;
}

// Whole rows: each rank's part of every row goes to rank 0, which lays them side by side in
// vocabulary order (rank r holds ids shard.vocab of rank r: the ranks' slices in rank order).
std::vector<float> gather_rows(const std::vector<float>& logits, const std::vector<size_t>& rows, size_t V,
                               const Shard& shard, int n_ranks, int64_t n_vocab, bool root) {
  std::vector<float> mine;
  mine.reserve(rows.size() * V);
  for (size_t r : rows) mine.insert(mine.end(), logits.begin() + int64_t(r * V), logits.begin() + int64_t((r + 1) * V));
  if (int64_t(rows.size()) * n_vocab > INT_MAX)
    throw Error(std::to_string(rows.size()) + " rows of " + std::to_string(n_vocab) +
                " logits: too many for one MPI message (feed fewer tokens per batch)");
  // Every rank's slice: where it begins and how many ids.
  const int64_t slice[2] = {shard.vocab.begin, int64_t(V)};
  std::vector<int64_t> slices(root ? size_t(2 * n_ranks) : 0);
  complete("the ranks' vocabulary slices", [&](MPI_Request* req) {
    return MPI_Igather(slice, 2, MPI_INT64_T, slices.data(), 2, MPI_INT64_T, 0, MPI_COMM_WORLD, req);
  });
  std::vector<int> counts(root ? size_t(n_ranks) : 0), offsets(counts.size());
  for (size_t r = 0, at = 0; r < counts.size(); at += size_t(counts[r]), ++r) {
    counts[r] = int(int64_t(rows.size()) * slices[2 * r + 1]);
    offsets[r] = int(at);
  }
  std::vector<float> all(root ? rows.size() * size_t(n_vocab) : 0);
  complete("the ranks' logits rows", [&](MPI_Request* req) {
    return MPI_Igatherv(mine.data(), int(mine.size()), MPI_FLOAT, all.data(), counts.data(), offsets.data(),
                        MPI_FLOAT, 0, MPI_COMM_WORLD, req);
  });
  if (!root) return {};
  std::vector<float> whole(all.size());
  for (size_t r = 0; r < counts.size(); ++r) {
    const size_t begin = size_t(slices[2 * r]), n = size_t(slices[2 * r + 1]);
    for (size_t k = 0; k < rows.size(); ++k)
      std::copy_n(all.data() + size_t(offsets[r]) + k * n, n, whole.data() + k * size_t(n_vocab) + begin);
  }
  return whole;
}

// The picks of every row, greedy and sampled (on ranks other than 0, which draw nothing: samplers
// is null there and the result empty). Whole rows are gathered on rank 0: into *rows_out where the
// caller asks for logits (no picks then), else picked there from the whole row (a logit bias, a
// grammar's mask, log-probabilities: Sampler::needs_whole_row), exactly as one rank picks.
std::vector<int32_t> pick(const std::vector<RowPick>& how, const std::vector<float>& model_logits,
                          const ModelForward& model, int n_ranks, const std::vector<const Sampler*>* samplers,
                          bool root, std::vector<float>* rows_out = nullptr) {
  if (how.empty()) return {};
  const Shard& shard = model.shard();
  const int64_t n_vocab = model.config().n_vocab;
  const size_t V = model_logits.size() / how.size();
  std::vector<float> copy;
  const std::vector<float>& logits = penalised(how, model_logits, V, shard, model.cache(), copy);
  std::vector<size_t> greedy, sampled, whole, ruled;
  for (size_t r = 0; r < how.size(); ++r)
    (how[r].mode == PickMode::Greedy ? greedy
     : how[r].mode == PickMode::Row  ? whole
     : how[r].mode == PickMode::Ruled ? ruled
                                      : sampled)
        .push_back(r);
  std::vector<int32_t> picks(how.size());
  // A grammar's rows: the candidates first; rank 0 picks among them where the grammar allows them
  // all, and names the other rows (one broadcast), whose whole rows join Row's gather below.
  if (!ruled.empty()) {
    const std::vector<std::vector<Candidate>> lists = gather_candidates(logits, ruled, V, how, shard, n_ranks, root);
    std::vector<uint8_t> needs_row(ruled.size(), 0);
    if (samplers)
      for (size_t k = 0; k < ruled.size(); ++k) {
        const std::optional<int32_t> id = (*samplers)[ruled[k]]->pick_if_allowed(lists[k], how[ruled[k]].position);
        if (id) picks[ruled[k]] = *id;
        else needs_row[k] = 1;
      }
    complete("rank 0's rows that its grammars need whole", [&](MPI_Request* req) {
      return MPI_Ibcast(needs_row.data(), int(needs_row.size()), MPI_BYTE, 0, MPI_COMM_WORLD, req);
    });
    for (size_t k = 0; k < ruled.size(); ++k)
      if (needs_row[k]) whole.push_back(ruled[k]);
    std::sort(whole.begin(), whole.end());
  }
  if (!whole.empty()) {
    // The rows as the model gave them: pick_from_row applies a row's penalties itself.
    std::vector<float> rows = gather_rows(model_logits, whole, V, shard, n_ranks, n_vocab, root);
    if (rows_out) {
      if (whole.size() != how.size()) throw Error("internal error: a batch that asks for picks and rows");
      *rows_out = std::move(rows);
      return {};
    }
    if (samplers)
      for (size_t k = 0; k < whole.size(); ++k) {
        const RowPick& row = how[whole[k]];
        picks[whole[k]] = (*samplers)[whole[k]]->pick_from_row(rows.data() + k * size_t(n_vocab), n_vocab,
                                                               row.position, model.cache().tokens(row.seq).data(),
                                                               size_t(row.position));
      }
  }
  if (!greedy.empty()) {
    const std::vector<int32_t> g = pick_greedy(logits, greedy, V, shard);
    for (size_t k = 0; k < greedy.size(); ++k) picks[greedy[k]] = g[k];
  }
  if (!sampled.empty()) {
    const std::vector<std::vector<Candidate>> lists = gather_candidates(logits, sampled, V, how, shard, n_ranks, root);
    if (samplers)
      for (size_t k = 0; k < sampled.size(); ++k)
        picks[sampled[k]] = (*samplers)[sampled[k]]->sample_from(lists[k], how[sampled[k]].position);
  }
  return samplers ? picks : std::vector<int32_t>{};
}

uint64_t fnv1a64(uint64_t h, const void* data, size_t n) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

}  // namespace

// ---- RankMonitor ----

RankMonitor::RankMonitor(ModelForward& model, Q8_0Sync& sync, const MpiWorld& world,
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

RootTokenSource::RootTokenSource(ModelForward& model, Q8_0Sync& sync, const MpiWorld& world,
                                 const RankOptions& options)
    : model_(model), world_(world), monitor_(model, sync, world, options) {}

std::vector<int32_t> RootTokenSource::forward(const Batch& batch, const std::vector<const Sampler*>& samplers) {
  if (samplers.size() != size_t(batch.n_logits()))
    throw Error("internal error: " + std::to_string(samplers.size()) + " samplers for " +
                std::to_string(batch.n_logits()) + " picks");
  std::vector<BatchEntry> entries(size_t(batch.size()));
  const int32_t n_vocab = int32_t(model_.config().n_vocab);
  for (size_t i = 0, row = 0; i < entries.size(); ++i) {
    BatchEntry& e = entries[i];
    e = {batch.tokens[i], batch.positions[i], uint16_t(batch.seqs[i]), PickMode::None, 0, 0};
    if (!batch.logits[i]) continue;
    const Sampler& s = *samplers[row++];
    e.pick = s.rule_only() && s.rule_candidates(n_vocab) ? PickMode::Ruled
             : s.needs_whole_row()                        ? PickMode::Row
             : s.greedy()                                 ? PickMode::Greedy
                                                          : PickMode::TopK;
    // top_k <= 0 means every row: each rank then sends all of its rows. More than every row is
    // every row too: the cap keeps --top-k 10000000 from costing every rank memory for padding
    // (and the gather's int count from overflowing).
    const int top_k = s.params().top_k;
    if (e.pick == PickMode::TopK) e.top_k = top_k > 0 ? std::min(top_k, n_vocab) : n_vocab;
    if (e.pick == PickMode::Ruled) e.top_k = s.rule_candidates(n_vocab);
    if (s.params().penalties.active()) {
      e.penalties = s.params().penalties;
      e.penalties.last_n = std::min(e.penalties.last_n, model_.n_ctx());  // no history is longer
    }
  }
  return run(batch, entries, &samplers, nullptr);
}

std::vector<float> RootTokenSource::logits(const Batch& batch) {
  std::vector<BatchEntry> entries(size_t(batch.size()));
  for (size_t i = 0; i < entries.size(); ++i)
    entries[i] = {batch.tokens[i], batch.positions[i], uint16_t(batch.seqs[i]),
                  batch.logits[i] ? PickMode::Row : PickMode::None, 0, 0};
  std::vector<float> rows;
  run(batch, entries, nullptr, &rows);
  return rows;
}

std::vector<int32_t> RootTokenSource::run(const Batch& batch, const std::vector<BatchEntry>& entries,
                                          const std::vector<const Sampler*>* samplers, std::vector<float>* rows) {
  // Refused here, before any rank runs it (the others hold the same slots and would refuse it too).
  model_.check(batch);
  monitor_.begin();
  const int B = batch.size();
  ControlMessage m;
  m.op = ControlOp::Forward;
  m.n_entries = B;
  std::copy(entries.begin(), entries.begin() + std::min(B, ControlMessage::kInlineEntries), m.entries);
  m.seal();
  std::vector<BatchEntry> extra(entries.begin() + std::min(B, ControlMessage::kInlineEntries), entries.end());
  const double t0 = now_seconds();
  send_control(m, extra);
  const double bcast = now_seconds() - t0;

  const std::vector<float>& logits = model_.forward(batch);
  const double t1 = now_seconds();
  std::vector<int32_t> picks = pick(row_picks(entries.data(), entries.size()), logits, model_, world_.size(),
                                    samplers, true, rows);
  monitor_.end(B, bcast + (now_seconds() - t1));
  return picks;
}

void RootTokenSource::truncate(int seq, int n) {
  if (seq < 0 || seq >= model_.n_seqs() || n < 0) throw Error("truncate: no slot " + std::to_string(seq));
  ControlMessage m;
  m.op = ControlOp::Truncate;
  m.seq = seq;
  m.n = std::min(n, model_.n_ctx());
  m.seal();
  std::vector<BatchEntry> none;
  send_control(m, none);
  model_.cache().truncate(seq, m.n);
}

void RootTokenSource::copy(int src, int dst) {
  if (src < 0 || dst < 0 || src >= model_.n_seqs() || dst >= model_.n_seqs())
    throw Error("copy: no slot " + std::to_string(std::max(src, dst)));
  ControlMessage m;
  m.op = ControlOp::Copy;
  m.src = src;
  m.seq = dst;
  m.seal();
  std::vector<BatchEntry> none;
  send_control(m, none);
  model_.cache().copy(src, dst);
}

void RootTokenSource::stop(uint16_t status) {
  ControlMessage m;
  m.op = ControlOp::Stop;
  m.status = status;
  m.seal();
  std::vector<BatchEntry> none;
  send_control(m, none);
}

// ---- the other ranks ----

int run_worker(ModelForward& model, Q8_0Sync& sync, const MpiWorld& world, const RankOptions& options) {
  RankMonitor monitor(model, sync, world, options);
  std::vector<BatchEntry> extra;
  Batch batch;
  for (;;) {
    ControlMessage m;
    receive_control(m, extra, model, world, options.session);
    switch (m.op) {
      case ControlOp::Stop: return m.status;
      case ControlOp::Truncate: model.cache().truncate(m.seq, m.n); continue;
      case ControlOp::Copy: model.cache().copy(m.src, m.seq); continue;
      case ControlOp::Forward: break;
    }
    monitor.begin();
    std::vector<BatchEntry> entries(m.entries, m.entries + std::min(m.n_entries, ControlMessage::kInlineEntries));
    entries.insert(entries.end(), extra.begin(), extra.begin() + (m.n_entries - int(entries.size())));
    batch.clear();
    for (const BatchEntry& e : entries) batch.add(e.token, e.seq, e.pos, e.pick != PickMode::None);
    const std::vector<float>& logits = model.forward(batch);
    const double t1 = now_seconds();
    pick(row_picks(entries.data(), entries.size()), logits, model, world.size(), nullptr, false);
    monitor.end(m.n_entries, now_seconds() - t1);
  }
}

}  // namespace r1pi
