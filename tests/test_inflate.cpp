// r1pi-model inflate: TinyStories-656K (dim 128, 2 layers, 8/4 heads of 16, FFN 384, vocab 2048)
// embedded in bigger shapes writes the small model's stories: its greedy ids equal the small
// model's (where they could differ at all, only at a near-tie of the small model's logits), and
// the file holds exactly the tensors of a model made in that shape.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/thread_pool.h"
#include "gguf/gguf_file.h"
#include "layers/model_forward.h"
#include "model/model_loader.h"
#include "runtime/generator.h"
#include "test_support.h"
#include "tools/inflate.h"
#include "tools/model_maker.h"

namespace r1pi {
namespace {

using Ids = std::vector<int32_t>;

const std::string& small_path() {
  static const std::string p = test::shared_data("models/TinyStories-656K/TinyStories-656K-f32.gguf");
  return p;
}

Ids greedy(const LoadedModel& m, const Ids& prompt, int n) {
  ThreadPool pool(1);
  NoSync sync;
  ModelForward forward(m.config, m.weights, m.shard, 512, pool, sync);
  LocalTokenSource source(forward);
  GenerationOptions o;
  o.n_predict = n;
  o.sampler.temperature = 0;
  return generate(source, *m.tokenizer, prompt, o, {}).generated;
}

// The small model's margin between its two best logits after prompt + ids[0..i).
float small_margin(const LoadedModel& small, Ids tokens) {
  ThreadPool pool(1);
  const std::vector<float> logits = test::chunked_logits(small, tokens, int(tokens.size()), pool);
  std::vector<float> last(logits.end() - small.config.n_vocab, logits.end());
  std::partial_sort(last.begin(), last.begin() + 2, last.end(), std::greater<float>());
  return last[0] - last[1];
}

void expect_small_models_stories(const std::string& inflated_path) {
  const LoadedModel small = load_model(small_path());
  const LoadedModel big = load_model(inflated_path);
  for (const std::string text : {"Once upon a time", "The little dog", "Tom and Sue went to the park"}) {
    const Ids prompt = small.tokenizer->encode(text, true, true);
    ASSERT_EQ(big.tokenizer->encode(text, true, true), prompt) << "the tokenizer is the small one";
    const Ids want = greedy(small, prompt, 150), got = greedy(big, prompt, 150);
    const auto [w, g] = std::mismatch(want.begin(), want.end(), got.begin(), got.end());
    if (w == want.end()) continue;
    Ids context = prompt;
    context.insert(context.end(), want.begin(), w);
    EXPECT_LT(small_margin(small, context), 1e-3f)
        << text << ": differs at generated token " << (w - want.begin()) << " without a near-tie";
  }
}

std::string inflate(const std::string& name, MakeOptions o) {
  const std::string out = test::scratch_dir("inflate-" + name) + "/model.gguf";
  o.progress = false;
  inflate_model(small_path(), o, out);
  return out;
}

// dim 512 (4x), head_dim 64 (4x): every compensating factor is a power of two.
TEST(Inflate, F32ExactScalesWritesTheSmallModelsStories) {
  MakeOptions o{.preset = "tiny", .dim = 512, .n_layers = 3, .n_heads = 8, .n_kv_heads = 4, .ffn_dim = 1024};
  o.matrix_type = o.output_type = GgmlType::F32;
  expect_small_models_stories(inflate("f32-pow4", o));
}

// head_dim 32 (wq times sqrt 2), KV heads 8 (small KV head j at 2j), 2 zero layers, vocabulary
// padded to 4096.
TEST(Inflate, F32SpreadHeadsPaddedVocabularyWritesTheSmallModelsStories) {
  MakeOptions o{.preset = "tiny", .dim = 512, .n_layers = 4, .n_heads = 16, .n_kv_heads = 8,
                .ffn_dim = 1024, .n_vocab = 4096};
  o.matrix_type = o.output_type = GgmlType::F32;
  expect_small_models_stories(inflate("f32-spread", o));
}

// Quantised as the preset is: the same tensors, types and shapes as `make` writes for the shape
// (but rope_freqs, which the inflated model has no use for), so a token reads the same bytes.
TEST(Inflate, Q4_0HoldsThePresetsTensors) {
  const MakeOptions o{.preset = "tiny", .dim = 512, .n_layers = 3, .n_heads = 16, .n_kv_heads = 8,
                      .ffn_dim = 1024, .n_vocab = 4096};
  const GgufFile inflated = GgufFile::open(inflate("q4_0", o));
  const std::string made_path = test::make_model_file("inflate-made", o);
  std::vector<GgufTensorInfo> made = GgufFile::open(made_path).tensors();
  std::erase_if(made, [](const GgufTensorInfo& t) { return t.name == "rope_freqs.weight"; });
  ASSERT_EQ(inflated.tensors().size(), made.size());
  for (size_t i = 0; i < made.size(); ++i) {
    EXPECT_EQ(inflated.tensors()[i].name, made[i].name);
    EXPECT_EQ(inflated.tensors()[i].ne, made[i].ne) << made[i].name;
    EXPECT_EQ(inflated.tensors()[i].type, made[i].type) << made[i].name;
  }
  // It still tells stories: its first tokens are the F32 small model's (Q4_0 leaves that path
  // later, as the small model's own Q4_0 file does).
  const LoadedModel small = load_model(small_path()), big = load_model(inflated.path());
  const Ids prompt = small.tokenizer->encode("Once upon a time", true, true);
  const Ids want = greedy(small, prompt, 8), got = greedy(big, prompt, 8);
  EXPECT_EQ(Ids(got.begin(), got.begin() + 3), Ids(want.begin(), want.begin() + 3));
}

TEST(Inflate, RefusesAShapeTooSmall) {
  const std::string narrow = test::error_of(
      [] { inflate("small", {.preset = "tiny", .dim = 64, .output_type = GgmlType::Q4_0}); });
  EXPECT_NE(narrow.find("does not fit the shape: dim 128 > 64"), std::string::npos) << narrow;
  EXPECT_NE(test::error_of([] { inflate("ffn", {.preset = "tiny", .ffn_dim = 256}); }).find("FFN 384"),
            std::string::npos);
}

}  // namespace
}  // namespace r1pi
