// The portable kernel interface: per weight type a vec_dot and a matmul, ggml style, and the ops on
// floats; with the exact floating-point recipe that every backend (scalar reference, AVX2, AVX-512,
// NEON) must follow so that all of them return the same bytes. The scalar reference (kernels_scalar.cpp) is the definition.
//
// Shared recipe
//   reduce8(a) = ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7))
//   fma(a, b, c) is one rounding (std::fma); no other multiply-add is fused (-ffp-contract=off).
//
// Quantised dot products (n a multiple of the block size, x quantised with quantize_row_q8_0, so
// x.q is never -128: the x86 Q8_0 kernel relies on that):
//   for each 32-element block b and each lane j in 0..7:
//     p_bj = exact int32 sum over the block's elements 4j .. 4j+3 of the integer products
//       (Q4_0: (q - 8) * x.q, element i < 16 being the low nibble of qs[i] and 16 + i its high nibble;
//        Q8_0: w.q * x.q;
//        Q6_K: scales[s] * (q6 - 32) * x.q, s the 16-element sub-block that holds the four elements;
//        Q5_0: (q5 - 16) * x.q; IQ4_NL and IQ4_XS: kvalues_iq4nl[q] * x.q; MXFP4: kvalues_mxfp4[q] * x.q;
//        Q3_K: (scale_s - 32) * q3 * x.q and Q2_K: (scales[s] & 15) * q2 * x.q, s the 16-element
//        sub-block of the four elements, as Q6_K)
//     d_b = fp16_to_fp32(w.d) * fp16_to_fp32(x.d)      (Q6_K: w.d is the super-block's d;
//       IQ4_XS: (fp16_to_fp32(w.d) * fp16_to_fp32(x.d)) * (float)(scale_b - 32), as Q4_K's q part;
//       MXFP4: e8m0_to_fp32_half(w.e) * fp16_to_fp32(x.d))
//     acc[j] = fma(d_b, (float)p_bj, acc[j])
//   result = reduce8(acc)
//   Eight lanes of four elements are what AVX2's maddubs+madd and NEON's two sdot per block produce,
//   so no backend needs a horizontal sum per block; (float)p_bj is exact.
// Float dot products: acc[i % 8] = fma(a[i], b[i], acc[i % 8]) for every i; result = reduce8(acc).
//   (F16 and BF16 weights are converted to float first, exactly.)
// rmsnorm: ss = vec_dot_f32(x, x); scale = 1.0f / sqrtf(ss / n + eps); out[i] = (x[i] * scale) * w[i]
// softmax: m = max x; x[i] = exp(x[i] - m); s = reduce8 of acc[i % 8] += x[i]; inv = 1.0f / s;
//   x[i] = x[i] * inv
// exp: r1pi's own polynomial (expf_r1pi below), never libm, so every backend matches.
// silu_mul: g[i] = (g[i] / (1.0f + exp(-g[i]))) * u[i]
// rope (adjacent pairs, llama.cpp's "normal" mode): for each head h and pair i < head_dim/2,
//   x0 = x[2i], x1 = x[2i+1]:  x[2i] = x0 * c[i] - x1 * s[i];  x[2i+1] = x0 * s[i] + x1 * c[i]
// rope_neox (halves, llama.cpp's NEOX mode: Qwen): the same with x0 = x[i], x1 = x[i + head_dim/2].
// rmsnorm may write over its input (out == x: qwen3's per-head norms).
// axpy: y[i] = fma(a, x[i], y[i])
// weighted_sum (attention's values): per output element, over the positions in order,
//   out[i] = fma(p_t, v_t[i], out[i])      (F16 values converted to float first)
//   Q8_0 values: per 32-element block, pd = p_t * fp16_to_fp32(d) (one rounding), then
//   out[i] = fma(pd, (float)q_i, out[i]).
//   Each element is its own chain, so any split of the elements (on whole blocks for Q8_0) or
//   of the rows gives the same bytes.
//
// Where a type with a min term goes (Q4_K, Q5_K). ggml dequantises such a
// weight as y = d * scale * q - dmin * min, with 6-bit scale and min per 32-element sub-block and q
// unsigned, so a dot product splits into the q part and a min part that needs only the sum of the
// activations per sub-block (ggml's Q8_K carries it as bsums). In r1pi's recipe, per super-block
// and its eight sub-blocks s (each one Q8_0 activation block):
//   the q part, sub-block after sub-block, is the recipe above with p_bj = the exact int32 sum over
//     the lane's four elements of q * x.q, and the scale in the block's factor:
//     d_b = (fp16_to_fp32(w.d) * fp16_to_fp32(x.d)) * (float)scale_s   (two roundings, this order);
//   then the min part, once per super-block after its q part: lane s (= the sub-block) takes
//     acc[s] = fma(-(dmin * x_s.d), (float)(min_s * the exact sum of x_s's 32 quants), acc[s])
//     (dmin = fp16_to_fp32(w.dmin), x_s.d as float; the product rounded once, the negation
//     exact; |min_s * sum| <= 63 * 32 * 127 keeps the float exact).
//   So each lane takes one fma per block plus one per super-block, eight at a time in vectors,
//   and the backends need no per-block scalar work on the accumulators' chains.
// Q2_K (16-element sub-blocks, 4-bit scale and min) takes the same shape with the scale in the
//   lane's integer sum (above) and the min part of each 32-element block k (its sub-blocks 2k and
//   2k+1) in lane k: acc[k] = fma(-(dmin * x_k.d), (float)(min_2k * the sum of x_k's first 16
//   quants + min_2k+1 * the sum of its last 16), acc[k]) (exact: at most 2 * 15 * 16 * 127).
// Q4_1 and Q5_1 (x = d * q + m, q unsigned, 32-element blocks) take the same shape with eight
//   consecutive blocks as the super-block: the q part of blocks 8g .. 8g+7 with
//   d_b = fp16_to_fp32(w.d) * fp16_to_fp32(x.d), then lane s takes block 8g + s's min part,
//   acc[s] = fma(fp16_to_fp32(w.m) * x.d (rounded once), (float)(the exact sum of x's 32 quants),
//   acc[s]); a row's last group may hold fewer than eight blocks (rows of 32k elements).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <vector>

