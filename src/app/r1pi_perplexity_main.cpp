// r1pi-perplexity: a model's perplexity over a text by llama-perplexity's method, its logits saved
// for another run, or compared with another run's (KL divergence, top-1 agreement). On one rank or
// as an MPI job (mpirun -np N r1pi-perplexity ...: rank 0 reads the input and prints the result).
#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdio>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "app/common_options.h"
#include "app/run_job.h"
#include "common/atomic_file.h"
#include "common/error.h"
#include "common/standard_output.h"
#include "common/whole_file.h"
#include "evaluation/perplexity.h"
#include "runtime/run_options.h"
#include "runtime/run_steps.h"

namespace {

// Whitespace-separated decimal ids.
std::vector<int32_t> read_ids(const std::string& path) {
  const std::string text = r1pi::read_whole_file(path, "ids file");
  std::vector<int32_t> ids;
  const char* p = text.data();
  const char* end = p + text.size();
  auto space = [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; };
  while (true) {
    while (p < end && space(*p)) ++p;
    if (p == end) break;
    int32_t id = 0;
    const auto [next, ec] = std::from_chars(p, end, id);
    if (ec != std::errc() || (next < end && !space(*next)))
      throw r1pi::Error(path + ": id number " + std::to_string(ids.size() + 1) +
                        " is not a non-negative integer (the file holds ids separated by whitespace)");
    ids.push_back(id);
    p = next;
  }
  return ids;
}

}  // namespace

int main(int argc, char** argv) {
  r1pi::JobWorld world(&argc, &argv, r1pi::rank_timeout_before_mpi(argc, argv));
  const bool root = world.is_root();
  r1pi::RunOptions o;
  r1pi::PerplexityOptions p;
  std::string text_file, ids_file;
  int ctx = 0;
  CLI::App app{"r1pi-perplexity: a model's perplexity over a text (llama-perplexity's method), its logits "
               "saved or compared with another run's",
               "r1pi-perplexity"};
  app.add_option("-m,--model", o.model_path, "GGUF model file")->required();
  auto* text = app.add_option("-f,--file", text_file, "the text to score");
  auto* ids = app.add_option("--tokens", ids_file, "whitespace-separated token ids to score instead of a text")
                  ->excludes(text);
  app.add_option("-c,--ctx-size", ctx,
                 "tokens per chunk (default 512); with --all-logits the context, at least the ids' count "
                 "(default: the model's, at most 4096)")
      ->check(CLI::Range(1, 1 << 24));
  app.add_option("-b,--batch-size", p.batch, "tokens per forward")->check(CLI::Range(1, 4096))->capture_default_str();
  app.add_option("-t,--threads", o.threads, "compute threads per rank (default: the cores available)")
      ->check(CLI::Range(1, 1024));
  app.add_flag("--all-logits", p.all_positions,
               "the whole input as one sequence, every position's logits kept (row p: after ids 0..p)");
  app.add_option("--save-logits", p.save_logits,
                 "write the kept positions' logits: raw little-endian float32 rows of n_vocab, in position order");
  app.add_option("--kl-divergence", p.compare_logits,
                 "compare the kept logits with a --save-logits file of another run: KL divergence and "
                 "top-1 agreement");
  r1pi::add_kv_type_option(app, o);
  r1pi::add_rank_options(app, o);

  std::string error;
  bool help = false;
  std::vector<int32_t> input_ids;
  std::string input_text;
  try {
    app.parse(argc, argv);
    if (text->count() == 0 && ids->count() == 0) throw r1pi::Error("give the text to score: -f FILE or --tokens IDS.txt");
    // Only rank 0 reads the input: it need not exist on the other boards.
    if (root) {
      if (!p.save_logits.empty())
        r1pi::refuse_output_over_input(p.save_logits, {o.model_path, text_file, ids_file, p.compare_logits});
      if (!ids_file.empty()) input_ids = read_ids(ids_file);
      else input_text = r1pi::read_whole_file(text_file, "text file");
    }
    p.n_ctx = ctx > 0 ? ctx : 512;
    o.ctx_size = p.all_positions ? ctx : p.n_ctx;
    o.batch_size = p.batch;
    o.session = true;  // rank 0 drives the engine; the other ranks follow
    const int cores = int(std::thread::hardware_concurrency());
    if (cores > 0 && o.threads > cores) o.threads = cores;
  } catch (const CLI::ParseError& e) {
    help = e.get_exit_code() == 0;
    if (help && root) app.exit(e);
    if (!help) error = std::string(e.what()) + " (r1pi-perplexity --help lists the options)";
  } catch (const r1pi::Error& e) {
    error = e.what();
  }
  const bool terminal = isatty(STDERR_FILENO);
  p.progress = [&](int64_t done, int64_t total, double ppl) {
    std::fprintf(stderr, "%s%lld/%lld tokens, perplexity so far %.4f%s", terminal ? "\r" : "", (long long)done,
                 (long long)total, ppl, terminal && done < total ? "" : "\n");
  };
  const r1pi::Session session = [&](r1pi::TokenSource& source, const r1pi::LoadedModel& model, int,
                                    const r1pi::GenerationOptions&) {
    const r1pi::Tokenizer& tokenizer = *model.tokenizer;
    if (ids_file.empty()) {
      // As llama-perplexity: the text with BOS first when the vocabulary adds one, special tokens
      // as text, and every chunk starting with BOS.
      input_ids = tokenizer.encode(input_text, tokenizer.add_bos(), false);
      if (tokenizer.add_bos()) p.chunk_bos = tokenizer.bos_id();
    }
    std::fprintf(stderr, "scoring %zu tokens: %s\n", input_ids.size(),
                 p.all_positions ? "one sequence, every position kept"
                                 : ("chunks of " + std::to_string(p.n_ctx) + ", the second half of each scored").c_str());
    const r1pi::PerplexityResult r = r1pi::run_perplexity(source, input_ids, model.config.n_vocab, p);
    std::printf("perplexity: %.4f +/- %.4f (%lld tokens scored)\n", r.perplexity, r.uncertainty, (long long)r.scored);
    if (!p.save_logits.empty())
      std::printf("saved %lld rows of %lld logits to %s\n", (long long)r.kept, (long long)model.config.n_vocab,
                  p.save_logits.c_str());
    if (r.compared) {
      std::printf("kl-divergence: mean %.6g, max %.6g over %lld positions\n", r.kl_mean, r.kl_max, (long long)r.kept);
      std::printf("top-1 agreement: %.2f%%\n", 100 * r.top1_agreement);
      std::printf("perplexity of %s: %.4f\n", p.compare_logits.c_str(), r.other_perplexity);
    }
    return 0;
  };
  return r1pi::exit_status_after_stdout(r1pi::run_job(world, o, error, help, session));
}
