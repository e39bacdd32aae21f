// The single-rank engine end to end on a generated tiny model: the sha256 of greedy output must not
// depend on the batch size, the thread count or the run; the CLI prints its summary and refuses bad
// input with a clear message and exit status 1.
#include <gtest/gtest.h>

#include <map>

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include "common/backslash_escapes.h"
#include "common/error.h"
#include "common/token_hash.h"
#include "ggml/fp16.h"
#include "ggml/quant_blocks.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "layers/model_forward.h"
#include "model/model_loader.h"
#include "runtime/generator.h"
#include "sampling/sampler.h"
#include "common/thread_pool.h"
#include "test_support.h"
#include "tools/model_maker.h"

namespace r1pi {
namespace {

struct GreedyRun {
  std::vector<int32_t> ids;
  std::string sha;
};

// Q4_K_M's mix: Q4_K matrices, Q6_K output.
// The tiny preset as llama-quantize's mixes lay it out: Q4_K or Q5_K, and Q6_K in layers 2 and 3's
// attn_v and ffn_down and the output.
const LoadedModel& tiny_mix(const char* mix) {
  static std::map<std::string, LoadedModel> models;
  auto it = models.find(mix);
  if (it == models.end())
    it = models.emplace(mix, load_model(test::make_model_file(std::string("generation-") + mix,
                                                              {.preset = "tiny", .seed = 7, .mix = quant_mix_named(mix)})))
             .first;
  return it->second;
}

GreedyRun greedy_run_on(const LoadedModel& m, int threads, int batch_size, int n_predict = 24,
                        float temperature = 0.0f, uint64_t seed = 0, GgmlType kv_type = GgmlType::F32) {
  ThreadPool pool(threads);
  NoSync sync;
  ModelForward forward(m.config, m.weights, m.shard, 256, pool, sync, kv_type);
  GenerationOptions o;
  o.n_predict = n_predict;
  o.batch_size = batch_size;
  o.sampler = {temperature, 40, 0.95f, seed};
  const std::vector<int32_t> prompt =
      m.tokenizer->encode("Once upon a time, in a land far away, there lived", true, true);
  LocalTokenSource source(forward);
  GenerationResult r = generate(source, *m.tokenizer, prompt, o, {});
  return {r.generated, token_ids_sha256(r.generated)};
}

GreedyRun greedy_run(int threads, int batch_size, int n_predict = 24, float temperature = 0.0f,
                     uint64_t seed = 0, GgmlType kv_type = GgmlType::F32) {
  return greedy_run_on(test::tiny_model(), threads, batch_size, n_predict, temperature, seed, kv_type);
}

TEST(Generation, ShaIndependentOfBatchSize) {
  const GreedyRun one = greedy_run(1, 1);
  EXPECT_EQ(one.ids.size(), 24u);
  for (int batch : {2, 5, 64}) EXPECT_EQ(greedy_run(1, batch).sha, one.sha) << "batch " << batch;
}

TEST(Generation, ShaIndependentOfThreadCount) {
  const GreedyRun one = greedy_run(1, 64);
  for (int threads : {2, 3, 4}) EXPECT_EQ(greedy_run(threads, 64).sha, one.sha) << threads;
}

// The smaller caches have their own hashes, as stable as F32's.
TEST(Generation, KvCacheTypesShaIndependentOfThreadsAndBatch) {
  for (GgmlType type : {GgmlType::F16, GgmlType::Q8_0}) {
    const GreedyRun one = greedy_run(1, 1, 24, 0.0f, 0, type);
    EXPECT_EQ(one.ids.size(), 24u);
    for (auto [threads, batch] : {std::pair{1, 5}, {2, 64}, {3, 2}, {4, 64}})
      EXPECT_EQ(greedy_run(threads, batch, 24, 0.0f, 0, type).sha, one.sha)
          << ggml_type_name(type) << " threads " << threads << " batch " << batch;
  }
}

// The same on K-quant mixes (the scalar kernels or a backend's own, through for_type).
TEST(Generation, KQuantMixShaIndependentOfThreadsAndBatch) {
  for (const char* mix : {"q4_k_m", "q5_k_m"}) {
    const GreedyRun one = greedy_run_on(tiny_mix(mix), 1, 1);
    EXPECT_EQ(one.ids.size(), 24u);
    for (auto [threads, batch] : {std::pair{1, 5}, {2, 1}, {2, 64}, {3, 2}})
      EXPECT_EQ(greedy_run_on(tiny_mix(mix), threads, batch).sha, one.sha)
          << mix << " threads " << threads << " batch " << batch;
  }
}

TEST(Generation, RepeatedRunsAgree) {
  EXPECT_EQ(greedy_run(2, 16).sha, greedy_run(2, 16).sha);
}

TEST(Generation, SamplingRepeatsForASeed) {
  const GreedyRun a = greedy_run(2, 16, 24, 0.9f, 1234);
  EXPECT_EQ(a.sha, greedy_run(1, 3, 24, 0.9f, 1234).sha);
}

// min-p keeps the candidates whose probability at the temperature is at least min_p times the
// top one's: logits 0, -1, -3 at temperature 1 are 1, e^-1 = 0.37 and e^-3 = 0.05 of the top one.
TEST(Sampling, MinPKeepsAShareOfTheTopToken) {
  const std::vector<Candidate> candidates = {{0.0f, 7}, {-1.0f, 8}, {-3.0f, 9}};
  auto picked = [&](float min_p) {
    const Sampler sampler(SamplerParams{1.0f, 0, 1.0f, 42, min_p});
    std::set<int32_t> seen;
    for (int position = 0; position < 2000; ++position) seen.insert(sampler.sample_from(candidates, position));
    return seen;
  };
  EXPECT_EQ(picked(0.0f), (std::set<int32_t>{7, 8, 9}));
  EXPECT_EQ(picked(0.04f), (std::set<int32_t>{7, 8, 9}));
  EXPECT_EQ(picked(0.1f), (std::set<int32_t>{7, 8}));
  EXPECT_EQ(picked(0.5f), (std::set<int32_t>{7}));
  EXPECT_EQ(picked(1.0f), (std::set<int32_t>{7}));
}

TEST(Generation, PrefillLogitsEqualTokenByTokenBytes) {
  const LoadedModel& m = test::tiny_model();
  ThreadPool pool(2);
  NoSync sync;
  const std::vector<int32_t> tokens = m.tokenizer->encode("The quick brown fox jumps", true, false);
  ModelForward batched(m.config, m.weights, m.shard, 64, pool, sync);
  const std::vector<float> all = batched.forward(Batch::run(tokens.data(), int(tokens.size()), 0, LogitsFor::All));
  ModelForward single(m.config, m.weights, m.shard, 64, pool, sync);
  const size_t V = m.shard.vocab.size();
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::vector<float>& one = single.forward(Batch::run(&tokens[i], 1, int(i), LogitsFor::Last));
    ASSERT_EQ(one.size(), V);
    EXPECT_EQ(std::memcmp(one.data(), all.data() + i * V, V * sizeof(float)), 0) << "position " << i;
  }
}

TEST(Generation, ForwardRefusesBadTokensAndOverflow) {
  const LoadedModel& m = test::tiny_model();
  ThreadPool pool(1);
  NoSync sync;
  ModelForward f(m.config, m.weights, m.shard, 8, pool, sync);
  const int32_t bad = int32_t(m.config.n_vocab);
  EXPECT_THROW(f.forward(Batch::run(&bad, 1, 0, LogitsFor::Last)), Error);
  const std::vector<int32_t> nine(9, 1);
  EXPECT_THROW(f.forward(Batch::run(nine.data(), 9, 0, LogitsFor::Last)), Error);
  const int32_t ok = 1;
  EXPECT_THROW(f.forward(Batch::run(&ok, 1, 8, LogitsFor::Last)), Error);
}

TEST(Generation, ContextChecks) {
  EXPECT_THROW(check_fits_context(0, 10, 100), Error);
  EXPECT_THROW(check_fits_context(100, 10, 100), Error);
  EXPECT_THROW(check_fits_context(50, 60, 100), Error);
  EXPECT_NO_THROW(check_fits_context(50, 50, 100));
  EXPECT_NO_THROW(check_fits_context(99, -1, 100));
}

// A context past the machine's memory used to end in "out of memory" (or the OOM killer, once the
// cache was zeroed): the message says how big the cache would be and names -c. 1000 layers x 64
// heads x 128 x 2^24 positions is about 1.1e18 bytes, past any machine: refused before allocating.
TEST(Generation, KvCacheBeyondMemoryNamesItsSizeAndTheContextFlag) {
  const std::string e = test::error_of([] { KvCache(1000, 1 << 24, 64, 128, GgmlType::F16); });
  EXPECT_NE(e.find("the KV cache for a context of 16777216 tokens would take 549755.8 GB (F16 keys and "
                   "values, 1000 layers x 64 KV heads x 128), more than the "),
            std::string::npos) << e;
  EXPECT_NE(e.find(": lower -c/--ctx-size or use a smaller --kv-type (f16, q8_0)"), std::string::npos) << e;
}

// A copy of the tiny model with one metadata value replaced (or added).
std::string tiny_model_with(const std::string& name, const std::string& key, const GgufValue& value) {
  const GgufFile tiny = GgufFile::open(test::tiny_model_file());
  GgufWriter w;
  bool replaced = false;
  for (const auto& [k, v] : tiny.metadata()) {
    if (k == "general.alignment") continue;  // the writer adds its own
    w.add(k, k == key ? value : v);
    replaced |= k == key;
  }
  if (!replaced) w.add(key, value);
  for (const GgufTensorInfo& t : tiny.tensors()) w.add_tensor(t.name, t.ne, t.type);
  const std::string path = test::scratch_dir("gen-" + name) + "/" + name + ".gguf";
  w.open(path);
  for (const GgufTensorInfo& t : tiny.tensors()) w.write_data(tiny.tensor_data(t), t.n_bytes);
  w.close();
  return path;
}

// llama.cpp refuses a file with tensors it does not use; r1pi used to run the first 2 of 4 layers.
TEST(Generation, BlockCountBelowTheFileLayersIsRefused) {
  const std::string path = tiny_model_with("blocks", "llama.block_count", GgufValue::u32(2));
  const std::string e = test::error_of([&] { load_model(path); });
  EXPECT_NE(e.find("blocks.gguf: llama.block_count is 2, but the file holds tensors of 4 layers (blk.0 to "
                   "blk.3): refused rather than run on the first 2 only"),
            std::string::npos) << e;
}

// ---- the r1pi program ----

std::string r1pi() { return test::bin_dir() + "/r1pi"; }

TEST(Cli, PrintsSummaryAndTheSameShaAsTheLibrary) {
  const test::CommandResult r = test::run_command(
      r1pi() + " -m " + test::tiny_model_file() +
      " -p 'Once upon a time, in a land far away, there lived' -n 24 --temp 0 -t 2 -c 256");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(\nprefill: \d+ tokens, [0-9.]+ tok/s)")))
      << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(\ndecode: \d+ tokens, [0-9.]+ tok/s)")));
  std::smatch sha;
  ASSERT_TRUE(std::regex_search(r.output, sha, std::regex(R"(\nsha256: ([0-9a-f]{64})\n)")));
  EXPECT_EQ(sha[1].str(), greedy_run(1, 64).sha);
}

void expect_error(const std::string& args, const std::string& message_part) {
  const test::CommandResult r = test::run_command(r1pi() + " " + args);
  EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.output;
  EXPECT_NE(r.output.find("error: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(message_part), std::string::npos) << "wanted '" << message_part << "' in\n"
                                                           << r.output;
}

TEST(Cli, MissingModelFile) { expect_error("-m /nonexistent/model.gguf -p hi", "/nonexistent/model.gguf"); }

TEST(Cli, EmptyPrompt) { expect_error("-m " + test::tiny_model_file() + " -p ''", "empty prompt"); }

TEST(Cli, MissingPromptFile) {
  expect_error("-m " + test::tiny_model_file() + " -f /nonexistent/prompt.txt", "/nonexistent/prompt.txt");
}

TEST(Cli, PromptDoesNotFitContext) {
  expect_error("-m " + test::tiny_model_file() + " -c 8 -p 'a prompt that is much longer than eight tokens'",
               "does not fit the context");
}

TEST(Cli, GenerationOverflowsContext) {
  expect_error("-m " + test::tiny_model_file() + " -c 32 -n 100 -p 'hello'", "context overflow");
}

TEST(Cli, NotAGgufFile) {
  const std::string path = test::scratch_dir("cli-bad") + "/not.gguf";
  std::ofstream(path) << "this is not a model";
  expect_error("-m " + path + " -p hi", path);
}

// A minimal GGUF v3 file by hand: one metadata string and one tensor of the given type.
std::string write_small_gguf(const std::string& name, const std::string& arch, uint32_t type) {
  std::string b = "GGUF";
  auto u32 = [&](uint32_t v) { b.append(reinterpret_cast<const char*>(&v), 4); };
  auto u64 = [&](uint64_t v) { b.append(reinterpret_cast<const char*>(&v), 8); };
  auto str = [&](const std::string& s) { u64(s.size()); b += s; };
  u32(3);
  u64(1);  // tensors
  u64(1);  // metadata
  str("general.architecture");
  u32(8);
  str(arch);
  str("x.weight");
  u32(1);
  u64(256);
  u32(type);
  u64(0);
  b.resize((b.size() + 31) / 32 * 32, '\0');
  b.append(1024, '\0');
  const std::string path = test::scratch_dir("cli-" + name) + "/" + name + ".gguf";
  std::ofstream(path, std::ios::binary) << b;
  return path;
}

TEST(Cli, UnknownArchitecture) {
  expect_error("-m " + write_small_gguf("arch", "falcon", 0) + " -p hi", "falcon");
}

TEST(Cli, UnsupportedTensorType) {
  expect_error("-m " + write_small_gguf("type", "llama", 16) + " -p hi", "unsupported type 16 (IQ2_XXS)");
}

// Sets the fp16 scale of the first block of a tensor (row 0) to NaN in a copy of the tiny model.
std::string model_with_nan_scale(const std::string& name, const std::string& tensor, size_t scale_offset) {
  const std::string path = test::make_model_file(name, {.preset = "tiny", .seed = 7});
  uint64_t offset = 0;
  {
    const GgufFile file = GgufFile::open(path);
    offset = file.data_offset() + file.find_tensor(tensor)->offset + scale_offset;
  }
  const uint16_t fp16_nan = 0x7e00;
  std::fstream(path, std::ios::in | std::ios::out | std::ios::binary).seekp(std::streamoff(offset))
      .write(reinterpret_cast<const char*>(&fp16_nan), sizeof fp16_nan);
  return path;
}

// NaN weights used to go unnoticed: greedy printed token 0 for ever (NaN logits) or noise (NaN in
// a layer, rounded away by the next Q8_0 quantisation), and exited 0.
TEST(Cli, NanWeightsAreFound) {
  expect_error("-m " + model_with_nan_scale("cli-nan-out", "output.weight", offsetof(block_q6_K, d)) +
                   " -p hi -n 4 --temp 0 -t 1",
               "error: a logit (of rows 0..511) at position 2 is NaN: the model's weights hold NaN");
  expect_error("-m " + model_with_nan_scale("cli-nan-w2", "blk.1.ffn_down.weight", offsetof(block_q4_0, d)) +
                   " -p hi -n 4 --temp 0 -t 1",
               "error: the FFN output (w2) of layer 1 at position 0 is NaN");
}

// Where a tensor's bytes lie in a model file (its offset from the file's start, its size).
GgufTensorInfo tensor_in_file(const std::string& path, const std::string& name) {
  const GgufFile file = GgufFile::open(path);
  GgufTensorInfo info = *file.find_tensor(name);
  info.offset += file.data_offset();
  return info;
}

// Every attn_norm weight at 1e7 puts layer 0's attention input past Q8_0's fp16 scale: it used to be
// quantised with an inf scale, the attention's products were lost and the run exited 0.
TEST(Cli, ActivationsPastQ8_0AreFound) {
  const std::string path = test::make_model_file("cli-huge-norm", {.preset = "tiny", .seed = 7});
  const GgufTensorInfo norm = tensor_in_file(path, "blk.0.attn_norm.weight");
  const uint64_t offset = norm.offset, bytes = norm.n_bytes;
  const std::vector<float> huge(bytes / sizeof(float), 1e7f);
  std::fstream(path, std::ios::in | std::ios::out | std::ios::binary).seekp(std::streamoff(offset))
      .write(reinterpret_cast<const char*>(huge.data()), std::streamsize(bytes));
  expect_error("-m " + path + " -p hi -n 2 --temp 0 -t 1",
               "error: layer 0: the attention input (attn_norm's output) holds ");
  expect_error("-m " + path + " -p hi -n 2 --temp 0 -t 1",
               ", past the largest value a Q8_0 activation holds (127 x 65504, about 8.3e6) at position 0");
}

// The same for a key past an f16 KV cache's 65504 (layer 0's attn_k scales at 60000): it was stored
// as inf, and the attention's NaN blamed on NaN weights. An f32 cache holds it.
TEST(Cli, KeysPastTheKvCacheTypeAreFound) {
  const std::string path = test::make_model_file("cli-huge-keys", {.preset = "tiny", .seed = 7});
  const GgufTensorInfo wk = tensor_in_file(path, "blk.0.attn_k.weight");
  ASSERT_EQ(wk.type, GgmlType::Q4_0);
  const uint64_t offset = wk.offset, blocks = wk.n_bytes / sizeof(block_q4_0);
  const uint16_t scale = fp32_to_fp16(60000.0f);
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  for (uint64_t b = 0; b < blocks; ++b)
    f.seekp(std::streamoff(offset + b * sizeof(block_q4_0) + offsetof(block_q4_0, d)))
        .write(reinterpret_cast<const char*>(&scale), sizeof scale);
  f.close();
  expect_error("-m " + path + " -p hi -n 2 --temp 0 -t 1 --kv-type f16",
               ", past the largest value an f16 KV cache holds (65504): the model's weights are far out of range "
               "(--kv-type f32 holds it)");
  expect_error("-m " + path + " -p hi -n 2 --temp 0 -t 1 --kv-type f16", "error: layer 0: a key at position 0 holds ");
}

// Strings from the file reach the terminal escaped: an escape sequence in general.name (the banner)
// or the architecture (an error) could retitle the window or clear the screen; invalid UTF-8 too.
TEST(Cli, StringsFromTheFileArePrintedEscaped) {
  const std::string named = tiny_model_with("escaped-name", "general.name", GgufValue::string("a\x1b]0;owned\x07" "b\xff\xc2\x9b"));
  const test::CommandResult r = test::run_command(r1pi() + " -m " + named + " -p hi -n 1 -t 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("model: a\\x1b]0;owned\\x07b\\xff\\xc2\\x9b |"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find('\x1b'), std::string::npos);
  const test::CommandResult e =
      test::run_command(r1pi() + " -m " + write_small_gguf("escaped-arch", "\x1b[2J\xfe", 0) + " -p hi");
  EXPECT_EQ(e.exit_code, 1) << e.output;
  EXPECT_NE(e.output.find("unknown architecture '\\x1b[2J\\xfe'"), std::string::npos) << e.output;
  EXPECT_EQ(e.output.find('\x1b'), std::string::npos);
}

// CLI11's range check printed the largest double in full (309 digits).
TEST(Cli, NegativeTopKIsRefusedReadably) {
  const test::CommandResult r = test::run_command(r1pi() + " -m " + test::tiny_model_file() + " -p hi --top-k -1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output, "error: --top-k -1: give 0 (the whole vocabulary) or a positive count\n");
}

// The rows used to be lost in the stdio buffer at exit, with status 0.
TEST(Cli, TimingsThatCannotBeWrittenAreAnError) {
  expect_error("-m " + test::tiny_model_file() + " -p hi -n 2 -t 1 --timings /dev/full",
               "error: /dev/full: cannot write the timings file: No space left on device");
  expect_error("-m " + test::tiny_model_file() + " -p hi -n 2 -t 1 --timings " + test::scratch_dir("cli-timings-dir"),
               "cannot write the timings file: Is a directory");
}

// /dev/zero used to be read for ever (and a FIFO blocked): regular files only, of a bounded size.
TEST(Cli, SpecCostIsASmallRegularFile) {
  const std::string run = "timeout -s KILL 60 " + r1pi() + " -m " +
      test::tiny_model_file() + " -p hi -n 2 -t 1 --spec --spec-cost ";
  const test::CommandResult zero = test::run_command(run + "/dev/zero");
  EXPECT_EQ(zero.exit_code, 1) << zero.output;
  EXPECT_NE(zero.output.find("error: /dev/zero: the cost curve is not a regular file"), std::string::npos)
      << zero.output;
  const std::string big = test::scratch_dir("cli-spec-cost") + "/big.txt";
  std::ofstream(big).close();
  std::filesystem::resize_file(big, 2 << 20);  // sparse: no 2 MB written
  const test::CommandResult large = test::run_command(run + big);
  EXPECT_EQ(large.exit_code, 1) << large.output;
  EXPECT_NE(large.output.find(big + ": 2097152 bytes is too large for a cost curve file (at most 1048576)"),
            std::string::npos) << large.output;
}

// Command-line errors follow the one convention: "error: ..." and status 1 (not CLI11's 104-109).
TEST(Cli, BadFlagIsRefused) {
  expect_error("-m x.gguf -p hi --threads 0", "--threads");
  expect_error("-m x.gguf -p hi --no-such-flag", "--no-such-flag");
}

// Bounded: without O_NONBLOCK open(2) on a FIFO waits for a writer forever.
TEST(Cli, FifoModelIsRefused) {
  const std::string fifo = test::scratch_dir("cli-fifo") + "/model.gguf";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const test::CommandResult r =
      test::run_command("timeout -s KILL 60 " + r1pi() + " -m " + fifo + " -p hi");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("error: " + fifo + ": not a regular file"), std::string::npos) << r.output;
}

TEST(Cli, PromptFileThatIsADirectoryIsRefused) {
  expect_error("-m " + test::tiny_model_file() + " -f " + test::scratch_dir("cli-dir"), "not a regular file");
}

TEST(Cli, GenerationCountMustBePositiveOrMinusOne) {
  expect_error("-m " + test::tiny_model_file() + " -p hi -n 0", "-n/--n-predict 0");
  expect_error("-m " + test::tiny_model_file() + " -p hi -n -5", "-n/--n-predict -5");
}

TEST(Cli, NanSamplingParametersAreRefused) {
  expect_error("-m " + test::tiny_model_file() + " -p hi --temp nan", "--temp");
  expect_error("-m " + test::tiny_model_file() + " -p hi --top-p nan", "--top-p");
  expect_error("-m " + test::tiny_model_file() + " -p hi --min-p nan", "--min-p");
  expect_error("-m " + test::tiny_model_file() + " -p hi --min-p 1.5", "--min-p");
}

TEST(Cli, SeedTakesEvery64BitValueAndNothingElse) {
  const test::CommandResult r = test::run_command(
      r1pi() + " -m " + test::tiny_model_file() + " -p hi -n 2 -t 1 --seed 18446744073709551615");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("seed 18446744073709551615,"), std::string::npos) << r.output;
  expect_error("-m " + test::tiny_model_file() + " -p hi --seed 18446744073709551616", "--seed");
  expect_error("-m " + test::tiny_model_file() + " -p hi --seed -2", "--seed");
}

// ---- llama.cpp's habits (issue 34) ----

std::string sha256_line(const std::string& output) {
  const size_t at = output.find("sha256: ");
  return at == std::string::npos ? "" : output.substr(at, 72);
}

// -ngl 99 used to be read as "-n gl" and -fa as "-f a": llama.cpp's flags that mean nothing here
// run with a note each and change nothing.
TEST(Cli, LlamaCppFlagsRunWithANote) {
  const std::string run = r1pi() + " -m " + test::tiny_model_file() + " -p hi -n 4 -t 1 --temp 0";
  const test::CommandResult plain = test::run_command(run);
  const test::CommandResult habits = test::run_command(run + " -ngl 99 -fa on --mlock --no-mmap --n-gpu-layers=8");
  ASSERT_EQ(habits.exit_code, 0) << habits.output;
  for (const char* note : {"note: -ngl 99 ignored: llama.cpp's GPU offload", "note: -fa on ignored",
                           "note: --mlock ignored", "note: --no-mmap ignored", "note: --n-gpu-layers=8 ignored"})
    EXPECT_NE(habits.output.find(note), std::string::npos) << note << "\n" << habits.output;
  EXPECT_EQ(sha256_line(habits.output), sha256_line(plain.output));
  EXPECT_NE(sha256_line(plain.output), "");
  // -fa before an option: no value taken.
  EXPECT_EQ(test::run_command(run + " -fa -ngl 1").exit_code, 0);
}

TEST(Cli, ClusteredShortFlagsAreRefusedNamingThem) {
  expect_error("-m " +
      test::tiny_model_file() + " -p hi -ngx 9", "unknown option -ngx (r1pi reads no clustered short flags: it is not -n gx)");
  expect_error("-m " + test::tiny_model_file() + " -p hi -n64", "unknown option -n64");
  // An option's value is its own, whatever it looks like; negative numbers are values.
  const test::CommandResult r = test::run_command(r1pi() + " -m " +
      test::tiny_model_file() + " -p -ngl -n -1 -c 8 -t 1 --temp 0");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// llama-cli's -s is --seed, llama-server's -np is --parallel (which needs --serve).
TEST(Cli, SeedAndParallelHaveLlamaCppsShortNames) {
  const std::string run = r1pi() + " -m " + test::tiny_model_file() + " -p hi -n 8 -t 1 --temp 1.5";
  const test::CommandResult s = test::run_command(run + " -s 7");
  ASSERT_EQ(s.exit_code, 0) << s.output;
  EXPECT_NE(s.output.find("seed 7,"), std::string::npos) << s.output;
  EXPECT_EQ(sha256_line(s.output), sha256_line(test::run_command(run + " --seed 7").output));
  EXPECT_NE(sha256_line(s.output), "");
  expect_error("-m " + test::tiny_model_file() + " -p hi -np 2", "--parallel 2 serves several requests at once");
}

// --jinja is what r1pi does anyway: a note. -hf would download inside r1pi, --no-jinja means
// llama.cpp's built-in templates: each refused with what to run instead.
TEST(Cli, JinjaIsANoteAndHfAndNoJinjaSayWhatToRun) {
  const std::string run = r1pi() + " -m " + test::tiny_model_file() + " -p hi -n 4 -t 1 --temp 0";
  const test::CommandResult jinja = test::run_command(run + " --jinja");
  ASSERT_EQ(jinja.exit_code, 0) << jinja.output;
  EXPECT_NE(jinja.output.find("note: --jinja ignored: r1pi renders the model's own Jinja chat template by default"),
            std::string::npos) << jinja.output;
  EXPECT_EQ(sha256_line(jinja.output), sha256_line(test::run_command(run).output));
  expect_error("-hf bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_0 -p hi",
               "error: -hf bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_0: r1pi does not download models: "
               "`r1pi-model pull bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_0` fetches the GGUF and prints its "
               "path, then run r1pi -m PATH");
  expect_error("-p hi --hf-repo=a/b", "`r1pi-model pull a/b`");
  expect_error("-p hi -hfr a/b", "`r1pi-model pull a/b`");
  expect_error("-m " + test::tiny_model_file() + " --chat --no-jinja",
               "error: --no-jinja: r1pi renders the model's own Jinja chat template; --chat-template NAME picks");
}

// What a command prints on stdout alone.
std::string stdout_of(const std::string& command) { return test::run_command("(" + command + " 2>/dev/null)").output; }

// The first run of `length` letters or digits in text after its first byte ("" if none): a stop
// text that the shell passes as it is, taken from what the random tiny model writes.
std::string alnum_run(const std::string& text, size_t length) {
  for (size_t i = 1; i + length <= text.size(); ++i)
    if (std::all_of(text.begin() + i, text.begin() + i + length, [](char c) { return std::isalnum((unsigned char)c); }))
      return text.substr(i, length);
  return "";
}

// -r ends -p generation where its text appears: the text printed stops before it, and the ids are
// those up to the token that completed it (the same sha256 as a run of just that many tokens), with
// --spec too (a step may verify drafts past the stop). Repeatable: the first text to appear ends it.
TEST(Cli, ReversePromptEndsGenerationAtItsText) {
  const std::string run = r1pi() + " -m " + test::tiny_model_file() +
                          " -p 'the the the the the the' --ignore-eos -t 1 --temp 0";
  const std::string text = stdout_of(run + " -n 200");
  const std::string stop = alnum_run(text, 3);
  ASSERT_NE(stop, "") << text;
  const test::CommandResult r = test::run_command(run + " -n 200 -r " + stop + " -r never-written");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex(R"(generated: (\d+) tokens \(stop: stop string\))"))) << r.output;
  EXPECT_EQ(sha256_line(r.output), sha256_line(test::run_command(run + " -n " + m[1].str()).output));
  EXPECT_EQ(stdout_of(run + " -n 200 -r " + stop), text.substr(0, text.find(stop)) + "\n");
  // Stop texts in the repeating tail, where drafts are accepted up to and past them: the first 6
  // (each two runs; every one of the tail's took 160 s under qemu and 70 s under TSan).
  const std::string flat = test::scratch_dir("cli-reverse-prompt") + "/flat.txt";
  std::ofstream(flat) << "1 1\n2 1\n3 1\n4 1\n5 1\n6 1\n7 1\n8 1\n9 1\n";
  int tried = 0;
  for (size_t i = text.size() / 2; i + 1 < text.size() && tried < 6; ++i) {
    const std::string tail_stop = text.substr(i, 2);
    if (alnum_run(" " + tail_stop, 2).empty()) continue;
    ++tried;
    const std::string plain = sha256_line(test::run_command(run + " -n 200 -r " + tail_stop).output);
    const test::CommandResult spec = test::run_command(run + " -n 200 -r " + tail_stop + " --spec --spec-cost " + flat);
    EXPECT_EQ(sha256_line(spec.output), plain) << tail_stop << "\n" << spec.output;
    EXPECT_NE(spec.output.find("(stop: stop string)"), std::string::npos) << spec.output;
  }
  EXPECT_GT(tried, 0) << text;
  expect_error("-m " + test::tiny_model_file() + " -p hi -r ''", "-r/--reverse-prompt \"\": give the text");
  expect_error("-m " + test::tiny_model_file() + " --serve -r x", "-r/--reverse-prompt is for -p and --chat");
}

// In the terminal chat -r ends an answer as the template's end of turn does (finish: stop); -e
// reads its \xHH.
TEST(Cli, ReversePromptEndsAChatAnswer) {
  const std::string chat = "printf 'hi\\n/stats\\n' | " + r1pi() + " -m " + test::tiny_model_file() +
                           " --chat --chat-template qwen3 -n 24 -t 1 --temp 0";
  const std::string answer = stdout_of(chat);
  const std::string stop = alnum_run(answer, 1);
  ASSERT_NE(stop, "") << answer;
  char escaped[16];
  std::snprintf(escaped, sizeof escaped, "'\\x%02x'", (unsigned char)stop[0]);
  const test::CommandResult r = test::run_command(chat + " -e -r " + escaped);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(answer \d+ tokens .*finish: stop)"))) << r.output;
  EXPECT_EQ(stdout_of(chat + " -r " + stop), answer.substr(0, answer.find(stop)) + "\n");
}

// -e reads the prompt's escapes as llama.cpp does: "\n" typed is the newline's tokens, \x41 is A.
TEST(Cli, EscapeReadsThePromptsBackslashes) {
  const std::string run = r1pi() + " -m " + test::tiny_model_file() + " -n 4 -t 1 --temp 0 -p ";
  auto prefill = [](const std::string& output) {
    std::smatch m;
    return std::regex_search(output, m, std::regex(R"(prefill: (\d+) tokens)")) ? std::stoi(m[1]) : -1;
  };
  const test::CommandResult typed = test::run_command(run + "'a\\nb'");
  const test::CommandResult escaped = test::run_command(run + "'a\\nb' -e");
  const test::CommandResult newline = test::run_command(run + "\"$(printf 'a\\nb')\"");
  EXPECT_EQ(sha256_line(escaped.output), sha256_line(newline.output)) << escaped.output;
  EXPECT_EQ(prefill(escaped.output), prefill(newline.output)) << escaped.output;
  EXPECT_EQ(prefill(typed.output), prefill(escaped.output) + 1) << typed.output;  // '\\' 'n' against '\n'
  EXPECT_EQ(sha256_line(test::run_command(run + "'\\x41' -e").output), sha256_line(test::run_command(run + "A").output));
  EXPECT_EQ(sha256_line(test::run_command(run + "'a\\nb' -e --no-escape").output), sha256_line(typed.output));
}

TEST(Cli, BackslashEscapesAreLlamaCpps) {
  EXPECT_EQ(backslash_escapes(R"(a\nb\tc\rd\\e\"f\'g)"), "a\nb\tc\rd\\e\"f'g");
  EXPECT_EQ(backslash_escapes(R"(\x41\x7a\xFF\x0a)"), "Az\xff\n");
  EXPECT_EQ(backslash_escapes(R"(\\n)"), "\\n");
  // Not escapes: kept as written.
  for (const char* kept : {R"(\q)", R"(\x4)", R"(\x4 )", R"(\xg1)", R"(end\)", R"(\)", ""})
    EXPECT_EQ(backslash_escapes(kept), kept);
}

// Ctrl-C in a plain run prints the summary of what was generated, then exits 130. A background
// job of a shell starts with SIGINT ignored until r1pi's handler is in place, which is before the
// first token: the signal is sent once text has appeared.
TEST(Cli, CtrlCPrintsTheSummaryAndExits130) {
  const std::string dir = test::scratch_dir("cli-ctrl-c");
  const std::string script = r1pi() + " -m " +
      test::tiny_model_file() + " -p hi -n -1 --ignore-eos -c 60000 -t 1 --temp 0 > " +
                             dir + "/out 2> " + dir + "/err & pid=$!; for i in $(seq 1200); do [ -s " + dir +
                             "/out ] && break; sleep 0.1; done; kill -INT $pid; wait $pid; echo status=$?";
  const test::CommandResult r = test::run_command("timeout -s KILL 300 bash -c '" + script + "'");
  EXPECT_NE(r.output.find("status=130"), std::string::npos) << r.output;
  const std::string err = test::read_file(dir + "/err");
  EXPECT_TRUE(std::regex_search(err, std::regex(R"(generated: [1-9]\d* tokens \(stop: Ctrl-C\)\nsha256: [0-9a-f]{64})")))
      << err;
}

TEST(Cli, VersionNamesTheCommitKernelsAndMpi) {
  const test::CommandResult r = test::run_command(r1pi() + " --version");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(^r1pi \S+\nkernels: \S+\nMPI: .+\ncompiler: (gcc|clang) )")))
      << r.output;
}

TEST(Cli, HelpShowsTheDefaults) {
  const test::CommandResult r = test::run_command(r1pi() + " --help");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* shown : {"--temp FLOAT:FLOAT in [0 - 100]=0.8", "--top-k INT=40", "-b,--batch-size INT:INT in [1 - 4096]=64",
                            "--kv-type TEXT:{f32,f16,q8_0}=f32", "--port INT:INT in [0 - 65535]=8080", "-ngl"})
    EXPECT_NE(r.output.find(shown), std::string::npos) << shown << "\n" << r.output;
}

