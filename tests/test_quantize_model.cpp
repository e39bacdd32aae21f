// r1pi-model quantize: a float file rewritten in a type or a mix is the file the maker writes in
// that type from the same weights, byte for byte; what it cannot do, it refuses naming the tensor.
#include <gtest/gtest.h>

#include <string>

#include "common/error.h"
#include "gguf/gguf_file.h"
#include "test_support.h"
#include "tools/model_maker.h"
#include "tools/quantize_model.h"

namespace r1pi {
namespace {

using test::error_of;
using test::read_file;
using test::scratch_dir;

MakeOptions tiny(uint32_t layers = 8) {
  MakeOptions o;
  o.progress = false;
  o.seed = 11;
  o.n_layers = layers;
  return o;
}

std::string f32_tiny(const std::string& dir, uint32_t layers = 8) {
  MakeOptions o = tiny(layers);
  o.matrix_type = o.output_type = GgmlType::F32;
  make_model(o, dir + "/f32.gguf");
  return dir + "/f32.gguf";
}

// The maker's rows are functions of (seed, tensor, row) whatever the type, so quantising its F32
// file must give exactly its file of the target type: every tensor type, every quantised byte,
// the metadata (general.file_type in its place) and the layout.
TEST(QuantizeModel, F32FileBecomesTheMakersFileOfEveryMixAndType) {
  // Four layers (of them, use_more_bits picks 2 and 3) and one mix of each family: each file costs
  // seconds under qemu. (The mixes' rules: MakeModel.KQuantMixesFollowLlamaQuantize.)
  const std::string dir = scratch_dir("quantize_same");
  const std::string f32 = f32_tiny(dir, 4);
  for (const char* mix : {"Q4_K_M", "q3_k_m", "iq4_xs"}) {
    SCOPED_TRACE(mix);
    MakeOptions o = tiny(4);
    o.mix = quant_mix_named(mix);
    make_model(o, dir + "/made.gguf");
    quantize_model(f32, dir + "/quantized.gguf", mix, false);
    EXPECT_TRUE(read_file(dir + "/made.gguf") == read_file(dir + "/quantized.gguf"));
  }
  // A single type: every matrix in it, output.weight Q6_K for a block type but Q8_0, as
  // llama-quantize's files.
  for (auto [name, type, output] : {std::tuple{"q8_0", GgmlType::Q8_0, GgmlType::Q8_0},
                                    {"q4_0", GgmlType::Q4_0, GgmlType::Q6_K},
                                    {"q4_1", GgmlType::Q4_1, GgmlType::Q6_K},
                                    {"q5_0", GgmlType::Q5_0, GgmlType::Q6_K},
                                    {"q5_1", GgmlType::Q5_1, GgmlType::Q6_K},
                                    {"bf16", GgmlType::BF16, GgmlType::BF16}}) {
    SCOPED_TRACE(name);
    MakeOptions o = tiny(4);
    o.matrix_type = type;
    o.output_type = output;
    make_model(o, dir + "/made.gguf");
    quantize_model(f32, dir + "/quantized.gguf", name, false);
    EXPECT_TRUE(read_file(dir + "/made.gguf") == read_file(dir + "/quantized.gguf"));
  }
}

// MXFP4_MOE (gpt-oss's published mix) on a mixture of experts: the stacked experts MXFP4, every
// other matrix Q8_0 (output.weight too), the router F32; the maker's file again.
TEST(QuantizeModel, Mxfp4MoeGivesTheExpertsMxfp4AndTheRestQ8_0) {
  const std::string dir = scratch_dir("quantize_mxfp4");
  MakeOptions f = tiny(2);
  f.arch = "qwen3moe";
  f.matrix_type = f.output_type = GgmlType::F32;
  make_model(f, dir + "/f32.gguf");
  MakeOptions o = tiny(2);
  o.arch = "qwen3moe";
  o.mix = quant_mix_named("mxfp4_moe");
  make_model(o, dir + "/made.gguf");
  quantize_model(dir + "/f32.gguf", dir + "/quantized.gguf", "MXFP4_MOE", false);
  EXPECT_TRUE(read_file(dir + "/made.gguf") == read_file(dir + "/quantized.gguf"));
  const GgufFile q = GgufFile::open(dir + "/quantized.gguf");
  EXPECT_EQ(q.get_u32("general.file_type"), 38u);
  int experts = 0;
  for (const GgufTensorInfo& t : q.tensors()) {
    const bool stacked = t.name.find("_exps.weight") != std::string::npos;
    const GgmlType want = t.ne.size() < 2 || t.name.find("ffn_gate_inp") != std::string::npos ? GgmlType::F32
                          : stacked                                                      ? GgmlType::MXFP4
                                                                                         : GgmlType::Q8_0;
    EXPECT_EQ(t.type, want) << t.name;
    experts += stacked;
  }
  EXPECT_EQ(experts, 6) << "gate, up and down in each of 2 layers";
}

TEST(QuantizeModel, F16AndBF16MatricesAreRead) {
  const std::string dir = scratch_dir("quantize_f16");
  MakeOptions b = tiny(2);
  b.matrix_type = b.output_type = GgmlType::BF16;
  make_model(b, dir + "/bf16.gguf");
  quantize_model(dir + "/bf16.gguf", dir + "/qb.gguf", "q8_0", false);
  EXPECT_EQ(GgufFile::open(dir + "/qb.gguf").find_tensor("blk.0.attn_q.weight")->type, GgmlType::Q8_0);
  MakeOptions o = tiny(2);
  o.matrix_type = o.output_type = GgmlType::F16;
  make_model(o, dir + "/f16.gguf");
  quantize_model(dir + "/f16.gguf", dir + "/q.gguf", "q4_k_m", false);
  const GgufFile f = GgufFile::open(dir + "/q.gguf");
  EXPECT_EQ(f.get_u32("general.file_type"), 15u);
  EXPECT_EQ(f.find_tensor("blk.0.attn_q.weight")->type, GgmlType::Q4_K);
  EXPECT_EQ(f.find_tensor("blk.0.attn_v.weight")->type, GgmlType::Q4_K);
  EXPECT_EQ(f.find_tensor("blk.1.attn_v.weight")->type, GgmlType::Q6_K);  // the last eighth of 2
  EXPECT_EQ(f.find_tensor("blk.1.attn_norm.weight")->type, GgmlType::F32);
  EXPECT_EQ(f.find_tensor("output.weight")->type, GgmlType::Q6_K);
}

TEST(QuantizeModel, RefusesWhatItCannotWriteNamingTheTensor) {
  const std::string dir = scratch_dir("quantize_refused");
  const std::string f32 = f32_tiny(dir, 1);
  std::string e = error_of([&] { quantize_model(f32, dir + "/x.gguf", "iq2_xxs", false); });
  EXPECT_NE(e.find("unknown type 'iq2_xxs'"), std::string::npos) << e;
  EXPECT_NE(e.find("q4_k_m"), std::string::npos) << e;

  // Already quantised: llama-quantize's files are made from the converter's float file.
  MakeOptions q = tiny(1);
  make_model(q, dir + "/q4_0.gguf");
  e = error_of([&] { quantize_model(dir + "/q4_0.gguf", dir + "/x.gguf", "q4_k_m", false); });
  EXPECT_NE(e.find("tensor token_embd.weight is Q4_0"), std::string::npos) << e;

  // Rows of 48 are no whole number of 32-element blocks: refused, as llama-quantize refuses them.
  MakeOptions odd = tiny(1);
  odd.dim = 48;
  odd.n_heads = 3;
  odd.n_kv_heads = 3;
  odd.ffn_dim = 256;
  odd.matrix_type = odd.output_type = GgmlType::F32;
  make_model(odd, dir + "/odd.gguf");
  e = error_of([&] { quantize_model(dir + "/odd.gguf", dir + "/x.gguf", "q4_0", false); });
  EXPECT_NE(e.find("tensor token_embd.weight has rows of 48, not a multiple of Q4_0's 32"), std::string::npos) << e;
}

// Rows of 160 are whole 32-element blocks but no whole K-quant super-block: each tensor takes
// llama-quantize's fallback type (Q4_K to Q5_0, Q6_K to Q8_0, output.weight to Q8_0, IQ4_XS to
// IQ4_NL), the rows of 256 keep theirs, the maker writes the same file, and it runs.
TEST(QuantizeModel, FallsBackAsLlamaQuantizeWhereRowsAreNotSuperBlocks) {
  const std::string dir = scratch_dir("quantize_fallback");
  MakeOptions narrow = tiny(1);
  narrow.dim = 160;
  narrow.n_heads = 5;
  narrow.n_kv_heads = 5;
  narrow.ffn_dim = 256;
  narrow.matrix_type = narrow.output_type = GgmlType::F32;
  make_model(narrow, dir + "/narrow.gguf");
  quantize_model(dir + "/narrow.gguf", dir + "/q4km.gguf", "q4_k_m", false);
  const GgufFile f = GgufFile::open(dir + "/q4km.gguf");
  EXPECT_EQ(f.find_tensor("token_embd.weight")->type, GgmlType::Q5_0);
  EXPECT_EQ(f.find_tensor("blk.0.attn_q.weight")->type, GgmlType::Q5_0);
  EXPECT_EQ(f.find_tensor("blk.0.attn_v.weight")->type, GgmlType::Q8_0);     // Q6_K (more bits) falls back
  EXPECT_EQ(f.find_tensor("blk.0.ffn_down.weight")->type, GgmlType::Q6_K);  // rows of 256: no fallback
  EXPECT_EQ(f.find_tensor("output.weight")->type, GgmlType::Q8_0);
  MakeOptions made = narrow;
  made.mix = quant_mix_named("q4_k_m");
  make_model(made, dir + "/made.gguf");
  EXPECT_TRUE(read_file(dir + "/made.gguf") == read_file(dir + "/q4km.gguf"));
  quantize_model(dir + "/narrow.gguf", dir + "/iq4xs.gguf", "iq4_xs", false);
  EXPECT_EQ(GgufFile::open(dir + "/iq4xs.gguf").find_tensor("blk.0.ffn_up.weight")->type, GgmlType::IQ4_NL);
  EXPECT_EQ(GgufFile::open(dir + "/iq4xs.gguf").find_tensor("blk.0.ffn_down.weight")->type, GgmlType::IQ4_XS);
  const auto run = test::run_command(test::bin_dir() + "/r1pi -m " + dir + "/q4km.gguf -p Hello -n 8 -t 1 --temp 0");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("generated: 8 tokens"), std::string::npos) << run.output;
}

// Each thread quantises its own rows of a chunk and the chunk is written in row order: one thread,
// three (more than this machine's cores) and every core give the same file.
TEST(QuantizeModel, ThreadsDoNotChangeTheBytes) {
  const std::string dir = scratch_dir("quantize_threads");
  const std::string f32 = f32_tiny(dir, 2);
  std::string made, quantized;
  for (int threads : {1, 3, 0}) {
    SCOPED_TRACE(threads);
    MakeOptions o = tiny(2);
    o.mix = quant_mix_named("q4_k_m");
    o.threads = threads;
    make_model(o, dir + "/made.gguf");
    quantize_model(f32, dir + "/quantized.gguf", "q4_k_m", false, threads);
    if (made.empty()) {
      made = read_file(dir + "/made.gguf");
      quantized = read_file(dir + "/quantized.gguf");
      ASSERT_EQ(made, quantized);
      continue;
    }
    EXPECT_TRUE(read_file(dir + "/made.gguf") == made);
    EXPECT_TRUE(read_file(dir + "/quantized.gguf") == quantized);
  }
}

TEST(QuantizeModel, FromTheCommandLine) {
  const std::string dir = scratch_dir("quantize_cli");
  const std::string f32 = f32_tiny(dir, 1);
  const std::string tool = test::bin_dir() + "/r1pi-model";
  const auto ok = test::run_command(tool + " quantize --no-progress " + f32 + " " + dir + "/q.gguf Q4_K_M");
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("wrote " + dir + "/q.gguf"), std::string::npos) << ok.output;
  // -t for quantize and make: the same bytes.
  const auto three = test::run_command(tool + " quantize --no-progress -t 3 " + f32 + " " + dir + "/q3.gguf Q4_K_M");
  ASSERT_EQ(three.exit_code, 0) << three.output;
  EXPECT_TRUE(read_file(dir + "/q3.gguf") == read_file(dir + "/q.gguf"));
  for (const char* t : {"1", "3"}) {
    const auto made = test::run_command(tool + " make --no-progress --layers 1 --seed 11 -t " + t + " -o " + dir + "/m" + t + ".gguf");
    ASSERT_EQ(made.exit_code, 0) << made.output;
  }
  EXPECT_TRUE(read_file(dir + "/m1.gguf") == read_file(dir + "/m3.gguf"));
  const auto negative = test::run_command(tool + " make --no-progress -t -1 -o " + dir + "/x.gguf");
  EXPECT_NE(negative.exit_code, 0) << negative.output;
  const auto bad = test::run_command(tool + " quantize --no-progress " + f32 + " " + dir + "/x.gguf iq2_xxs");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("unknown type 'iq2_xxs'"), std::string::npos) << bad.output;
}

}  // namespace
}  // namespace r1pi
