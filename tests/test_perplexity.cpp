// r1pi-perplexity's measurement (src/evaluation): llama-perplexity's chunks scored against an
// independent computation from the model's logits, every position's rows saved byte for byte,
// comparisons of saved rows, clear refusals, and the quality of r1pi's own Q4_K_M of a trained
// model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/thread_pool.h"
#include "evaluation/perplexity.h"
#include "layers/model_forward.h"
#include "model/model_loader.h"
#include "runtime/generator.h"
#include "runtime/token_source.h"
#include "test_support.h"
#include "tools/inflate.h"
#include "tools/model_maker.h"
#include "tools/quantize_model.h"
#include <filesystem>

namespace r1pi {
namespace {

using Ids = std::vector<int32_t>;

std::string story_path() { return std::string(R1PI_TEST_DATA) + "/story.txt"; }
std::string stories260k(const std::string& file = "stories260K.gguf") {
  return test::shared_data("models/stories260K/" + file);
}

// The text's ids as r1pi-perplexity makes them (BOS first, special tokens as text).
Ids story_ids(const LoadedModel& m) {
  return m.tokenizer->encode(test::read_file(story_path()), m.tokenizer->add_bos(), false);
}

// A one-rank run of the measurement with the given threads and context.
PerplexityResult measure(const LoadedModel& m, const Ids& ids, PerplexityOptions o, int n_ctx, int threads = 1) {
  ThreadPool pool(threads);
  NoSync sync;
  ModelForward forward(m.config, m.weights, m.shard, n_ctx, pool, sync);
  LocalTokenSource source(forward);
  return run_perplexity(source, ids, m.config.n_vocab, o);
}

// -log softmax(row)[target], in long double.
long double nll(const float* row, int64_t V, int32_t target) {
  long double m = row[0], sum = 0;
  for (int64_t i = 1; i < V; ++i) m = std::max<long double>(m, row[i]);
  for (int64_t i = 0; i < V; ++i) sum += std::exp(row[i] - m);
  return m + std::log(sum) - row[target];
}

std::vector<float> read_floats(const std::string& path) {
  const std::string bytes = test::read_file(path);
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}

TEST(Perplexity, ChunksScoreTheSecondHalfOfEachAsLlamaPerplexity) {
  const LoadedModel m = load_model(stories260k());
  const Ids ids = story_ids(m);
  const int n_ctx = 64;
  ASSERT_GE(ids.size(), 10u * n_ctx) << "the story is long enough for ten chunks";
  PerplexityOptions o;
  o.n_ctx = n_ctx;
  o.batch = 13;  // chunks cut across forwards
  o.chunk_bos = m.tokenizer->bos_id();
  const PerplexityResult got = measure(m, ids, o, n_ctx, 2);

  // Independently: each chunk's logits in one forward, its first id BOS, positions 32..62 scored.
  ThreadPool pool(1);
  const int64_t V = m.config.n_vocab;
  const size_t chunks = ids.size() / n_ctx;
  long double sum = 0;
  int64_t n = 0;
  for (size_t c = 0; c < chunks; ++c) {
    Ids chunk(ids.begin() + long(c * n_ctx), ids.begin() + long((c + 1) * n_ctx));
    chunk[0] = m.tokenizer->bos_id();
    const std::vector<float> logits = test::chunked_logits(m, chunk, n_ctx, pool);
    for (int p = n_ctx / 2; p < n_ctx - 1; ++p, ++n) sum += nll(logits.data() + p * V, V, ids[c * n_ctx + p + 1]);
  }
  EXPECT_EQ(got.scored, n);
  EXPECT_EQ(got.kept, n);
  EXPECT_NEAR(got.perplexity, double(std::exp(sum / n)), 1e-9 * got.perplexity);
  EXPECT_GT(got.uncertainty, 0);
  EXPECT_LT(got.perplexity, 20) << "a trained model predicts a story far better than chance (512 tokens)";
  EXPECT_FALSE(got.compared);
}

TEST(Perplexity, AllLogitsSavesEveryPositionsRowAsOneSequenceGives) {
  const LoadedModel m = load_model(stories260k());
  const Ids all = story_ids(m);
  const Ids ids(all.begin(), all.begin() + 100);
  const std::string dir = test::scratch_dir("perplexity-all");
  PerplexityOptions o;
  o.all_positions = true;
  o.batch = 17;
  o.save_logits = dir + "/rows.f32";
  const PerplexityResult r = measure(m, ids, o, 128, 2);
  EXPECT_EQ(r.kept, 100);
  EXPECT_EQ(r.scored, 99);
  ThreadPool pool(1);
  const std::vector<float> want = test::chunked_logits(m, ids, 100, pool);
  const std::vector<float> saved = read_floats(o.save_logits);
  ASSERT_EQ(saved.size(), want.size());
  EXPECT_EQ(std::memcmp(saved.data(), want.data(), want.size() * sizeof(float)), 0)
      << "row p is the logits after ids 0..p, the bytes of the model's forward";
}

TEST(Perplexity, ComparesWithAnotherRunsSavedLogits) {
  const LoadedModel f32 = load_model(stories260k()), q8 = load_model(stories260k("stories260K-q8_0.gguf"));
  const Ids ids = story_ids(f32);
  const std::string dir = test::scratch_dir("perplexity-kl");
  PerplexityOptions o;
  o.n_ctx = 64;
  o.chunk_bos = f32.tokenizer->bos_id();
  o.save_logits = dir + "/f32.f32";
  const PerplexityResult base = measure(f32, ids, o, 64);

  // The same model, other threads and batches: the same rows.
  o.save_logits.clear();
  o.compare_logits = dir + "/f32.f32";
  o.batch = 5;
  const PerplexityResult same = measure(f32, ids, o, 64, 2);
  ASSERT_TRUE(same.compared);
  EXPECT_EQ(same.kl_mean, 0);
  EXPECT_EQ(same.kl_max, 0);
  EXPECT_EQ(same.top1_agreement, 1);
  EXPECT_EQ(same.other_perplexity, base.perplexity);

  // Q8_0 weights: close to F32, not equal.
  const PerplexityResult q = measure(q8, ids, o, 64);
  EXPECT_EQ(q.other_perplexity, base.perplexity);
  EXPECT_GT(q.kl_mean, 0);
  EXPECT_LT(q.kl_mean, 0.01);
  EXPECT_GE(q.kl_max, q.kl_mean);
  EXPECT_GT(q.top1_agreement, 0.9);
  EXPECT_NEAR(q.perplexity, base.perplexity, 0.05 * base.perplexity);
}

void expect_refused(const LoadedModel& m, const Ids& ids, const PerplexityOptions& o, int n_ctx,
                    const std::string& says) {
  try {
    measure(m, ids, o, n_ctx);
    ADD_FAILURE() << "accepted; expected an error saying " << says;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
  }
}

TEST(Perplexity, RefusesWhatItCannotScoreNamingWhy) {
  const LoadedModel m = load_model(stories260k());
  const Ids ids = story_ids(m);
  PerplexityOptions o;
  o.n_ctx = 64;
  expect_refused(m, Ids(ids.begin(), ids.begin() + 100), o, 64, "needs at least 128");
  expect_refused(m, Ids{1, 2, 600, 4}, o, 64, "id 600 (number 3) is outside the model's vocabulary of 512");
  o.n_ctx = 128;
  expect_refused(m, ids, o, 64, "-c 128 is more than the context of 64");
  o.all_positions = true;
  expect_refused(m, ids, o, 64, "do not fit the context of 64");
  o.all_positions = false;
  o.n_ctx = 64;
  const std::string dir = test::scratch_dir("perplexity-refusals");
  std::ofstream(dir + "/short.f32") << "0123";
  o.compare_logits = dir + "/short.f32";
  expect_refused(m, ids, o, 64, "4 bytes, but");
  o.compare_logits = dir + "/absent.f32";
  expect_refused(m, ids, o, 64, "no such logits file");
  o.compare_logits.clear();
  o.save_logits = dir + "/no-such-dir/rows.f32";
  expect_refused(m, ids, o, 64, "cannot write the logits");
}

// Issue 37's test of quality: TinyStories-656K embedded in a shape whose rows are whole 256-wide
// super-blocks, quantised by r1pi-model quantize to Q4_K_M, tells the F32 model's story at first
// and stays within 10% of its perplexity.
TEST(Perplexity, OwnQ4_K_MOfATrainedModelKeepsItsStoryAndPerplexity) {
  const std::string dir = test::scratch_dir("perplexity-q4km");
  MakeOptions shape{.preset = "tiny", .dim = 512, .n_layers = 3, .n_heads = 8, .n_kv_heads = 4, .ffn_dim = 1024};
  shape.matrix_type = shape.output_type = GgmlType::F32;
  shape.progress = false;
  inflate_model(test::shared_data("models/TinyStories-656K/TinyStories-656K-f32.gguf"), shape, dir + "/f32.gguf");
  quantize_model(dir + "/f32.gguf", dir + "/q4_k_m.gguf", "q4_k_m", false);
  const LoadedModel f32 = load_model(dir + "/f32.gguf"), q4km = load_model(dir + "/q4_k_m.gguf");

  auto greedy = [](const LoadedModel& m, const Ids& prompt) {
    ThreadPool pool(1);
    NoSync sync;
    ModelForward forward(m.config, m.weights, m.shard, 256, pool, sync);
    LocalTokenSource source(forward);
    GenerationOptions g;
    g.n_predict = 24;
    g.sampler.temperature = 0;
    return generate(source, *m.tokenizer, prompt, g, {}).generated;
  };
  // Its opening tokens: the first two of each prompt are the F32 model's (measured: the stories
  // part after 3, 8 and 2 tokens, each at a token whose two best F32 logits lie within 0.6: Q4_K's
  // rounding moves this small model's logits by up to ~0.8; the inflated Q4_0 parts after 1 token
  // of "The little dog"). Teacher-forced on the F32 model's stories, the best token agrees.
  const std::string dir2 = test::scratch_dir("perplexity-q4km-stories");
  double agreement = 0;
  for (const char* text : {"Once upon a time", "The little dog", "Tom and Sue went to the park"}) {
    const Ids prompt = f32.tokenizer->encode(text, true, true);
    const Ids want = greedy(f32, prompt), got = greedy(q4km, prompt);
    EXPECT_EQ(Ids(got.begin(), got.begin() + 2), Ids(want.begin(), want.begin() + 2)) << text;
    Ids story = prompt;
    story.insert(story.end(), want.begin(), want.end());
    PerplexityOptions teacher;
    teacher.all_positions = true;
    teacher.save_logits = dir2 + "/f32.f32";
    measure(f32, story, teacher, 256);
    teacher.save_logits.clear();
    teacher.compare_logits = dir2 + "/f32.f32";
    agreement += measure(q4km, story, teacher, 256).top1_agreement / 3;
  }
  std::printf("top-1 agreement with F32 on its stories: %.1f%%\n", 100 * agreement);
  EXPECT_GE(agreement, 0.85);

  PerplexityOptions o;
  o.n_ctx = 128;
  o.chunk_bos = f32.tokenizer->bos_id();
  const Ids ids = story_ids(f32);
  const PerplexityResult base = measure(f32, ids, o, 128, 2), q = measure(q4km, ids, o, 128, 2);
  EXPECT_LT(base.perplexity, 20);
  EXPECT_LT(std::abs(q.perplexity / base.perplexity - 1), 0.10)
      << "F32 " << base.perplexity << ", Q4_K_M " << q.perplexity;
  std::printf("TinyStories-656K inflated: F32 perplexity %.4f, Q4_K_M %.4f\n", base.perplexity, q.perplexity);
}


// ---- the program ---------------------------------------------------------------------------
// The r1pi-perplexity program: what it prints, --tokens with --all-logits, a saved file compared
// with itself, and its errors.
namespace cli {

const std::string& model() {
  static const std::string m = test::shared_data("models/stories260K/stories260K.gguf");
  return m;
}

test::CommandResult perplexity(const std::string& args) {
  return test::run_command(test::bin_dir() + "/r1pi-perplexity -m " + model() + " " + args);
}

std::string story() { return std::string(R1PI_TEST_DATA) + "/story.txt"; }

bool has(const std::string& output, const std::string& text) { return output.find(text) != std::string::npos; }

TEST(PerplexityCli, ScoresATextSavesItsRowsAndComparesThem) {
  const std::string dir = test::scratch_dir("perplexity-cli");
  const auto base = perplexity("-f " + story() + " -c 64 -t 1 --save-logits " + dir + "/rows.f32");
  ASSERT_EQ(base.exit_code, 0) << base.output;
  EXPECT_TRUE(has(base.output, "perplexity: 4.")) << base.output;  // 4.2514 when written
  EXPECT_TRUE(has(base.output, " tokens scored)\n")) << base.output;
  EXPECT_TRUE(has(base.output, "chunks of 64, the second half of each scored")) << base.output;
  EXPECT_EQ(std::filesystem::file_size(dir + "/rows.f32"), 434u * 512 * 4) << base.output;
  const auto again = perplexity("-f " + story() + " -c 64 -t 2 -b 9 --kl-divergence " + dir + "/rows.f32");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(has(again.output, "kl-divergence: mean 0, max 0 over 434 positions")) << again.output;
  EXPECT_TRUE(has(again.output, "top-1 agreement: 100.00%")) << again.output;
}

TEST(PerplexityCli, AllLogitsOverIdsKeepsEveryPosition) {
  const std::string dir = test::scratch_dir("perplexity-cli-ids");
  std::ofstream(dir + "/ids.txt") << "1 403 407 261 378\n 2 3 4 5 6 7 8 9 10\t11\n";
  const auto r = perplexity("--tokens " + dir + "/ids.txt --all-logits -c 32 --save-logits " + dir + "/all.f32");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "(14 tokens scored)")) << r.output;
  EXPECT_TRUE(has(r.output, "saved 15 rows of 512 logits")) << r.output;
  EXPECT_EQ(std::filesystem::file_size(dir + "/all.f32"), 15u * 512 * 4);
}

TEST(PerplexityCli, ErrorsNameTheProblem) {
  const std::string dir = test::scratch_dir("perplexity-cli-errors");
  auto expect_error = [](const test::CommandResult& r, const std::string& says) {
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(has(r.output, says)) << "expected '" << says << "' in:\n" << r.output;
  };
  expect_error(perplexity(""), "give the text to score: -f FILE or --tokens IDS.txt");
  std::ofstream(dir + "/bad.txt") << "1 2 x3 4";
  expect_error(perplexity("--tokens " + dir + "/bad.txt"), "id number 3 is not a non-negative integer");
  std::ofstream(dir + "/short.txt") << "Once upon a time.";
  expect_error(perplexity("-f " + dir + "/short.txt"), "perplexity with -c 512 needs at least 1024");
  expect_error(perplexity("-f " + dir + "/absent.txt"), "absent.txt");
  expect_error(perplexity("-f " + story() + " -c 64 --kl-divergence " + dir + "/short.txt"), "bytes, but 434 rows");
  expect_error(test::run_command(test::bin_dir() + "/r1pi-perplexity -m " + dir + "/none.gguf -f " + story()),
               "none.gguf");
}

}  // namespace cli

}  // namespace
}  // namespace r1pi