// --min-p cuts the tail (another sha256 than without it, at a high temperature) and is applied to
// the same candidates whether a position was decoded alone or verified in a speculative batch.
TEST(Cli, MinPIsExactWithSpeculation) {
  const std::string run = r1pi() + " -m " +
      test::tiny_model_file() + " -p 'the the the the the the' -n 40 -t 1 --temp 3 --seed 9";
  const std::string plain = sha256_line(test::run_command(run + " --min-p 0.2").output);
  EXPECT_NE(plain, "");
  // A flat cost curve: drafting always pays, so every step the index offers a draft verifies one.
  const std::string flat = test::scratch_dir("cli-min-p") + "/flat.txt";
  std::ofstream(flat) << "1 1\n2 1\n3 1\n4 1\n5 1\n6 1\n7 1\n8 1\n9 1\n";
  const test::CommandResult spec = test::run_command(run + " --min-p 0.2 --spec --spec-cost " + flat);
  EXPECT_EQ(sha256_line(spec.output), plain) << spec.output;
  EXPECT_NE(spec.output.find("spec: drafted"), std::string::npos) << spec.output;
  EXPECT_NE(sha256_line(test::run_command(run).output), plain);
}

// The repetition penalties change greedy and sampled tokens (another sha256 than without them)
// and give the same tokens with other threads and batch sizes and when the positions are verified
// in speculative batches (each verification row's history holds the draft before it).
TEST(Cli, RepetitionPenaltiesAreExactWithSpeculation) {
  const std::string penalties = " --repeat-penalty 1.5 --repeat-last-n 16 --frequency-penalty 0.5 --presence-penalty 0.25";
  const std::string flat = test::scratch_dir("cli-penalties") + "/flat.txt";
  std::ofstream(flat) << "1 1\n2 1\n3 1\n4 1\n5 1\n6 1\n7 1\n8 1\n9 1\n";
  for (const char* sampling : {" --temp 0", " --temp 1.5 --seed 9"}) {
    const std::string run = r1pi() + " -m " +
        test::tiny_model_file() + " -p 'the the the the the the' -n 40" + sampling;
    const std::string plain = sha256_line(test::run_command(run + penalties + " -t 1").output);
    ASSERT_NE(plain, "") << sampling;
    EXPECT_NE(sha256_line(test::run_command(run + " -t 1").output), plain) << sampling;
    EXPECT_EQ(sha256_line(test::run_command(run + penalties + " -t 2 -b 3").output), plain) << sampling;
    const test::CommandResult spec = test::run_command(run + penalties + " -t 1 --spec --spec-cost " + flat);
    EXPECT_EQ(sha256_line(spec.output), plain) << sampling << spec.output;
    EXPECT_NE(spec.output.find("spec: drafted"), std::string::npos) << spec.output;
  }
  expect_error("-m " + test::tiny_model_file() + " -p hi --repeat-penalty 0", "--repeat-penalty");
  expect_error("-m " + test::tiny_model_file() + " -p hi --frequency-penalty 3", "--frequency-penalty");
  expect_error("-m " + test::tiny_model_file() + " -p hi --presence-penalty nan", "--presence-penalty");
  expect_error("-m " + test::tiny_model_file() + " -p hi --repeat-last-n -2", "--repeat-last-n");
}