#include "ggml/ggml_type.h"
#include "ggml/quant_blocks.h"

namespace r1pi {

// A block of a matrix product: rows [r0, r1) of W times B activation rows.
//   out[b * out_stride + r] = vec_dot(n, W row r, x row b)   for r0 <= r < r1, b < B
// W rows are w_row_bytes apart; x rows x_row_bytes apart (Q8_0 blocks or floats, as the weight type's
// vec_dot takes them). Every output element must equal the vec_dot of its row and token bit for bit,
// however a backend tiles the work: that is what makes prefill equal token-by-token decoding.
struct MatmulArgs {
  int64_t n;
  const uint8_t* w;
  size_t w_row_bytes;
  int64_t r0, r1;
  const uint8_t* x;
  size_t x_row_bytes;
  int B;
  float* out;
  int64_t out_stride;
};

// Attention's weighted sum of value rows (attention.cpp): for each row r < R, each element i < n
// and the positions t = 0 .. T-1 in order,
//   out[r * out_stride + i] = fma(p[r * p_stride + t], v_t[i], out[r * out_stride + i])
// with v_t the row at v + t * v_row_bytes. out is added to, not cleared: a second call over later
// positions continues the same chains (causal prefill gives each token its own last positions).
struct WeightedSumArgs {
  int64_t n;
  const uint8_t* v;
  size_t v_row_bytes;
  int64_t T;
  const float* p;
  int64_t p_stride;
  int R;
  float* out;
  int64_t out_stride;
};

// The weight types that have kernels, in the order of every backend's per-type table
// (Kernels::types), each with the type its kernels take the activations in. A new type is one row
// here and a scalar reference kernel (docs/extending.md: adding a weight type).
struct KernelType {
  GgmlType weight;
  GgmlType activation;
};
inline constexpr KernelType kKernelTypeRows[] = {
    {GgmlType::F32, GgmlType::F32},     {GgmlType::F16, GgmlType::F32},    {GgmlType::Q4_0, GgmlType::Q8_0},
    {GgmlType::Q8_0, GgmlType::Q8_0},   {GgmlType::Q6_K, GgmlType::Q8_0},  {GgmlType::Q4_K, GgmlType::Q8_0},
    {GgmlType::Q5_K, GgmlType::Q8_0},   {GgmlType::Q4_1, GgmlType::Q8_0},  {GgmlType::Q5_0, GgmlType::Q8_0},
    {GgmlType::Q5_1, GgmlType::Q8_0},   {GgmlType::IQ4_NL, GgmlType::Q8_0}, {GgmlType::IQ4_XS, GgmlType::Q8_0},
    {GgmlType::BF16, GgmlType::F32},    {GgmlType::Q2_K, GgmlType::Q8_0},  {GgmlType::Q3_K, GgmlType::Q8_0},
    {GgmlType::MXFP4, GgmlType::Q8_0},
};
// The weight types of kKernelTypeRows, in its order.
inline constexpr std::array kKernelTypes = [] {
  std::array<GgmlType, std::size(kKernelTypeRows)> types{};
  for (size_t i = 0; i < types.size(); ++i) types[i] = kKernelTypeRows[i].weight;
  return types;
}();

// The place of a type in kKernelTypes; kKernelTypes.size() for a type without kernels.
constexpr size_t kernel_type_index(GgmlType type) {
  for (size_t i = 0; i < kKernelTypes.size(); ++i)
    if (kKernelTypes[i] == type) return i;
  return kKernelTypes.size();
}

// The kernels of one weight type, ggml-cpu's type_traits_cpu: w is a row of that type, x a row of
// its activation type (activation_type below) of the same n elements. Both nullptr: the backend
// has none of its own (for_type then gives the scalar reference's).
struct TypeKernels {
  float (*vec_dot)(int64_t n, const void* w, const void* x);
  void (*matmul)(const MatmulArgs& a);
};

// A backend's per-type kernels: entry i is for kKernelTypes[i].
using TypeTable = std::array<TypeKernels, kKernelTypes.size()>;

// One weight type's kernels, to fill a TypeTable by type.
struct TypeEntry {
  GgmlType type;
  TypeKernels kernels;
};

// `table` with each entry at its type's place (replacing what was there). Backends build their
// tables with it at compile time, where a type without kernels stops the compilation.
constexpr TypeTable with(TypeTable table, std::initializer_list<TypeEntry> entries) {
  for (const TypeEntry& e : entries) {
    const size_t i = kernel_type_index(e.type);
    if (i == kKernelTypes.size()) throw std::invalid_argument("a weight type not in kKernelTypes");
    table[i] = e.kernels;
  }
  return table;
}
// A table of the given entries, the other types' entries empty.
constexpr TypeTable by_type(std::initializer_list<TypeEntry> entries) { return with({}, entries); }
// A table with an entry for every type of kKernelTypes (the scalar reference's): a type left out
// stops the compilation. It checks the types named, not the pointers, which sanitizer builds do
// not treat as constants.
constexpr TypeTable for_every_type(std::initializer_list<TypeEntry> entries) {
  std::array<bool, kKernelTypes.size()> named{};
  for (const TypeEntry& e : entries)
    if (const size_t i = kernel_type_index(e.type); i < named.size()) named[i] = true;
  for (bool n : named)
    if (!n) throw std::invalid_argument("a type of kKernelTypes without its entry");
  return by_type(entries);
}

// The ops on floats as a backend's table lists them, each the function of that name in the
// backend's namespace (ns: its qualifier, such as x86::, or nothing for the file's own): the list
// of those members is written once, here, not once per backend.
#define R1PI_FLOAT_OPS(ns)                                                                              \
  .vec_dot_f32 = ns vec_dot_f32, .rmsnorm = ns rmsnorm, .softmax = ns softmax, .silu_mul = ns silu_mul, \
  .rope = ns rope, .rope_neox = ns rope_neox, .axpy = ns axpy

// One backend: the per-type kernels, and the ops on floats. Backends fill it with designated
// initialisers (every entry but a type's must be filled: the kernel tests refuse a nullptr).
struct Kernels {
  const char* name;  // "scalar", "avx2", "avx2-vnni", "avx512-vnni", "neon-dotprod", "neon"

