// Helpers shared by the tests: where the external data lives, where the built programs are,
// scratch folders, running a program to look at its exit code and output, model files and logits,
// llama.cpp's tokenizer vectors, and the inputs and comparisons of the kernel tests.
#pragma once
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ggml/quant_blocks.h"
#include "model/model_config.h"
#include "neon/kernels.h"
#include "runtime/token_source.h"

namespace r1pi {
struct LoadedModel;
struct MakeOptions;
class ThreadPool;
}  // namespace r1pi

namespace r1pi::test {

// A float's bit pattern and back (for tests that compare or build exact bytes).
inline uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }
inline float from_bits(uint32_t u) { return std::bit_cast<float>(u); }
// A float's bits with every NaN as one, for results where a NaN's payload follows the operand
// order a compiler picks for a commutative operation (payloads are not part of the kernel recipe).
inline uint32_t bits_any_nan(float f) { return f != f ? 0x7fc00000u : bits_of(f); }

// ../shared/data beside the checkout, or $R1PI_SHARED_DATA when set.
std::string shared_data(const std::string& file = "");
// The build folder (holds r1pi and r1pi-model).
std::string bin_dir();
// A fresh folder under the build tree for one test's files.
std::string scratch_dir(const std::string& name);

struct CommandResult {
  int exit_code = -1;   // the program's exit status; 128+N when killed by signal N
  std::string output;   // stdout and stderr together
};
// Runs a shell command line and collects what it prints.
CommandResult run_command(const std::string& command_line);

// The message of the r1pi::Error that f throws; "(no error)" when it returns.
std::string error_of(const std::function<void()>& f);

// A configuration's sizes, compared in one EXPECT_EQ (gtest prints both sides through PrintTo).
struct ConfigSizes {
  uint32_t dim, n_layers, n_heads, n_kv_heads, ffn_dim, n_vocab, n_ctx_train;
  bool operator==(const ConfigSizes&) const = default;
};
ConfigSizes sizes_of(const ModelConfig& config);
void PrintTo(const ConfigSizes& s, std::ostream* os);
// A llama configuration of these sizes (head size dim / heads, RoPE over the whole head): what a
// test writes a hand-made file from.
ModelConfig llama_shape(uint32_t dim, uint32_t n_layers, uint32_t n_heads, uint32_t n_kv_heads,
                        uint32_t ffn_dim, uint32_t n_vocab);

// Writes a random-weight model (r1pi::make_model, no progress line) to a folder of this process's
// own (ctest runs tests as parallel processes) and returns its path.
std::string make_model_file(const std::string& name, MakeOptions options);

// The tiny preset (r1pi-model make --preset tiny) of this seed, written once per process and seed:
// its path, and the model loaded (once per seed). Tests that share a seed share the file.
const std::string& tiny_model_file(uint32_t seed = 7);
const LoadedModel& tiny_model(uint32_t seed = 7);

// One rank's logits for every token, fed in chunks of `chunk` tokens (the whole sequence in one
// batch, one by one, or anything between).
std::vector<float> chunked_logits(const LoadedModel& model, const std::vector<int32_t>& tokens,
                                  int chunk, ThreadPool& pool);

// Continuous batching's promise: sequences a and b fed together in one batch (two slots of n_ctx,
// every token's logits) each give the bytes they give fed alone.
::testing::AssertionResult batched_like_alone(const LoadedModel& model, const std::vector<int32_t>& a,
                                              const std::vector<int32_t>& b, int n_ctx, ThreadPool& pool);

// A token source without a model, for tests of what drives one: it keeps what each slot holds as
// ModelForward does (a forward at pos forgets what lay at pos and after; a gap or a position past
// the context is refused) and answers each entry that wants logits with pick().
class FakeTokenSource : public TokenSource {
 public:
  explicit FakeTokenSource(int n_ctx, int n_seqs = 1) : n_ctx_(n_ctx), held_(size_t(n_seqs)) {}
  int n_ctx() const override { return n_ctx_; }
  int n_seqs() const override { return int(held_.size()); }
  std::vector<int32_t> forward(const Batch& batch, const std::vector<const Sampler*>& samplers) override;
  const std::vector<int32_t>& cached(int seq) const override { return held_[size_t(seq)]; }
  bool resumable(int, int) const override { return true; }
  void truncate(int seq, int n) override;
  void copy(int src, int dst) override { held_[size_t(dst)] = held_[size_t(src)]; }
  int forwards = 0;

 protected:
  // The token after batch entry i (its slot already holds the whole batch).
  virtual int32_t pick(const Batch& batch, int i, const Sampler& sampler) = 0;

 private:
  int n_ctx_;
  std::vector<std::vector<int32_t>> held_;
};

// The whole file's bytes; a test failure (and "") if it cannot be read.
std::string read_file(const std::string& path);

// One of llama.cpp's tokenizer test vectors: a text and the ids it encodes to (no BOS, special
// tokens not parsed).
struct VocabCase {
  std::string text;
  std::vector<int32_t> ids;
};
// llama.cpp's NAME.inp / NAME.out pair in the shared data (texts separated by
// "\n__ggml_vocab_test__\n"; one line of ids per text).
std::vector<VocabCase> llama_cpp_vocab_cases(const std::string& name);
// ---- the kernel tests --------------------------------------------------------------------------

// Normal floats (mean 0, standard deviation scale) from rng, or from a generator seeded with seed.
std::vector<float> normal_row(int64_t n, std::mt19937& rng, float scale = 1.0f);
std::vector<float> random_row(int64_t n, uint32_t seed, float scale = 1.0f);
// x in Q8_0 blocks by the scalar reference quantiser (a partial last block left out).
std::vector<block_q8_0> quantize_q8_0(const std::vector<float>& x);
// A random finite fp16 (any sign, subnormals and zeros included); inf too when asked.
uint16_t random_half(std::mt19937& rng, bool allow_inf = false);

// Every backend this build runs on this CPU but the scalar reference.
std::vector<const Kernels*> simd_backends();

// n elements of a type as floats (the traits' dequantiser).
std::vector<float> dequantized(GgmlType type, const void* blocks, int64_t n);
// The scalar reference's product of the row w (of type) with x has the bits of want (the recipe
// written out by a test) and lies near the double-precision product of the dequantised rows.
void expect_scalar_dot(GgmlType type, int64_t n, const void* w, const std::vector<block_q8_0>& x, float want);

// Byte comparisons against the scalar reference's result, reporting the first difference.
::testing::AssertionResult same_floats(const float* a, const float* b, size_t n);
::testing::AssertionResult same_bytes(const void* a, const void* b, size_t n);

}  // namespace r1pi::test

// Runs the body once per SIMD backend k; skips the test where there is none.
#define FOR_EACH_BACKEND(k)                                                                      \
  if (::r1pi::test::simd_backends().empty()) GTEST_SKIP() << "no SIMD backend in this build and CPU"; \
  for (const ::r1pi::Kernels* k : ::r1pi::test::simd_backends())

namespace r1pi::test {

}  // namespace r1pi::test