// The chat's prompt size for a line (its /stats line) with Qwen3's template and --reasoning as
// given ("": the default, on); off ends the prompt with the empty think block, 19 tokens in the
// tiny model's byte vocabulary.
int chat_prompt_tokens(const std::string& line, const std::string& reasoning) {
  const test::CommandResult r = test::run_command(
      "printf '" + line + "\\n/stats\\n' | " + r1pi() + " -m " + test::tiny_model_file() +
      " --chat --chat-template qwen3 -n 1 -t 1" + (reasoning.empty() ? "" : " --reasoning " + reasoning));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::string banner = "chat: template qwen3, reasoning " + (reasoning == "off" ? reasoning : "on");
  EXPECT_NE(r.output.find(banner), std::string::npos) << r.output;
  std::smatch m;
  if (!std::regex_search(r.output, m, std::regex(R"(stats: prompt (\d+) tokens)"))) {
    ADD_FAILURE() << r.output;
    return -1;
  }
  return std::stoi(m[1]);
}

// llama-cli's -sys is --system: the system message lengthens the first turn's prompt.
TEST(Cli, SysIsTheSystemMessage) {
  const int without = chat_prompt_tokens("hi", "");
  const test::CommandResult r = test::run_command(
      "printf 'hi\\n/stats\\n' | " + r1pi() + " -m " + test::tiny_model_file() +
      " -cnv -sys 'Be brief.' --chat-template qwen3 -n 1 -t 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex(R"(stats: prompt (\d+) tokens)"))) << r.output;
  EXPECT_GT(std::stoi(m[1]), without) << r.output;
}

TEST(Cli, ChatReasoningOffWritesTheEmptyThinkBlock) {
  const int on = chat_prompt_tokens("hi", "");
  EXPECT_EQ(chat_prompt_tokens("hi", "on"), on);
  EXPECT_EQ(chat_prompt_tokens("hi", "off"), on + 19);
  // Qwen3's soft switch in the message does the same; --reasoning off is not undone by /think.
  EXPECT_EQ(chat_prompt_tokens("hi /no_think", ""), chat_prompt_tokens("hi /no_think", "off"));
  EXPECT_EQ(chat_prompt_tokens("hi /think", "off"), chat_prompt_tokens("hi /think", "") + 19);
}

TEST(Cli, ReasoningAndChatTemplateFlagsTakeTheirValuesOnly) {
  expect_error("-m " + test::tiny_model_file() + " --chat --reasoning maybe", "--reasoning");
  expect_error("-m " +
      test::tiny_model_file() + " --chat --chat-template qwen", "deepseek-r1, llama3, qwen3, qwen2.5, chatml");
}

TEST(Cli, ThreadsAreCappedAtTheCores) {
  const unsigned cores = std::thread::hardware_concurrency();
  const test::CommandResult r =
      test::run_command(r1pi() + " -m " + test::tiny_model_file() + " -p hi -n 2 -t 1000");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("warning: -t 1000 is more threads than the " + std::to_string(cores) + " cores"),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("x " + std::to_string(cores) + " threads"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace r1pi
