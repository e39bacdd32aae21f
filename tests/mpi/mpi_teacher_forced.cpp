// Teacher-forced agreement of an N-rank job with one rank (run under mpirun, N >= 2):
//
//   mpirun -np N mpi_teacher_forced MODEL [--tokens 128] [--chunk 32] [--threads 1]
//                                         [--sync allgather|allreduce|direct] [--min-agreement 0.99]
//                                         [--shard-weights 2,1,1]
//                                         [--max-diff-spread 0.1]
//                                         [--ids-from greedy.runc.txt]
//
// Every rank loads its shard (Shard::for_rank, as r1pi's jobs) and runs ModelForward over one
// fixed token sequence with LogitsFor::All, combining partial sums with r1pi's Q8_0Sync. Rank 0
// gathers every rank's vocabulary rows (MPI_Gatherv) and compares them with the logits of the whole
// model on one rank (NoSync), which it computes itself.
//
// Why the logits differ at all: with one rank each residual update (after wo and after w2) is a
// float sum; with N ranks each rank's partial sum is rounded to Q8_0 (34-byte blocks: 32 int8 and
// an fp16 scale) before the partials are added. Everything else (matmul tiling, rmsnorm, attention,
// the vocabulary rows) is computed on the same bytes in the same order. So the only injected error
// is, per sync and element, e = sum over ranks r of (deq(q(p_r)) - p_r), and per rank and block
//     |deq(q(p)) - p| <= h = d/2 + 127 |d - fp16(d)| (+ float rounding),  d = amax(block) / 127,
// the Q8_0 half-step plus the rounding of the scale to fp16. Check 1 verifies this on every
// element of every sync against the exact (double) sum of the ranks' float partials: it pins the
// difference on the Q8_0 rounding and nothing else (no lost or doubled partial, no rank-order or
// algorithm dependence).
//
// How big may the logit difference then be? Measured on the test models, it is not proportional
// to the injected error: every matmul quantises its input activations to Q8_0, so a perturbation
// of any size moves some activations across a rounding boundary and adds up to half a Q8_0 step
// of the activation there, which the following layers carry to the logits. That floor dominates:
// a probe perturbing the residual stream by 1/1000 of the budget moves the logits about as much as
// the real rounding does (tiny, 2 ranks: max 0.11 against 0.12). So the difference N ranks make is
// one sample of "the logit change a within-budget residual perturbation causes", and the bound
// measures that with the same network: three more N-rank runs add, after every sync, +-H per
// element (H: the budget above, signs pseudo-random, identical on every rank) with two sign
// sequences, and +-H/1000. The maximum over ~60k logits of such a change varies from sample to
// sample (measured: the real one is 0.5-1.1 times a probe's), so the bound is twice the largest
// probe. A real fault moves the logits far more: dropping one rank's partial in a single sync
// (tiny, 2 ranks, layer 1's attention, first chunk only) gave max 1.77, 5x the bound, 59% of the
// spread, and 93% top-1 agreement. The logits' spread in the one-rank run (their
// standard deviation) is printed for scale: the difference must stay below 10% of it (3-4% here;
// --max-diff-spread: a mixture of experts' router flips an expert where two are near a tie, and
// that position's logits jump further, as they do in the probes).
//
// Top-1 (argmax, ties to the lower id) must agree on at least --min-agreement of the positions. A
// position can flip only where the one-rank margin between its best two logits is below twice
// the largest logit difference; the largest such margin is printed.
//
// The sequence is pseudo-random ids by default. A trained model is unsure what follows random ids,
// so many of its margins are small there (stories260K, 4 ranks: 9 of 512 flipped, all with margins
// below 0.04); --ids-from gives it the text it writes instead: the prompts and greedy ids of a
// models/*/greedy.*.txt file, one after the other.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "layers/model_forward.h"
#include "model/model_loader.h"
#include "ggml/fp16.h"
#include "neon/kernels.h"
#include "ggml/quant_blocks.h"
#include "runtime/mpi/distributed_run.h"
#include "runtime/mpi/mpi_world.h"
#include "runtime/mpi/q8_0_sync.h"
#include "runtime/mpi/rank_agreement.h"
#include "runtime/run_options.h"
#include "mpi_test_main.h"
#include "common/thread_pool.h"

