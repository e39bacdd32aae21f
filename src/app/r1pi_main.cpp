// r1pi: runs a GGUF model (llama.cpp's llama, qwen2, qwen3 and kin) and streams what it generates,
// on one rank or as one rank of an MPI job (mpirun -np N ./r1pi ...).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>

#include <csignal>
#include <filesystem>
#include <map>

#include "app/cli_constraint.h"
#include "app/llama_cpp_habits.h"
#include "app/common_options.h"
#include "app/run_job.h"
#include "app/version_text.h"
#include "build_info.h"
#include "chat/chat_repl.h"
#include "common/atomic_file.h"
#include "common/backslash_escapes.h"
#include "common/error.h"
#include "common/standard_output.h"
#include "common/whole_file.h"
#include "model/architecture.h"
#include "runtime/run_options.h"
#include "server/api_key.h"
#include "server/server.h"
#include "runtime/run_steps.h"

namespace {

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

// --spec-ngram MIN:MAX, 1 <= MIN <= MAX <= 16.
void parse_ngram_range(const std::string& text, r1pi::RunOptions& o) {
  const size_t colon = text.find(':');
  int lo = 0, hi = 0;
  const char* end = text.data() + text.size();
  const bool ok = colon != std::string::npos &&
                  std::from_chars(text.data(), text.data() + colon, lo).ptr == text.data() + colon &&
                  std::from_chars(text.data() + colon + 1, end, hi).ptr == end && colon > 0 &&
                  colon + 1 < text.size();
  if (!ok || lo < 1 || hi < lo || hi > 16)
    throw r1pi::Error("--spec-ngram " + text + ": give MIN:MAX with 1 <= MIN <= MAX <= 16");
  o.spec_min_ngram = lo;
  o.spec_max_ngram = hi;
}

// The checks CLI11's range validators cannot make (NaN passes every comparison), and the cap on
// threads: more threads than cores only slow every forward down.
void check_options(r1pi::RunOptions& o) {
  if (o.n_predict == 0 || o.n_predict < -1)
    throw r1pi::Error("-n/--n-predict " + std::to_string(o.n_predict) +
                      ": give -1 (until end-of-generation or a full context) or a positive count");
  if (o.sampler.top_k < 0)
    throw r1pi::Error("--top-k " + std::to_string(o.sampler.top_k) +
                      ": give 0 (the whole vocabulary) or a positive count");
  if (!std::isfinite(o.sampler.temperature)) throw r1pi::Error("--temp must be a number from 0 to 100");
  if (!std::isfinite(o.sampler.top_p)) throw r1pi::Error("--top-p must be a number from 0 to 1");
  if (!std::isfinite(o.sampler.min_p)) throw r1pi::Error("--min-p must be a number from 0 to 1");
  const r1pi::PenaltyParams& p = o.sampler.penalties;
  if (!std::isfinite(p.repeat) || p.repeat == 0.0f)
    throw r1pi::Error("--repeat-penalty must be a number above 0, at most 10 (1: off)");
  if (!std::isfinite(p.frequency)) throw r1pi::Error("--frequency-penalty must be a number from -2 to 2");
  if (!std::isfinite(p.presence)) throw r1pi::Error("--presence-penalty must be a number from -2 to 2");
  if (!std::isfinite(o.rank_timeout)) throw r1pi::Error("--rank-timeout must be a number of seconds");
  const int cores = int(std::thread::hardware_concurrency());
  if (cores > 0 && o.threads > cores) {
    std::fprintf(stderr, "warning: -t %d is more threads than the %d cores here; using %d\n", o.threads,
                 cores, cores);
    o.threads = cores;
  }
}

// --help shows each option's default, as llama.cpp's does; those whose default depends on the
// machine or the model say so in their text instead, and options without one show nothing.
void show_defaults(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    const std::string name = option->get_name();
    if (option->get_items_expected_min() == 0 || name == "--threads" || name == "--ctx-size") continue;
    option->capture_default_str();
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Every rank parses its own command line (rank 0's is the job's); MPI first, so that it can strip
  // its own arguments.
  r1pi::JobWorld world(&argc, &argv, r1pi::rank_timeout_before_mpi(argc, argv));
  const bool root = world.is_root();
  r1pi::RunOptions o;
  r1pi::ChatOptions chat;
  r1pi::ServeOptions serve;
  bool chat_mode = false, serve_mode = false;
  std::string api_key_file, reasoning_format = "deepseek", reasoning = "on";
  std::string prompt_file;
  bool escape = false;
  std::string grammar_text, grammar_path, schema_text, schema_path;
  std::string seed = "-1";
  std::string spec_ngram = "1:4";
  CLI::App app{"r1pi: runs GGUF models of these architectures: " + r1pi::architecture_names() +
                   " (DeepSeek-R1-Distill-Llama and -Qwen, Qwen2.5, Qwen3 and kin)",
               "r1pi"};
  // Computed only when asked: it picks the kernels, which R1PI_BACKEND may name wrongly (an error
  // the run reports in its place, after start-up's agreement between ranks).
  app.set_version_flag("--version", [] { return r1pi::version_text("r1pi"); });
  app.footer("llama.cpp's spellings: -cnv = --chat, -sys = --system, -ctk = --kv-type, -s = --seed, -np = --parallel;\n"
             "its -ngl, -fa, --mlock, --no-mmap and --jinja are accepted and ignored, with a note; -hf: r1pi-model pull.\n"
             "Docs: docs/cli.md");
  app.add_option("-m,--model", o.model_path, "GGUF model file")->required();
  auto* prompt = app.add_option("-p,--prompt", o.prompt, "prompt text");
  app.add_option("-f,--file", prompt_file, "read the prompt from a file")->excludes(prompt);
  app.add_option("-n,--n-predict", o.n_predict, "tokens to generate (-1: until end or full context)");
  app.add_option("--temp", o.sampler.temperature, "temperature (0: greedy)")->check(CLI::Range(0.0f, 100.0f));
  // Checked in check_options: CLI::NonNegativeNumber's message printed the largest double, 309 digits.
  app.add_option("--top-k", o.sampler.top_k, "keep the k most likely tokens (0: all)");
  app.add_option("--top-p", o.sampler.top_p, "nucleus sampling threshold (1: off)")
      ->check(CLI::Range(0.0f, 1.0f));
  app.add_option("--min-p", o.sampler.min_p, "keep tokens at least this share of the top one's probability (0: off)")
      ->check(CLI::Range(0.0f, 1.0f));
  auto* penalties = "repetition penalties (llama.cpp's; on the last --repeat-last-n tokens, prompt included)";
  app.add_option("--repeat-penalty", o.sampler.penalties.repeat, "divide a repeated token's logit by this (1: off)")
      ->check(CLI::Range(0.0f, 10.0f))->group(penalties);
  app.add_option("--repeat-last-n", o.sampler.penalties.last_n, "the tokens the penalties look at (0: off, -1: all)")
      ->check(CLI::Range(-1, 1 << 24))->group(penalties);
  app.add_option("--frequency-penalty", o.sampler.penalties.frequency,
                 "lower a token's logit by this per occurrence (0: off)")
      ->check(CLI::Range(-2.0f, 2.0f))->group(penalties);
  app.add_option("--presence-penalty", o.sampler.penalties.presence, "lower a token's logit by this if it occurs (0: off)")
      ->check(CLI::Range(-2.0f, 2.0f))->group(penalties);
  app.add_option("--seed", seed, "sampling seed, 0 to 2^64-1 (-1: random)");
  app.add_option("-t,--threads", o.threads, "compute threads per rank (default: the cores available)")
      ->check(CLI::Range(1, 1024));
  app.add_option("-c,--ctx-size", o.ctx_size, "context size in tokens (default: min(trained, 4096))")
      ->check(CLI::Range(1, 1 << 24));
  app.add_option("-b,--batch-size", o.batch_size, "prompt tokens per prefill forward")
      ->check(CLI::Range(1, 4096));
  app.add_flag("--no-bos", o.no_bos, "do not prepend the BOS token");
  app.add_flag("--ignore-eos", o.ignore_eos, "generate past end-of-generation tokens");
  app.add_option("-r,--reverse-prompt", o.stop, "stop generating where this text appears (-p, --chat; repeatable)")
      ->allow_extra_args(false);
  app.add_flag("-e,--escape,!--no-escape", escape, "read \\n, \\t, \\xHH and the like in -p and -r as the characters");
  auto* constrained = "constrained output (llama.cpp's GBNF; JSON Schema as OpenAI's structured outputs)";
  auto* grammar = app.add_option("--grammar", grammar_text, "the answer must match this GBNF grammar")->group(constrained);
  auto* grammar_file = app.add_option("--grammar-file", grammar_path, "... read from a file")->excludes(grammar)->group(constrained);
  auto* schema = app.add_option("--json-schema", schema_text, "the answer must be JSON valid against this schema")
                     ->excludes(grammar)->excludes(grammar_file)->group(constrained);
  app.add_option("--json-schema-file", schema_path, "... read from a file")
      ->excludes(schema)->excludes(grammar)->excludes(grammar_file)->group(constrained);
  auto* spec = "speculative decoding (rank 0 drafts from the history; the output is the same)";
  app.add_flag("--spec,!--no-spec", o.spec, "speculative decoding on or off (default)")->group(spec);
  app.add_option("--spec-max", o.spec_max, "the longest draft in tokens")->check(CLI::Range(1, 63))->group(spec);
  app.add_option("--spec-ngram", spec_ngram, "n-gram lengths MIN:MAX the drafter matches")->group(spec);
  app.add_option("--spec-cost", o.spec_cost, "cost curve file ('B cost' lines) instead of measuring")
      ->group(spec);
  r1pi::add_kv_type_option(app, o);
  r1pi::add_rank_options(app, o);
  auto* mpi = "multi-rank (mpirun) options";
  app.add_option("--shard-weights", o.shard_weights,
                 "each rank's share of every split, e.g. 2,1,1 (mixed boards), or auto: each rank's read bandwidth")
      ->group(mpi);
  // --timings alone prints a line per forward; --timings FILE.csv writes the rows there instead.
  auto* timings = app.add_option("--timings", o.timings_csv,
                                 "per-forward Pred/Sync times and bytes (rank 0), to FILE.csv if given")
                      ->expected(0, 1)->type_name("[FILE.csv]")->group(mpi);
  app.add_flag("--timings-all", o.timings_all, "per-token times from every rank")->group(mpi);
  auto* session = "chat and server (rank 0 talks; the other ranks follow)";
  auto* chat_flag = app.add_flag("--chat", chat_mode, "an interactive chat in the terminal (also -cnv)")->group(session);
  app.add_flag("--serve", serve_mode, "an OpenAI-compatible HTTP server with a chat page at /")
      ->excludes(chat_flag)->group(session);
  app.add_option("--chat-template", chat.template_name,
                 r1pi::chat_template_names() + " (default: the model's tokenizer.chat_template)")->group(session);
  app.add_option("--chat-template-file", chat.template_file,
                 "a Jinja chat template to render instead of the model's own")->excludes("--chat-template")->group(session);
  app.add_option("--system", chat.system, "the chat's system message")->group(session);
  app.add_flag("--hide-think", chat.hide_think, "the chat does not show the reasoning")->group(session);
  app.add_option("--reasoning", reasoning,
                 "off: the template's enable_thinking=false (Qwen3 answers without thinking); the server's default")
      ->check(CLI::IsMember({"on", "off"}))->capture_default_str()->group(session);
  app.add_option("--reasoning-effort", chat.reasoning_effort,
                 "low, medium or high: the template's reasoning_effort (gpt-oss's reasoning level); the server's "
                 "default")
      ->check(CLI::IsMember({"low", "medium", "high"}))->group(session);
  app.add_option("--host", serve.host, "address the server listens on")->capture_default_str()->group(session);
  app.add_option("--port", serve.port, "port the server listens on (0: any free one)")
      ->check(CLI::Range(0, 65535))->capture_default_str()->group(session);
  auto* key_option = app.add_option("--api-key", serve.api_key, "requests must carry Authorization: Bearer KEY")->group(session);
  app.add_option("--api-key-file", api_key_file, "read the API key from a file")->excludes(key_option)->group(session);
  app.add_option("--reasoning-format", reasoning_format,
                 "deepseek: the reasoning (R1's, Qwen3's) in reasoning_content; none: all text in content")
      ->check(CLI::IsMember({"deepseek", "none"}))->capture_default_str()->group(session);
  app.add_option("--parallel", o.parallel,
                 "requests generated at once, batched together (-c positions each; mpirun's is -np)")
      ->check(CLI::Range(1, 256))->capture_default_str()->group(session);
  app.add_option("--parallel-chunk", serve.parallel_chunk,
                 "with --parallel: a prompt's tokens per forward while other requests decode (their pause)")
      ->check(CLI::Range(1, 4096))->capture_default_str()->group(session);
  app.add_option("--cache-scope", serve.cache_scope,
                 "user: requests share prompt-cache prefixes only with the same `user` field; shared: all")
      ->transform(CLI::CheckedTransformer(std::map<std::string, r1pi::CacheScope>{
          {"user", r1pi::CacheScope::User}, {"shared", r1pi::CacheScope::Shared}}))
      ->group(session);
  app.add_option("--queue-size", serve.queue_size, "requests waiting or running before 503")
      ->check(CLI::Range(1, 4096))->capture_default_str()->group(session);
  app.add_option("--max-connections-per-address", serve.max_connections_per_address,
                 "open connections from one client address before 503 (behind a proxy: raise it)")
      ->check(CLI::Range(1, 1 << 20))->capture_default_str()->group(session);
  show_defaults(app);
  // Nothing may end a rank before the first collective: the others would wait for it forever.
  // Failures are collected here, and the ranks agree on them (start_job).
  std::string error;
  bool help = false;
  try {
    r1pi::HabitArgs habits = r1pi::llama_cpp_habits(app, argc, argv);
    if (root)
      for (const std::string& note : habits.notes) std::fprintf(stderr, "%s\n", note.c_str());
    app.parse(habits.args);
    o.timings = timings->count() > 0 && o.timings_csv.empty();
    if (!o.timings_csv.empty() && root)
      r1pi::refuse_output_over_input(o.timings_csv, {o.model_path, prompt_file, o.spec_cost, api_key_file});
    // Only what was typed: -f's text is the file's bytes as they are.
    if (escape) {
      o.prompt = r1pi::backslash_escapes(o.prompt);
      for (std::string& text : o.stop) text = r1pi::backslash_escapes(text);
    }
    // Only rank 0 tokenises the prompt: the prompt file need not exist on the other boards.
    if (!prompt_file.empty() && root) o.prompt = r1pi::read_whole_file(prompt_file, "prompt file");
    // Rank 0's seed is the one used: only rank 0 samples.
    o.sampler.seed = parse_seed(seed);
    parse_ngram_range(spec_ngram, o);
    o.constraint = r1pi::cli_constraint(grammar_path.empty() ? grammar_text : r1pi::read_whole_file(grammar_path, "--grammar-file"),
                                        schema_path.empty() ? schema_text : r1pi::read_whole_file(schema_path, "--json-schema-file"));
    check_options(o);
    o.session = chat_mode || serve_mode;
    if (o.session && (!o.prompt.empty() || !prompt_file.empty()))
      throw r1pi::Error("--chat and --serve take no -p/-f: the prompts come from the terminal or the requests");
    if (std::find(o.stop.begin(), o.stop.end(), "") != o.stop.end())
      throw r1pi::Error("-r/--reverse-prompt \"\": give the text generation stops at");
    if (serve_mode && !o.stop.empty())
      throw r1pi::Error("-r/--reverse-prompt is for -p and --chat: a server's requests give their own \"stop\"");
    if (o.parallel > 1 && !serve_mode)
      throw r1pi::Error("--parallel " + std::to_string(o.parallel) + " serves several requests at once: it needs --serve");
    if (!api_key_file.empty() && root) serve.api_key = r1pi::read_api_key_file(api_key_file);
    // --api-key "$UNSET" would start a server that asks for no key.
    if (app.count("--api-key") > 0 && serve.api_key.empty())
      throw r1pi::Error("--api-key is empty (an unset variable?): give the key, or leave the option out");
    if (!chat.template_name.empty() && !r1pi::chat_template_named(chat.template_name))
      throw r1pi::Error("--chat-template " + chat.template_name + ": give one of " + r1pi::chat_template_names());
  } catch (const CLI::ParseError& e) {
    help = e.get_exit_code() == 0;  // --help: CLI11 reports it as a "parse error" that exits 0
    if (help && root) app.exit(e);
    if (!help) error = std::string(e.what()) + " (r1pi --help lists the options)";
  } catch (const r1pi::Error& e) {
    error = e.what();
  }
  chat.temperature_given = app.count("--temp") > 0;
  chat.top_p_given = app.count("--top-p") > 0;
  chat.stop = o.stop;
  serve.split_reasoning = reasoning_format == "deepseek";
  chat.reasoning = reasoning == "on";
  serve.model_name = std::filesystem::path(o.model_path).stem().string();
  serve.model_path = o.model_path;  // /props
  serve.build_info = R1PI_COMMIT;
  const r1pi::Session run_session = [&](r1pi::TokenSource& source, const r1pi::LoadedModel& model, int,
                                        const r1pi::GenerationOptions& defaults) {
    chat.generation = defaults;  // -n, -b, the sampler and --spec, for every turn and request
    serve.chat = chat;
    return serve_mode ? r1pi::run_server(source, *model.tokenizer, serve)
                      : r1pi::run_chat(source, *model.tokenizer, chat);
  };
  // The other ranks end when rank 0 tells them (mpirun passes Ctrl-C and SIGTERM to every rank:
  // rank 0 then finishes the token or answer in hand, prints its summary and stops them).
  if (!root) {
    std::signal(SIGINT, SIG_IGN);
    std::signal(SIGTERM, SIG_IGN);
  }
  return r1pi::exit_status_after_stdout(r1pi::run_job(world, o, error, help, run_session));
}
