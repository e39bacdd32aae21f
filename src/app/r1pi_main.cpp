// r1pi: runs a Llama-family GGUF model and streams what it generates, on one rank or as one rank
// of an MPI job (mpirun -np N ./r1pi ...).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include "common/error.h"
#include "runtime/run_options.h"
#include "runtime/run_steps.h"
#ifdef R1PI_HAVE_MPI
#include "runtime/mpi/distributed_run.h"
#include "runtime/mpi/mpi_world.h"
#endif

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw r1pi::Error(path + ": cannot read the prompt file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int report(const char* what) {
  std::fflush(stdout);
  std::fprintf(stderr, "error: %s\n", what);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef R1PI_HAVE_MPI
  // Every rank parses the same command line; MPI first, so that it can strip its own arguments.
  r1pi::MpiWorld world(&argc, &argv);
  const bool root = world.is_root();
#else
  const bool root = true;
#endif
  r1pi::RunOptions o;
  std::string prompt_file;
  int64_t seed = -1;
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
  app.add_option("--seed", seed, "sampling seed (-1: random)");
  app.add_option("-t,--threads", o.threads, "compute threads per rank (default: the cores available)")
      ->check(CLI::Range(1, 1024));
  app.add_option("-c,--ctx-size", o.ctx_size, "context size in tokens (default: min(trained, 4096))")
      ->check(CLI::Range(1, 1 << 24));
  app.add_option("-b,--batch-size", o.batch_size, "prompt tokens per prefill forward")
      ->check(CLI::Range(1, 4096));
  app.add_flag("--no-bos", o.no_bos, "do not prepend the BOS token");
  auto* mpi = "multi-rank (mpirun) options";
  app.add_option("--sync", o.sync, "how ranks combine partial sums: allgather or allreduce")
      ->check(CLI::IsMember({"allgather", "allreduce"}))->group(mpi);
  app.add_flag("--weights-from-root", o.weights_from_root,
               "rank 0 reads the model and sends every rank its slices")->group(mpi);
  app.add_flag("--check-ranks", o.check_ranks,
               "compare every layer's hidden state across ranks after each forward")->group(mpi);
  app.add_flag("--timings", o.timings, "per-token Pred/Sync times and bytes (rank 0)")->group(mpi);
  app.add_flag("--timings-all", o.timings_all, "per-token times from every rank")->group(mpi);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Only one rank explains a bad command line.
    return root ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : 1);
  }
  try {
    // Only rank 0 tokenises the prompt: the prompt file need not exist on the other boards.
    if (!prompt_file.empty() && root) o.prompt = read_file(prompt_file);
    // Rank 0's random seed is the one used: only rank 0 samples.
    o.sampler.seed = seed >= 0 ? uint64_t(seed) : uint64_t(std::random_device{}());
#ifdef R1PI_HAVE_MPI
    if (world.size() > 1) return r1pi::run_distributed(o, world);
#endif
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