namespace r1pi {
namespace {

struct Args {
  std::string model;
  int tokens = 128, chunk = 32, threads = 1;
  std::string sync = "allgather";
  double min_agreement = 0.99;
  double max_diff_spread = 0.1;
  std::string ids_from;
  std::string shard_weights;  // the plan's weights (r1pi's --shard-weights); empty: equal shares
};

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(s + " needs a value");
      return argv[++i];
    };
    if (s == "--tokens") a.tokens = std::stoi(value());
    else if (s == "--chunk") a.chunk = std::stoi(value());
    else if (s == "--threads") a.threads = std::stoi(value());
    else if (s == "--sync") a.sync = value();
    else if (s == "--min-agreement") a.min_agreement = std::stod(value());
    else if (s == "--max-diff-spread") a.max_diff_spread = std::stod(value());
    else if (s == "--ids-from") a.ids_from = value();
    else if (s == "--shard-weights") a.shard_weights = value();
    else if (!s.empty() && s[0] != '-' && a.model.empty()) a.model = s;
    else throw Error("unknown argument '" + s + "'");
  }
  if (a.model.empty()) throw Error("usage: mpi_teacher_forced MODEL [--tokens N] [--chunk C] ...");
  if (a.tokens < 2 || a.chunk < 1) throw Error("--tokens must be >= 2 and --chunk >= 1");
  return a;
}

// The first n ids of a greedy.*.txt file's JSON lines: each prompt's tokens, then its greedy ids.
std::vector<int32_t> greedy_file_ids(const std::string& path, int n, uint32_t n_vocab) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open");
  std::vector<int32_t> ids;
  for (std::string line; std::getline(in, line) && int(ids.size()) < n;) {
    if (line.empty() || line[0] != '{') continue;
    const nlohmann::json j = nlohmann::json::parse(line);
    for (const char* key : {"prompt_tokens", "gen_ids"})
      for (int32_t id : j.at(key).get<std::vector<int32_t>>()) ids.push_back(id);
  }
  if (int(ids.size()) < n) throw Error(path + ": fewer than " + std::to_string(n) + " ids");
  ids.resize(size_t(n));
  for (int32_t id : ids)
    if (id < 0 || uint32_t(id) >= n_vocab)
      throw Error(path + ": id " + std::to_string(id) + " is not in the model's vocabulary");
  return ids;
}

// The fixed token sequence: a 64-bit LCG over the whole vocabulary.
std::vector<int32_t> token_sequence(int n, uint32_t n_vocab) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  uint64_t s = 0x9E3779B97F4A7C15ull;
  for (int32_t& id : t) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    id = int32_t((s >> 33) % n_vocab);
  }
  return t;
}

