// r1pi-bench: llama-bench's measurements on r1pi's engine, on one rank or as one rank of an MPI job
// (mpirun -np N r1pi-bench ...: rank 0 reports). Every combination of the listed values, r timed
// repetitions after a warm-up, the mean and sd of tok/s per test.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/common_options.h"
#include "benchmark/bench_params.h"
#include "benchmark/bench_report.h"
#include "benchmark/bench_run.h"
#include "common/error.h"
#include "common/standard_output.h"
#include "common/thread_pool.h"
#include "layers/shard_sync.h"
#include "neon/kernels.h"
#include "runtime/run_options.h"
#include "runtime/run_steps.h"
#include "runtime/token_source.h"
#ifdef R1PI_HAVE_MPI
#include "runtime/mpi/distributed_run.h"
#include "runtime/mpi/mpi_world.h"
#include "runtime/mpi/rank_agreement.h"
#include "runtime/mpi/rank_roles.h"
#endif

namespace {

struct BenchOptions {
  std::vector<std::string> model_paths;  // -m, repeatable: one table for all
  std::vector<r1pi::BenchTest> tests;
  int repetitions = 5;
  r1pi::BenchFormat format = r1pi::BenchFormat::Md;
  std::string sync = r1pi::kSyncAuto;
};

struct Job {
  int rank = 0, n_ranks = 1;
#ifdef R1PI_HAVE_MPI
  const r1pi::MpiWorld* world = nullptr;
#endif
};

// Runs one thread count's tests on rank 0's token source, printing progress.
using RunTests = std::function<void(r1pi::TokenSource&, const std::function<r1pi::StepCost()>&)>;

// One engine per (thread count, KV cache type).
void bench_engine([[maybe_unused]] const BenchOptions& o, const r1pi::LoadedModel& model, const Job& job, int threads,
                  r1pi::GgmlType kv_type, int n_ctx, const RunTests& run_tests, int& status) {
#ifdef R1PI_HAVE_MPI
  if (job.n_ranks > 1) {
    const std::unique_ptr<r1pi::RankEngine> engine =
        r1pi::make_engine(model, n_ctx, threads, o.sync, *job.world, kv_type);
    if (!engine) {
      status = 1;
      return;
    }
    if (job.rank != 0) {
      status = r1pi::run_worker(engine->forward, engine->sync, *job.world, {});
      return;
    }
    r1pi::RootTokenSource source(engine->forward, engine->sync, *job.world, {});
    run_tests(source, [&] { return source.last_cost(); });
    source.stop(0);
    return;
  }
#endif
  r1pi::ThreadPool pool(threads);
  r1pi::NoSync sync;
  r1pi::ModelForward forward(model.config, model.weights, model.shard, n_ctx, pool, sync, kv_type);
  r1pi::LocalTokenSource source(forward);
  run_tests(source, {});
}

// The drafter's defaults (r1pi's) and the cost curve of this thread count, from the cache or
// measured on the loaded model (as r1pi --spec), when a test of tests[first, end) speculates.
r1pi::SpecOptions spec_options(const BenchOptions& o, const std::string& model_path, const r1pi::LoadedModel& model,
                               r1pi::TokenSource& source, const Job& job, int threads, size_t first, size_t end) {
  if (std::none_of(o.tests.begin() + first, o.tests.begin() + end,
                   [](const r1pi::BenchTest& t) { return t.config.spec != 0; }))
    return {};
  r1pi::RunOptions run;
  run.model_path = model_path;
  run.kv_type = r1pi::kBenchKvTypes[o.tests[first].config.kv];
  run.sampler = r1pi::SamplerParams{0.0f, 1, 1.0f, 0};
  run.spec = true;
  return r1pi::generation_options(run, model, source, job.n_ranks, threads).spec;
}

// Runs every test on one model, appending to results (rank 0's are the measured ones).
int bench(const BenchOptions& o, const std::string& model_path, const Job& job,
          std::vector<r1pi::TestResult>& all_results) {
  std::optional<r1pi::LoadedModel> loaded;
#ifdef R1PI_HAVE_MPI
  if (job.n_ranks > 1) {
    loaded = r1pi::load_shards(model_path, false, *job.world);
    if (!loaded) return 1;
  }
#endif
  if (!loaded) loaded = r1pi::load_model(model_path, true);
  const r1pi::LoadedModel& model = *loaded;
  const int n_ctx = r1pi::bench_context(o.tests);
  const std::vector<int32_t> ids =
      r1pi::bench_prompt_ids(r1pi::bench_prompt_length(o.tests), model.config.n_vocab);
  const r1pi::BenchModel info = r1pi::describe_bench_model(model, job.n_ranks, r1pi::kernels().name);
  if (job.rank == 0)
    std::fprintf(stderr, "r1pi-bench: %s, %d rank%s, context %d, weights read per decode token: %.1f MB on rank 0\n",
                 info.type.c_str(), job.n_ranks, job.n_ranks > 1 ? "s" : "", n_ctx,
                 info.weight_bytes_per_token / 1e6);

  std::vector<r1pi::TestResult> results;
  int status = 0;
  for (size_t first = 0; first < o.tests.size() && status == 0;) {
    // The tests of one thread count and cache type are consecutive (kListParams nests them outermost).
    const r1pi::BenchConfig& engine = o.tests[first].config;
    size_t end = first;
    while (end < o.tests.size() && o.tests[end].config.threads == engine.threads &&
           o.tests[end].config.kv == engine.kv)
      ++end;
    const std::string kv_name = r1pi::kBenchKvTypes[engine.kv];
    bench_engine(o, model, job, engine.threads, r1pi::kv_cache_type(kv_name), n_ctx,
                 [&](r1pi::TokenSource& source, const std::function<r1pi::StepCost()>& last_cost) {
                   const r1pi::SpecOptions spec =
                       spec_options(o, model_path, model, source, job, engine.threads, first, end);
                   for (size_t i = first; i < end; ++i) {
                     std::fprintf(stderr, "[%zu/%zu] %s -t %d -ctk %s -b %d --spec %d: 1 warm-up + %d runs\n",
                                  i + 1, o.tests.size(), o.tests[i].name().c_str(), engine.threads,
                                  kv_name.c_str(), o.tests[i].config.batch, o.tests[i].config.spec,
                                  o.repetitions);
                     results.push_back(r1pi::run_test(source, last_cost, *model.tokenizer, o.tests[i],
                                                      ids, o.repetitions, spec));
                     results.back().model = info;
                   }
                 },
                 status);
    first = end;
  }
  if (job.rank != 0 || status != 0) return status;
  r1pi::check_spec_twins(results);
  all_results.insert(all_results.end(), results.begin(), results.end());
  return 0;
}

// Prints every model's results; a failed test makes the exit status 1.
int print_all(const BenchOptions& o, const std::vector<r1pi::TestResult>& results) {
  r1pi::print_results(stdout, o.format, results);
  std::fflush(stdout);
  int status = 0;
  for (const r1pi::TestResult& r : results)
    if (!r.error.empty()) {
      std::fprintf(stderr, "error: %s -t %d -b %d --spec %d: %s\n", r.test.name().c_str(), r.test.config.threads,
                   r.test.config.batch, r.test.config.spec, r.error.c_str());
      status = 1;
    }
  return status;
}

// A pp test after a depth must start on a batch boundary: the depth's last prefill batch would
// otherwise hold measured tokens.
void check_tests(const std::vector<r1pi::BenchTest>& tests) {
  if (tests.empty()) throw r1pi::Error("no tests: give -p, -n or -pg values above 0");
  for (const r1pi::BenchTest& t : tests)
    if (t.n_prompt > 0 && t.config.depth % t.config.batch != 0)
      throw r1pi::Error("-d " + std::to_string(t.config.depth) + " is not a multiple of -b " +
                        std::to_string(t.config.batch) + ": the depth's prefill would share a batch with " +
                        t.name());
}

int report(const std::string& what) {
  std::fflush(stdout);
  std::fprintf(stderr, "error: %s\n", what.c_str());
  return 1;
}

int run(int argc, char** argv) {
  Job job;
#ifdef R1PI_HAVE_MPI
  // r1pi-bench has no --rank-timeout: MPI_Init and every exchange wait r1pi's default.
  r1pi::MpiWorld world(&argc, &argv, r1pi::kDefaultRankTimeout);
  job = {world.rank(), world.size(), &world};
#endif
  BenchOptions o;
  std::string n_prompt = "512", n_gen = "128", format = "md";
  std::vector<std::string> pg;
  std::vector<std::string> lists(r1pi::kListParams.size());
  CLI::App app{"r1pi-bench: prefill and decode speed of a GGUF model (llama-bench's tests)", "r1pi-bench"};
  app.add_option("-m,--model", o.model_paths, "GGUF model file (repeatable: every test on each, one table)")
      ->required();
  app.add_option("-p,--n-prompt", n_prompt, "prompt lengths of the pp tests (0: none)")->capture_default_str();
  app.add_option("-n,--n-gen", n_gen, "generated tokens of the tg tests (0: none)")->capture_default_str();
  app.add_option("--pg", pg, "-pg PP,TG: a prompt then a generation, timed together (repeatable)");
  for (size_t i = 0; i < r1pi::kListParams.size(); ++i) {
    const r1pi::ListParam& p = r1pi::kListParams[i];
    // As r1pi: the cores this process may run on.
    lists[i] = *p.default_list ? p.default_list : std::to_string(r1pi::ThreadPool::available_cores());
    app.add_option(p.flag, lists[i], std::string(p.help) + (p.names ? " (list)" : " (list or range)"))
        ->capture_default_str();
  }
  app.add_option("-r,--repetitions", o.repetitions, "timed runs per test, after one warm-up")
      ->check(CLI::Range(1, 100000))->capture_default_str();
  app.add_option("-o,--output", format, "md, csv, json or jsonl")->capture_default_str();
  r1pi::add_sync_option(app, o.sync)->capture_default_str();
  // llama-bench spells them -pg and -ctk, one-dash names CLI11 2.1 cannot declare.
  std::vector<std::string> args(argv + 1, argv + argc);
  for (std::string& a : args) {
    if (a == "-pg") a = "--pg";
    if (a == "-ctk") a = "--cache-type-k";
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector in reverse order
  std::string error;
  bool help = false;
  try {
    app.parse(args);
    std::vector<std::vector<int>> values;
    for (size_t i = 0; i < r1pi::kListParams.size(); ++i)
      values.push_back(r1pi::kListParams[i].names
                           ? r1pi::parse_name_list("-ctk", lists[i], *r1pi::kListParams[i].names)
                           : r1pi::parse_int_list(r1pi::kListParams[i].flag, lists[i],
                                                  r1pi::kListParams[i].min_value, r1pi::kListParams[i].max_value));
    std::vector<std::pair<int, int>> pairs;
    for (const std::string& text : pg)
      for (const auto& pair : r1pi::parse_pg_pairs(text)) pairs.push_back(pair);
    o.tests = r1pi::expand_tests(values, r1pi::parse_int_list("-p", n_prompt, 0),
                                 r1pi::parse_int_list("-n", n_gen, 0), pairs);
    check_tests(o.tests);
    o.format = r1pi::parse_bench_format(format);
  } catch (const CLI::ParseError& e) {
    help = e.get_exit_code() == 0;
    if (help && job.rank == 0) app.exit(e);
    if (!help) error = std::string(e.what()) + " (r1pi-bench --help lists the options)";
  } catch (const r1pi::Error& e) {
    error = e.what();
  }
  try {
#ifdef R1PI_HAVE_MPI
    // The job's first collective, reached whatever a rank's command line said (rank 0 reports).
    if (job.n_ranks > 1 && !r1pi::all_succeeded(world, error)) return 1;
#endif
    if (help) return 0;
    if (!error.empty()) return report(error);
    std::vector<r1pi::TestResult> results;
    for (const std::string& path : o.model_paths)
      if (const int status = bench(o, path, job, results); status != 0) return status;
    return job.rank == 0 ? print_all(o, results) : 0;
  } catch (const r1pi::Error& e) {
#ifdef R1PI_HAVE_MPI
    // Past start-up the ranks wait on each other: end the whole job rather than hang.
    if (job.n_ranks > 1) {
      report(e.what());
      world.abort(1);
    }
#endif
    return report(e.what());
  }
}

}  // namespace

int main(int argc, char** argv) { return r1pi::exit_status_after_stdout(run(argc, argv)); }
