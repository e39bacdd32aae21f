// r1pi: runs a Llama-family GGUF model and streams what it generates, on one rank or as one rank
// of an MPI job (mpirun -np N ./r1pi ...).
#include <CLI/CLI.hpp>

#include <sys/stat.h>

#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "common/error.h"
#include "runtime/run_options.h"
#include "runtime/run_steps.h"
#ifdef R1PI_HAVE_MPI
#include "runtime/mpi/distributed_run.h"
#include "runtime/mpi/mpi_world.h"
#include "runtime/mpi/rank_agreement.h"
#include "runtime/mpi/rank_watchdog.h"
#endif

namespace {

std::string read_file(const std::string& path) {
  // A directory or a FIFO would read as nothing (or block): refuse what is not a plain file.
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) throw r1pi::Error(path + ": cannot read the prompt file: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw r1pi::Error(path + ": the prompt file is not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw r1pi::Error(path + ": cannot read the prompt file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// --seed: -1 (random) or any 64-bit value; CLI11 would clamp what an int64_t cannot hold.
uint64_t parse_seed(const std::string& text) {
  if (text == "-1") return uint64_t(std::random_device{}());
  uint64_t seed = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, seed);
  if (text.empty() || ec != std::errc() || ptr != end)
    throw r1pi::Error("--seed " + text + ": give -1 (random) or a number from 0 to 2^64-1");
  return seed;
}

// The checks CLI11's range validators cannot make (NaN passes every comparison), and the cap on
// threads: more threads than cores only slow every forward down.
void check_options(r1pi::RunOptions& o) {
  if (o.n_predict == 0 || o.n_predict < -1)
    throw r1pi::Error("-n/--n-predict " + std::to_string(o.n_predict) +
                      ": give -1 (until end-of-generation or a full context) or a positive count");
  if (!std::isfinite(o.sampler.temperature)) throw r1pi::Error("--temp must be a number from 0 to 100");
  if (!std::isfinite(o.sampler.top_p)) throw r1pi::Error("--top-p must be a number from 0 to 1");
  if (!std::isfinite(o.rank_timeout)) throw r1pi::Error("--rank-timeout must be a number of seconds");
  const int cores = int(std::thread::hardware_concurrency());
  if (cores > 0 && o.threads > cores) {
    std::fprintf(stderr, "warning: -t %d is more threads than the %d cores here; using %d\n", o.threads,
                 cores, cores);
    o.threads = cores;
  }
}

int report(const char* what) {
  std::fflush(stdout);
  std::fprintf(stderr, "error: %s\n", what);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef R1PI_HAVE_MPI
  // Every rank parses its own command line (rank 0's is the job's); MPI first, so that it can strip
  // its own arguments.
  r1pi::MpiWorld world(&argc, &argv);
  const bool root = world.is_root();
#else
  const bool root = true;
#endif
  r1pi::RunOptions o;
  std::string prompt_file;
  std::string seed = "-1";
  CLI::App app{"r1pi: runs Llama-family GGUF models (DeepSeek-R1-Distill-Llama and kin)"};
  app.add_option("-m,--model", o.model_path, "GGUF model file")->required();
  auto* prompt = app.add_option("-p,--prompt", o.prompt, "prompt text");
  app.add_option("-f,--file", prompt_file, "read the prompt from a file")->excludes(prompt);
  app.add_option("-n,--n-predict", o.n_predict, "tokens to generate (-1: until end or full context)");
  app.add_option("--temp", o.sampler.temperature, "temperature (0: greedy)")->check(CLI::Range(0.0f, 100.0f));
  app.add_option("--top-k", o.sampler.top_k, "keep the k most likely tokens (0: all)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--top-p", o.sampler.top_p, "nucleus sampling threshold (1: off)")
      ->check(CLI::Range(0.0f, 1.0f));
  app.add_option("--seed", seed, "sampling seed, 0 to 2^64-1 (-1: random)");
  app.add_option("-t,--threads", o.threads, "compute threads per rank (default: the cores available)")
      ->check(CLI::Range(1, 1024));
  app.add_option("-c,--ctx-size", o.ctx_size, "context size in tokens (default: min(trained, 4096))")
      ->check(CLI::Range(1, 1 << 24));
  app.add_option("-b,--batch-size", o.batch_size, "prompt tokens per prefill forward")
      ->check(CLI::Range(1, 4096));
  app.add_flag("--no-bos", o.no_bos, "do not prepend the BOS token");
  app.add_option("--kv-type", o.kv_type,
                 "KV cache type: f32 (exact, default), f16 or q8_0 (half or a quarter of the bytes, approximate)")
      ->check(CLI::IsMember({"f32", "f16", "q8_0"}));
  auto* mpi = "multi-rank (mpirun) options";
  app.add_option("--sync", o.sync, "how ranks combine partial sums: allgather or allreduce")
      ->check(CLI::IsMember({"allgather", "allreduce"}))->group(mpi);
  app.add_flag("--weights-from-root", o.weights_from_root,
               "rank 0 reads the model and sends every rank its slices")->group(mpi);
  app.add_flag("--check-ranks", o.check_ranks,
               "compare every layer's hidden state across ranks after each forward")->group(mpi);
  app.add_flag("--timings", o.timings, "per-token Pred/Sync times and bytes (rank 0)")->group(mpi);
  app.add_flag("--timings-all", o.timings_all, "per-token times from every rank")->group(mpi);
  app.add_option("--rank-timeout", o.rank_timeout,
                 "seconds without progress from a rank before the job ends, naming it")
      ->check(CLI::Range(0.1, 1e6))->group(mpi);
  // Nothing may end a rank before the first collective: the others would wait for it forever.
  // Failures are collected here, and the ranks agree on them (start_job).
  std::string error;
  bool help = false;
  try {
    app.parse(argc, argv);
    // Only rank 0 tokenises the prompt: the prompt file need not exist on the other boards.
    if (!prompt_file.empty() && root) o.prompt = read_file(prompt_file);
    // Rank 0's seed is the one used: only rank 0 samples.
    o.sampler.seed = parse_seed(seed);
    check_options(o);
  } catch (const CLI::ParseError& e) {
    help = e.get_exit_code() == 0;  // --help: CLI11 reports it as a "parse error" that exits 0
    if (help && root) app.exit(e);
    if (!help) error = std::string(e.what()) + " (r1pi --help lists the options)";
  } catch (const r1pi::Error& e) {
    error = e.what();
  }
  try {
#ifdef R1PI_HAVE_MPI
    if (world.size() > 1) {
      r1pi::set_rank_timeout(o.rank_timeout);  // until start_job adopts rank 0's
      if (const std::optional<int> status = r1pi::start_job(world, o, error, help)) return *status;
      return r1pi::run_distributed(o, world);
    }
#endif
    if (help) return 0;
    if (!error.empty()) return report(error.c_str());
    return r1pi::run_single_rank(o);
  } catch (const r1pi::Error& e) {
#ifdef R1PI_HAVE_MPI
    // Past start-up the ranks may wait on each other: end the whole job rather than hang.
    if (world.size() > 1) {
      report(e.what());
      world.abort(1);
    }
#endif
    return report(e.what());
  } catch (const std::bad_alloc&) {
#ifdef R1PI_HAVE_MPI
    // As above: a rank that returns while the others wait in a collective would hang the job.
    if (world.size() > 1) {
      report("out of memory");
      world.abort(1);
    }
#endif
    return report("out of memory");
  }
}
