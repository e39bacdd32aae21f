// r1pi: runs a Llama-family GGUF model and streams what it generates.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "common/error.h"
#include "common/token_hash.h"
#include "layers/llama_forward.h"
#include "model/model_loader.h"
#include "neon/kernels.h"
#include "runtime/generator.h"
#include "runtime/thread_pool.h"

namespace {

struct CliOptions {
  std::string model_path;
  std::string prompt;
  std::string prompt_file;
  int n_predict = -1;
  float temperature = 0.8f;
  int top_k = 40;
  float top_p = 0.95f;
  int64_t seed = -1;
  int threads = 0;
  int ctx_size = 0;
  int batch_size = 64;
  bool no_bos = false;
};

std::string read_prompt(const CliOptions& o) {
  if (!o.prompt_file.empty()) {
    std::ifstream in(o.prompt_file, std::ios::binary);
    if (!in) throw r1pi::Error(o.prompt_file + ": cannot read the prompt file");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  return o.prompt;
}

int run(const CliOptions& o) {
  using namespace r1pi;
  const std::string text = read_prompt(o);
  if (text.empty()) throw Error("empty prompt: give the text with -p TEXT or -f FILE");

  const auto load_start = std::chrono::steady_clock::now();
  LoadedModel model = load_model(o.model_path, nullptr, true);
  const double load_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  const LlamaConfig& c = model.config;
  const int n_ctx = o.ctx_size > 0 ? o.ctx_size : int(std::min<uint32_t>(c.n_ctx_train, 4096));
  if (o.ctx_size > 0 && uint32_t(o.ctx_size) > c.n_ctx_train)
    std::fprintf(stderr, "warning: context %d is longer than the model was trained for (%u)\n",
                 o.ctx_size, c.n_ctx_train);

  const std::vector<int32_t> prompt =
      model.tokenizer->encode(text, !o.no_bos && model.tokenizer->add_bos(), true);
  GenerationOptions gen;
  gen.n_predict = o.n_predict;
  gen.batch_size = o.batch_size;
  gen.sampler = {o.temperature, o.top_k, o.top_p,
                 o.seed >= 0 ? uint64_t(o.seed) : uint64_t(std::random_device{}())};
  check_fits_context(prompt.size(), gen.n_predict, n_ctx);

  ThreadPool pool(o.threads);
  NoSync sync;
  LlamaForward forward(model.config, model.weights, model.shard, n_ctx, pool, sync);
  std::fprintf(stderr,
               "model: %s | dim %u, %u layers, %u/%u heads, ffn %u, vocab %u | %.2f GB loaded in "
               "%.2f s\nrun: %d threads, %s kernels, context %d, seed %llu, temp %.2f\n",
               c.name.c_str(), c.dim, c.n_layers, c.n_heads, c.n_kv_heads, c.ffn_dim, c.n_vocab,
               model.weights.total_bytes() / 1e9, load_seconds, pool.size(), kernels().name, n_ctx,
               (unsigned long long)gen.sampler.seed, gen.sampler.temperature);

  const GenerationResult r = generate(forward, *model.tokenizer, prompt, gen, [](const std::string& s) {
    std::fwrite(s.data(), 1, s.size(), stdout);
    std::fflush(stdout);
  });
  std::printf("\n");
  std::fflush(stdout);
  std::fprintf(stderr, "prefill: %d tokens, %.2f tok/s\n", r.prefill_tokens,
               r.prefill_tokens / std::max(r.prefill_seconds, 1e-9));
  std::fprintf(stderr, "decode: %d tokens, %.2f tok/s\n", r.decode_tokens,
               r.decode_tokens / std::max(r.decode_seconds, 1e-9));
  std::fprintf(stderr, "generated: %zu tokens (stop: %s)\n", r.generated.size(), r.stop_reason.c_str());
  std::fprintf(stderr, "sha256: %s\n", token_ids_sha256(r.generated).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CliOptions o;
  CLI::App app{"r1pi: runs Llama-family GGUF models (DeepSeek-R1-Distill-Llama and kin)"};
  app.add_option("-m,--model", o.model_path, "GGUF model file")->required();
  auto* prompt = app.add_option("-p,--prompt", o.prompt, "prompt text");
  app.add_option("-f,--file", o.prompt_file, "read the prompt from a file")->excludes(prompt);
  app.add_option("-n,--n-predict", o.n_predict, "tokens to generate (-1: until end or full context)");
  app.add_option("--temp", o.temperature, "temperature (0: greedy)")->check(CLI::Range(0.0f, 100.0f));
  app.add_option("--top-k", o.top_k, "keep the k most likely tokens (0: all)")->check(CLI::NonNegativeNumber);
  app.add_option("--top-p", o.top_p, "nucleus sampling threshold (1: off)")->check(CLI::Range(0.0f, 1.0f));
  app.add_option("--seed", o.seed, "sampling seed (-1: random)");
  app.add_option("-t,--threads", o.threads, "compute threads (default: the cores available)")
      ->check(CLI::Range(1, 1024));
  app.add_option("-c,--ctx-size", o.ctx_size, "context size in tokens (default: min(trained, 4096))")
      ->check(CLI::Range(1, 1 << 24));
  app.add_option("-b,--batch-size", o.batch_size, "prompt tokens per prefill forward")
      ->check(CLI::Range(1, 4096));
  app.add_flag("--no-bos", o.no_bos, "do not prepend the BOS token");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    return run(o);
  } catch (const r1pi::Error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error: out of memory\n");
    return 1;
  }
}