  void (*quantize_row_q8_0)(const float* x, block_q8_0* y, int64_t n);

  // By type (by_type, with); reach them through for_type, which falls back to the scalar
  // reference's for a type this backend leaves empty.
  TypeTable types;

  float (*vec_dot_f32)(int64_t n, const float* a, const float* b);
  void (*rmsnorm)(float* out, const float* x, const float* w, int64_t n, float eps);
  void (*softmax)(float* x, int64_t n);
  void (*silu_mul)(float* g, const float* u, int64_t n);
  void (*rope)(float* x, int64_t n_heads, int64_t head_dim, const float* cos, const float* sin);
  void (*rope_neox)(float* x, int64_t n_heads, int64_t head_dim, const float* cos, const float* sin);
  void (*axpy)(float* y, float a, const float* x, int64_t n);
  // weighted_sum over value rows of each KV cache type (F32, F16, Q8_0: n a multiple of 32).
  void (*weighted_sum_f32)(const WeightedSumArgs& a);
  void (*weighted_sum_f16)(const WeightedSumArgs& a);
  void (*weighted_sum_q8_0)(const WeightedSumArgs& a);
};

// The per-type facts, from one table with a row per weight type (kernels.cpp): the activation type
// its kernels take (Q8_0 or F32), and a backend's kernels for it: its own entry, or the scalar
// reference's where it leaves that entry empty. Both throw Error for a type without kernels.
GgmlType activation_type(GgmlType weight);
const TypeKernels& for_type(const Kernels& backend, GgmlType weight);

// The scalar reference backend: always available, the definition of every result.
const Kernels& kernels_scalar();
// The backend this process uses (the fastest the CPU supports; R1PI_BACKEND=scalar forces the
// reference, or names another backend of this build).
const Kernels& kernels();

// ARM NEON backends (kernels_neon.cpp); nullptr where this build has none. "neon" exists in every
// 64-bit ARM build; "neon-dotprod" (kernels_neon_dotprod.cpp) where the CPU has the dot-product
// extension (checked at run time: the rest of the binary is plain ARMv8-A).
const Kernels* kernels_neon();
const Kernels* kernels_neon_dotprod();

// The x86 AVX2 backend (kernels_avx2.cpp with what every x86 backend shares, kernels_x86.h: AVX2 +
// FMA + F16C); nullptr where this build is not for x86 or the CPU lacks one of the three (checked
// at run time: the binary itself is baseline x86-64).
const Kernels* kernels_avx2();
// The same with AVX-VNNI (kernels_avx2_vnni.cpp, "avx2-vnni"): nullptr unless the CPU has AVX-VNNI
// too and the compiler could build for it.
const Kernels* kernels_avx2_vnni();
// The same with AVX-512 F/BW/VL/DQ/VNNI (kernels_avx512_vnni.cpp, "avx512-vnni"): nullptr unless
// the CPU and OS have them and the compiler could build it.
const Kernels* kernels_avx512_vnni();

// Every backend this build can run on this CPU, fastest first, the scalar reference last.
// kernels() takes the first unless R1PI_BACKEND names another.
std::vector<const Kernels*> available_backends();

// r1pi's exp: range reduction by ln 2 and a fixed polynomial, the same float operations on every
// backend. Accurate to a few ulp; returns 0 below -87.3 and +inf above 88.7.
float expf_r1pi(float x);

}  // namespace r1pi