uint64_t mix(uint64_t x) {  // splitmix64's finaliser: the probes' signs
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Wraps Q8_0Sync. Checks that every combined element lies within the Q8_0 budget of the exact sum;
// a probe (probe_scale > 0) then adds +-probe_scale x budget to every element, with signs drawn
// from probe_seed (identical on every rank, so the ranks stay bit-identical).
class CheckedSync final : public ShardSync {
 public:
  CheckedSync(Q8_0Sync& inner, int n_ranks, double probe_scale = 0, uint64_t probe_seed = 0)
      : inner_(inner), n_ranks_(n_ranks), probe_scale_(probe_scale), counter_(probe_seed << 40) {}

  void reduce_sum(float* x, int B, int64_t n) override {
    const int64_t n_blocks = n / QK8_0, total = int64_t(B) * n;
    // This rank's per-block error bound h, exactly as the quantiser it shares with Q8_0Sync rounds.
    std::vector<block_q8_0> q(static_cast<size_t>(n_blocks));
    std::vector<float> h(size_t(B * n_blocks));
    for (int b = 0; b < B; ++b) {
      kernels().quantize_row_q8_0(x + b * n, q.data(), n);
      for (int64_t j = 0; j < n_blocks; ++j) {
        float amax = 0;
        for (int i = 0; i < QK8_0; ++i) amax = std::max(amax, std::fabs(x[b * n + j * QK8_0 + i]));
        const double d = double(amax) / 127, d16 = fp16_to_fp32(q[size_t(j)].d);
        h[size_t(b * n_blocks + j)] = float(d / 2 + 127 * std::fabs(d - d16) + std::ldexp(amax, -20));
      }
    }
    // The exact sum of the float partials and the sum of their magnitudes (double: exact enough).
    std::vector<double> mine(size_t(2 * total)), sums(size_t(2 * total));
    for (int64_t i = 0; i < total; ++i) {
      mine[size_t(i)] = x[i];
      mine[size_t(total + i)] = std::fabs(x[i]);
    }
    MPI_Allreduce(mine.data(), sums.data(), int(2 * total), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    // Every rank's h, added in rank order (the same float budget on every rank).
    std::vector<float> all_h(h.size() * size_t(n_ranks_));
    MPI_Allgather(h.data(), int(h.size()), MPI_FLOAT, all_h.data(), int(h.size()), MPI_FLOAT,
                  MPI_COMM_WORLD);
    std::vector<float> budget(h.size(), 0.0f);
    for (int r = 0; r < n_ranks_; ++r)
      for (size_t k = 0; k < h.size(); ++k) budget[k] += all_h[size_t(r) * h.size() + k];

    inner_.reduce_sum(x, B, n);

    for (int64_t i = 0; i < total; ++i) {
      const double H = budget[size_t(i / QK8_0)];
      // Q8_0Sync adds the dequantised partials in float: N - 1 roundings of at most half an ulp.
      const double slack = n_ranks_ * std::ldexp(sums[size_t(total + i)] + H, -24);
      const double err = std::fabs(double(x[i]) - sums[size_t(i)]);
      max_error_ = std::max(max_error_, err);
      max_budget_ = std::max(max_budget_, H);
      if (H > 0) max_ratio_ = std::max(max_ratio_, err / H);
      if (err > H + slack) ++violations_;
      sum_sq_error_ += err * err;
      sum_sq_budget_ += H * H;
      ++elements_;
      if (probe_scale_ > 0) x[i] += float(((mix(++counter_) & 1) ? H : -H) * probe_scale_);
    }
  }

  int64_t violations() const { return violations_; }
  double max_error() const { return max_error_; }
  double max_budget() const { return max_budget_; }
  double max_ratio() const { return max_ratio_; }
  double rms_ratio() const { return sum_sq_budget_ > 0 ? std::sqrt(sum_sq_error_ / sum_sq_budget_) : 0; }

 private:
  Q8_0Sync& inner_;
  int n_ranks_;
  double probe_scale_;
  uint64_t counter_;
  int64_t violations_ = 0, elements_ = 0;
  double max_error_ = 0, max_budget_ = 0, max_ratio_ = 0, sum_sq_error_ = 0, sum_sq_budget_ = 0;
};

// Runs the sequence through a forward pass in chunks; returns [position][this shard's rows].
std::vector<float> run_sequence(ModelForward& f, const std::vector<int32_t>& tokens, int chunk) {
  std::vector<float> out;
  for (int pos = 0; pos < int(tokens.size()); pos += chunk) {
    const int B = std::min(chunk, int(tokens.size()) - pos);
    const std::vector<float>& l = f.forward(Batch::run(tokens.data() + pos, B, pos, LogitsFor::All));
    out.insert(out.end(), l.begin(), l.end());
  }
  return out;
}

// Collective: every rank's [position][rows] logits as [position][n_vocab] on rank 0.
std::vector<float> gather_logits(const std::vector<float>& mine, const Shard& shard, int n_pos,
                                 uint32_t n_vocab, const MpiWorld& world) {
  const int n = world.size();
  const int range[2] = {int(shard.vocab.begin), int(shard.vocab.size())};
  std::vector<int> ranges(static_cast<size_t>(2 * n)), counts(static_cast<size_t>(n)),
      offsets(static_cast<size_t>(n));
  MPI_Gather(range, 2, MPI_INT, ranges.data(), 2, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<float> packed;
  if (world.is_root()) {
    for (int r = 0, off = 0; r < n; off += counts[size_t(r)], ++r) {
      counts[size_t(r)] = n_pos * ranges[size_t(2 * r + 1)];
      offsets[size_t(r)] = off;
    }
    packed.resize(size_t(offsets.back() + counts.back()));
  }
  MPI_Gatherv(mine.data(), int(mine.size()), MPI_FLOAT, packed.data(), counts.data(), offsets.data(),
              MPI_FLOAT, 0, MPI_COMM_WORLD);
  std::vector<float> all;
  if (!world.is_root()) return all;
  all.assign(size_t(n_pos) * n_vocab, NAN);
  for (int r = 0; r < n; ++r) {
    const int begin = ranges[size_t(2 * r)], size = ranges[size_t(2 * r + 1)];
    for (int p = 0; p < n_pos; ++p)
      std::memcpy(&all[size_t(p) * n_vocab + size_t(begin)],
                  &packed[size_t(offsets[size_t(r)]) + size_t(p) * size_t(size)], sizeof(float) * size_t(size));
  }
  return all;
}

int argmax(const float* x, uint32_t n) {
  int best = 0;
  for (uint32_t i = 1; i < n; ++i)
    if (x[i] > x[best]) best = int(i);
  return best;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - double(b[i])));
  return m;
}

int run(int argc, char** argv, const MpiWorld& world) {
  const Args args = parse_args(argc, argv);
  const int rank = world.rank(), n_ranks = world.size();

  std::optional<LoadedModel> shard;
  std::string error;
  try {
    const ShardWeights weights = args.shard_weights.empty() ? ShardWeights{} : parse_shard_weights(args.shard_weights, n_ranks);
    shard = load_model(args.model, false, rank, n_ranks, weights);
  } catch (const Error& e) {
    error = e.what();
  }
  if (!all_succeeded(world, error)) return 1;
  const ModelConfig& config = shard->config;
  const uint32_t V = config.n_vocab;
  const std::vector<int32_t> tokens = args.ids_from.empty()
                                          ? token_sequence(args.tokens, V)
                                          : greedy_file_ids(args.ids_from, args.tokens, V);
  const int n_pos = args.tokens;

  // ---- the N-rank runs: Q8_0Sync as r1pi uses it, then the probes ----
  ThreadPool pool(args.threads);
  Q8_0Sync q8_0_sync(parse_sync_method(args.sync), rank, n_ranks);
  auto run_ranks = [&](ShardSync& sync) {
    ModelForward f(config, shard->weights, shard->shard, n_pos, pool, sync);
    return gather_logits(run_sequence(f, tokens, args.chunk), shard->shard, n_pos, V, world);
  };
  CheckedSync checked(q8_0_sync, n_ranks);
  const std::vector<float> ranks_logits = run_ranks(checked);
  struct Probe {
    const char* name;
    double scale;
    uint64_t seed;
    std::vector<float> logits;
  };
  std::vector<Probe> probes = {{"+-H", 1.0, 1, {}}, {"+-H other signs", 1.0, 2, {}}, {"+-H/1000", 1e-3, 1, {}}};
  for (Probe& p : probes) {
    CheckedSync probe(q8_0_sync, n_ranks, p.scale, p.seed);
    p.logits = run_ranks(probe);
  }
  int64_t violations = checked.violations();
  MPI_Allreduce(MPI_IN_PLACE, &violations, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);

  int verdict = 0;
  if (world.is_root()) {
    // ---- the reference: the whole model on this rank, no sync ----
    const LoadedModel whole = load_model(args.model);
    NoSync none;
    ModelForward f(whole.config, whole.weights, whole.shard, n_pos, pool, none);
    const std::vector<float> ref = run_sequence(f, tokens, args.chunk);

    int agree = 0;
    double max_flipped_margin = 0;
    for (int p = 0; p < n_pos; ++p) {
      const float* r = &ref[size_t(p) * V];
      const int a = argmax(r, V), b = argmax(&ranks_logits[size_t(p) * V], V);
      if (a == b) ++agree;
      else max_flipped_margin = std::max(max_flipped_margin, double(r[a]) - double(r[b]));
    }
    double mean = 0, var = 0;
    for (float v : ref) mean += v;
    mean /= double(ref.size());
    for (float v : ref) var += (v - mean) * (v - mean);
    const double spread = std::sqrt(var / double(ref.size()));
    const double diff = max_abs_diff(ranks_logits, ref);
    double largest_probe = 0;
    for (const Probe& p : probes) largest_probe = std::max(largest_probe, max_abs_diff(p.logits, ref));
    const double bound = 2 * largest_probe;
    const double agreement = double(agree) / n_pos;

    std::printf("teacher-forced: %s (%u layers, %u/%u heads, FFN %u, vocab %u), %d ranks, sync %s, "
                "%d positions in chunks of %d\n",
                args.model.c_str(), config.n_layers, config.n_heads, config.n_kv_heads, config.ffn_dim, V,
                n_ranks, args.sync.c_str(), n_pos, args.chunk);
    std::printf("sync check (%d syncs per forward): max |combined - exact| %.3g, max budget H %.3g, "
                "max ratio %.3f, rms ratio %.3f, %lld elements over budget\n",
                2 * int(config.n_layers), checked.max_error(), checked.max_budget(), checked.max_ratio(),
                checked.rms_ratio(), (long long)violations);
    std::printf("top-1 agreement: %d/%d = %.2f%% (required %.2f%%)", agree, n_pos, 100 * agreement,
                100 * args.min_agreement);
    if (agree < n_pos) std::printf("; flips where the one-rank margin was at most %.3g", max_flipped_margin);
    std::printf("\nlogits: max |N ranks - 1 rank| %.4g; probes:", diff);
    for (const Probe& p : probes) std::printf(" %s %.4g", p.name, max_abs_diff(p.logits, ref));
    std::printf("; bound 2 x %.4g = %.4g (diff/bound %.2f); one-rank spread (std) %.4g, diff/spread %.4f\n",
                largest_probe, bound, diff / bound, spread, diff / spread);

    auto fail = [&](const std::string& why) {
      std::printf("FAIL: %s\n", why.c_str());
      verdict = 1;
    };
    if (violations > 0) fail("combined partial sums outside the Q8_0 rounding budget");
    if (agreement < args.min_agreement) fail("top-1 agreement below the requirement");
    if (!(diff <= bound)) fail("logit difference above the bound");
    if (!(diff <= args.max_diff_spread * spread))
      fail("logit difference above " + std::to_string(int(100 * args.max_diff_spread)) + "% of the logits spread");
    if (!(largest_probe > 0)) fail("the probes did not move the logits (is the sync wired in?)");
    if (verdict == 0) std::printf("PASS\n");
    std::fflush(stdout);
  }
  MPI_Bcast(&verdict, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return verdict;
}

}  // namespace
}  // namespace r1pi

int main(int argc, char** argv) {
  return r1pi::test::mpi_test_main(argc, argv, "mpi_teacher_forced", r1pi::run);
}
