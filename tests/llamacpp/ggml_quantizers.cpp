// ggml_quantizers LIBGGML_BASE: r1pi's quantisers and dequantisers against ggml's own, called in
// llama.cpp's prebuilt libggml-base (node-llama-cpp's): for every type r1pi reads that ggml has a
// reference quantiser for, the same bytes from the same rows, and the same floats from the same
// blocks. Rows: normal values at scales from 1e-30 to 1e4, zeros, a single outlier, constants,
// values of one sign, rows with exact ties. Prints PASS/FAIL lines; exits 1 on any difference.
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ggml/ggml_type.h"

namespace {

// ggml_quantize_chunk(type, src, dst, start, nrows, n_per_row, imatrix)
using QuantizeChunk = size_t (*)(int, const float*, void*, int64_t, int64_t, int64_t, const float*);
using Dequantize = void (*)(const void*, float*, int64_t);

struct Case {
  r1pi::GgmlType type;
  bool compare_quantizer;  // false: ggml's quantiser is not r1pi's (Q8_0)
  const char* dequantize;  // ggml's dequantiser
};

// The quantiser is ggml_quantize_chunk, what llama-quantize calls (without an importance matrix:
// for IQ4_NL the search of quantize_iq4_nl, not quantize_row_iq4_nl_ref's single pass).
const Case kCases[] = {
    {r1pi::GgmlType::Q4_0, true, "dequantize_row_q4_0"},
    {r1pi::GgmlType::Q4_1, true, "dequantize_row_q4_1"},
    {r1pi::GgmlType::Q5_0, true, "dequantize_row_q5_0"},
    {r1pi::GgmlType::Q5_1, true, "dequantize_row_q5_1"},
    // r1pi's Q8_0 quantiser rounds ties to even (its activation quantiser); ggml's rounds away.
    {r1pi::GgmlType::Q8_0, false, "dequantize_row_q8_0"},
    {r1pi::GgmlType::Q2_K, true, "dequantize_row_q2_K"},
    {r1pi::GgmlType::Q3_K, true, "dequantize_row_q3_K"},
    {r1pi::GgmlType::Q4_K, true, "dequantize_row_q4_K"},
    {r1pi::GgmlType::Q5_K, true, "dequantize_row_q5_K"},
    {r1pi::GgmlType::Q6_K, true, "dequantize_row_q6_K"},
    {r1pi::GgmlType::IQ4_NL, true, "dequantize_row_iq4_nl"},
    {r1pi::GgmlType::IQ4_XS, true, "dequantize_row_iq4_xs"},
    {r1pi::GgmlType::MXFP4, true, "dequantize_row_mxfp4"},
    {r1pi::GgmlType::BF16, true, "ggml_bf16_to_fp32_row"},
};

constexpr int64_t kRow = 1024;

std::vector<std::vector<float>> test_rows() {
  std::mt19937 rng(20261205);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::vector<float>> rows;
  for (float scale : {1e-30f, 1e-6f, 0.02f, 1.0f, 1e4f})
    for (int k = 0; k < 40; ++k) {
      std::vector<float> r(kRow);
      for (float& v : r) v = normal(rng) * scale;
      rows.push_back(r);
    }
  rows.push_back(std::vector<float>(kRow, 0.0f));
  rows.push_back(std::vector<float>(kRow, 0.5f));
  rows.push_back(std::vector<float>(kRow, -3.0f));
  for (int k = 0; k < 20; ++k) {
    std::vector<float> r(kRow);
    for (float& v : r) v = std::fabs(normal(rng)) * (k % 2 ? 1.0f : -1.0f);  // one sign
    r[size_t(rng() % kRow)] = 1000.0f * (k % 3 ? 1.0f : -1.0f);               // an outlier
    rows.push_back(r);
  }
  for (int k = 0; k < 20; ++k) {
    std::vector<float> r(kRow);
    for (float& v : r) v = float(int(rng() % 33) - 16) * 0.25f;  // exact levels and ties
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: ggml_quantizers LIBGGML_BASE.so\n");
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::printf("FAIL: cannot open %s: %s\n", argv[1], dlerror());
    return 1;
  }
  const auto chunk = reinterpret_cast<QuantizeChunk>(dlsym(lib, "ggml_quantize_chunk"));
  if (!chunk) {
    std::printf("FAIL: no ggml_quantize_chunk in %s\n", argv[1]);
    return 1;
  }
  const std::vector<std::vector<float>> rows = test_rows();
  int failures = 0;
  for (const Case& c : kCases) {
    const r1pi::GgmlTypeTraits& t = r1pi::ggml_traits(c.type);
    const auto theirs_dq = reinterpret_cast<Dequantize>(dlsym(lib, c.dequantize));
    if (!theirs_dq) {
      std::printf("FAIL: %s: ggml's %s not in the library\n", std::string(t.name).c_str(), c.dequantize);
      ++failures;
      continue;
    }
    const size_t bytes = r1pi::ggml_row_bytes(c.type, kRow);
    int quant_diffs = 0, dequant_diffs = 0;
    std::vector<uint8_t> mine(bytes), ref(bytes);
    std::vector<float> mine_f(kRow), ref_f(kRow);
    for (const std::vector<float>& row : rows) {
      t.quantize(row.data(), mine.data(), kRow);
      if (c.compare_quantizer) {
        chunk(int(c.type), row.data(), ref.data(), 0, 1, kRow, nullptr);
        if (std::memcmp(mine.data(), ref.data(), bytes) != 0) ++quant_diffs;
      }
      t.dequantize(mine.data(), mine_f.data(), kRow);
      theirs_dq(mine.data(), ref_f.data(), kRow);
      if (std::memcmp(mine_f.data(), ref_f.data(), kRow * sizeof(float)) != 0) ++dequant_diffs;
    }
    const std::string name(t.name);
    if (quant_diffs || dequant_diffs) {
      std::printf("FAIL: %s: %d of %zu rows quantised to other bytes than ggml's, %d dequantised to other floats\n",
                  name.c_str(), quant_diffs, rows.size(), dequant_diffs);
      ++failures;
    } else {
      std::printf("PASS: %s: %zu rows, %s and the dequantised floats equal to ggml's\n", name.c_str(), rows.size(),
                  c.compare_quantizer ? "the quantised bytes" : "(quantiser not compared)");
    }
  }
  return failures ? 1 : 0;
}
