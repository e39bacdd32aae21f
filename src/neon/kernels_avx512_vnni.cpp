// The "avx512-vnni" backend: AVX2 + FMA + F16C with AVX-512 F/BW/VL/DQ/VNNI (Intel Cascade Lake
// and later servers, AMD Zen 4 and later). The VNNI policies in 256 bits (vpdpbusd from AVX512-VNNI
// with AVX512VL); two weight rows in each 512-bit register for Q6_K products of 1 to 4 tokens and
// Q4_0 products of 1 to 4 (few_tile_pairs), two tokens in each for larger Q4_0, Q8_0, Q6_K, Q4_K
// and Q5_K products (kernels_avx512_batch.h); the same bytes as every other backend. Where the compiler cannot target
// AVX-512 (CMakeLists.txt then leaves the flags out) this build simply has no such backend.
#include "neon/kernels.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    defined(__AVX512DQ__) && defined(__AVX512VNNI__)
// GCC 12's AVX-512 intrinsics start some results from a self-initialised "undefined" register,
// which -Wmaybe-uninitialized reports at every use (a known false positive of the headers).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "neon/kernels_x86_float.h"
#include "neon/kernels_x86_super_block_policies.h"

namespace r1pi {

namespace {

struct Avx512 {
  static constexpr int kVectorRegisters = 32;
  static R1PI_INLINE __m256i dot4_add(__m256i acc, __m256i u, __m256i s) {
    return _mm256_dpbusd_epi32(acc, u, s);
  }
};

// few_tile with rows 2i and 2i + 1 in one 512-bit register (lanes 0..7 and 8..15): each lane is
// computed exactly as in the 256-bit tile, with about half the instructions per weight byte.
// Policies with unpack2 / lanes2 / scaled2 (W2) take this path: Q6_K with 1 to 4 tokens, whose
// unpacking is the costliest, and Q4_0 with 1 to 4 (more tokens go to kernels_avx512_batch.h).
template <class P, int R, int T>
R1PI_INLINE void few_tile_pairs(const uint8_t* const* rows, const MatmulArgs& a, const Prepared& pp,
                                int64_t nb, __m256 (&acc)[R][T], const float* lut, size_t pf) {
  constexpr int H = R / 2;
  __m512 acc2[H][T];
  for (int h = 0; h < H; ++h)
    for (int t = 0; t < T; ++t)
      acc2[h][t] = _mm512_insertf32x8(_mm512_castps256_ps512(acc[2 * h][t]), acc[2 * h + 1][t], 1);
  const __m512 magic = _mm512_broadcast_f32x8(P::magic());
  auto block = [&]<int k, bool kPrefetch>(int64_t b) {
    const int64_t bk = b + k;
    __m512i xv[T], corr[T];
    __m512 dxb[T];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      const TokenBlock x = token_block<P, T>(a, pp, bk, t);
      xv[t] = _mm512_broadcast_i64x4(x.q);
      corr[t] = _mm512_broadcast_i64x4(x.corr);
      dxb[t] = _mm512_set1_ps(x.d);
    }
#pragma GCC unroll 8
    for (int h = 0; h < H; ++h) {
      if constexpr (kPrefetch) {
        _mm_prefetch(reinterpret_cast<const char*>(rows[2 * h] + pf + bk * P::kBlockBytes), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(rows[2 * h + 1] + pf + bk * P::kBlockBytes), _MM_HINT_T0);
      }
      const typename P::W2 w = P::template unpack2<k>(rows[2 * h], rows[2 * h + 1], b, lut);
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        const __m512 d = _mm512_mul_ps(w.dw, dxb[t]);
        const __m512 f =
            P::scaled2(_mm512_sub_ps(_mm512_castsi512_ps(P::lanes2(w, xv[t], corr[t])), magic), w);
        acc2[h][t] = _mm512_fmadd_ps(d, f, acc2[h][t]);
      }
    }
  };
  for_each_block<P>(nb, block);
  for (int h = 0; h < H; ++h)
    for (int t = 0; t < T; ++t) {
      acc[2 * h][t] = _mm512_castps512_ps256(acc2[h][t]);
      acc[2 * h + 1][t] = _mm512_extractf32x8_ps(acc2[h][t], 1);
    }
}

// Two rows' block b in one 512-bit register (row0 in lanes 0..7, row1 in 8..15), each half as
// Q4_0Vnni::unpack1 makes it.
struct Q4_0Pairs : Q4_0Vnni<Avx512> {
  struct W2 {
    __m512i q;
    __m512 dw;
  };
  template <int k>
  static R1PI_INLINE W2 unpack2(const uint8_t* row0, const uint8_t* row1, int64_t b, const float* lut) {
    const uint8_t* blk0 = row0 + b * int64_t(sizeof(block_q4_0));
    const uint8_t* blk1 = row1 + b * int64_t(sizeof(block_q4_0));
    __m512i raw = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk0 + 2)));
    raw = _mm512_mask_broadcast_i32x4(raw, 0xFF00, _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk1 + 2)));
    const __m512i nibbles = _mm512_broadcast_i64x4(nibble_masks());
    const __m512 dw = _mm512_mask_broadcastss_ps(_mm512_set1_ps(lut[load_u16(blk0)]), 0xFF00,
                                                 _mm_load_ss(lut + load_u16(blk1)));
    return {_mm512_and_si512(raw, nibbles), dw};
  }
  static R1PI_INLINE __m512i lanes2(const W2& w, __m512i x, __m512i corr) {
    return _mm512_dpbusd_epi32(corr, w.q, x);
  }
  static R1PI_INLINE __m512 scaled2(__m512 f, const W2&) { return f; }
};

// Two rows' block k of super-block b / 8 in one 512-bit register (row0 in lanes 0..7, row1 in
// 8..15), each half as Q6_KVnni::unpack1 makes it.
struct Q6_KPairs : Q6_KVnni<Avx512> {
  // Two pairs of rows (bench/README.md).
  static constexpr int kRowsSingle = 4;
  struct W2 {
    __m512i q;
    __m512 sf;
    __m512 dw;
  };
  template <int k>
  static R1PI_INLINE W2 unpack2(const uint8_t* row0, const uint8_t* row1, int64_t b, const float* lut) {
    const block_q6_K* sb0 = reinterpret_cast<const block_q6_K*>(row0) + b / 8;
    const block_q6_K* sb1 = reinterpret_cast<const block_q6_K*>(row1) + b / 8;
    const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(quants<k>(sb0)), quants<k>(sb1), 1);
    // Both rows' scales of this half of the super-block (row0's eight, then row1's), as floats.
    const __m128i sc0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sb0->scales));
    const __m128i sc1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sb1->scales));
    const __m512 half = _mm512_cvtepi32_ps(
        _mm512_cvtepi8_epi32(k < 4 ? _mm_unpacklo_epi64(sc0, sc1) : _mm_unpackhi_epi64(sc0, sc1)));
    constexpr int i = 2 * (k % 4);
    const __m512 sf = _mm512_permutexvar_ps(
        _mm512_setr_epi32(i, i, i, i, i + 1, i + 1, i + 1, i + 1, 8 + i, 8 + i, 8 + i, 8 + i, 9 + i,
                          9 + i, 9 + i, 9 + i),
        half);
    const __m512 dw = _mm512_mask_broadcastss_ps(_mm512_set1_ps(lut[sb0->d]), 0xFF00, _mm_load_ss(lut + sb1->d));
    return {q, sf, dw};
  }
  static R1PI_INLINE __m512i lanes2(const W2& w, __m512i x, __m512i corr) {
    return _mm512_dpbusd_epi32(corr, w.q, x);
  }
  static R1PI_INLINE __m512 scaled2(__m512 t, const W2& w) { return _mm512_mul_ps(t, w.sf); }
};

}  // namespace
}  // namespace r1pi

#include "neon/kernels_avx512_batch.h"
#include "neon/kernels_avx512_batch_policies.h"

namespace r1pi {
namespace {

// Up to `Few` tokens the decode paths (Small: matmul_quant or matmul_min), more in token pairs
// (kernels_avx512_batch.h). With every core streaming weights from memory Q4_0's row pairs stay
// ahead up to 3-4 tokens, the token pairs from 5-6 on (bench/README.md); Q6_K's token pairs beat
// its row pairs at 8 tokens too (1.45 against 1.77 ms, 4096 x 4096, 1 thread).
template <int Few, void (*Small)(const MatmulArgs&), class U>
void matmul_batched(const MatmulArgs& a) {
  if (a.B <= Few) return Small(a);
  matmul_pairs<U>(a);
}
template <int Few, void (*Small)(const MatmulArgs&), class U>
constexpr TypeKernels batched_entries() {
  return {.vec_dot = dot_via_matmul<Small>, .matmul = matmul_batched<Few, Small, U>};
}

// The float products again with 32 registers: tiles of 4 rows x 4 tokens for more than four
// tokens (batched attention's scores), the same bytes as the shared AVX2 ones; F32 value rows in
// 512-bit tiles (weighted_sum_f32_512).
void matmul_f16_f32_512(const MatmulArgs& a) { matmul_float<FloatRow::F16, 32>(a); }
void matmul_f32_f32_512(const MatmulArgs& a) { matmul_float<FloatRow::F32, 32>(a); }
void matmul_bf16_f32_512(const MatmulArgs& a) { matmul_float<FloatRow::BF16, 32>(a); }

constexpr Kernels avx512_kernels() {
  Kernels k = x86_kernels("avx512-vnni", {
      {GgmlType::F32, {.vec_dot = x86::vec_dot_f32_untyped, .matmul = matmul_f32_f32_512}},
      {GgmlType::F16, {.vec_dot = x86::vec_dot_f16, .matmul = matmul_f16_f32_512}},
      {GgmlType::BF16, {.vec_dot = x86::vec_dot_bf16, .matmul = matmul_bf16_f32_512}},
      {GgmlType::Q4_0, batched_entries<4, matmul_quant<Q4_0Pairs>, Q4_0Batch>()},
      {GgmlType::Q8_0, batched_entries<4, matmul_quant<Q8_0Policy<Avx512>>, Q8_0Batch>()},
      {GgmlType::Q5_0, quant_entries<Q5_0Policy<Avx512>>()},
      {GgmlType::IQ4_NL, quant_entries<Iq4NlPolicy<Avx512>>()},
      {GgmlType::Q6_K, batched_entries<4, matmul_quant<Q6_KPairs>, Q6_KBatch<Avx512>>()},
      {GgmlType::Q4_K, batched_entries<4, matmul_min<Q4_KPolicy<Avx512>>, K4Batch<Q4_KPolicy<Avx512>>>()},
      {GgmlType::Q5_K, batched_entries<4, matmul_min<Q5_KPolicy<Avx512>>, K4Batch<Q5_KPolicy<Avx512>>>()},
      {GgmlType::Q4_1, min_term_entries<Q4_1Policy<Avx512>>()},
      {GgmlType::Q5_1, min_term_entries<Q5_1Policy<Avx512>>()},
      {GgmlType::IQ4_XS, min_term_entries<Iq4XsPolicy<Avx512>>()},
      {GgmlType::Q2_K, min_term_entries<Q2_KPolicy<Avx512>>()},
      {GgmlType::Q3_K, min_term_entries<Q3_KPolicy<Avx512>>()},
      {GgmlType::MXFP4, quant_entries<Mxfp4Policy<Avx512>>()},
  });
  k.weighted_sum_f32 = weighted_sum_f32_512;
  return k;
}
constexpr Kernels kAvx512Vnni = avx512_kernels();

}  // namespace

// Only kernels.cpp calls this, after checking the CPU (kernels_avx512_vnni() in kernels.h).
const Kernels* kernels_avx512_vnni_unchecked() { return &kAvx512Vnni; }

}  // namespace r1pi

#else
namespace r1pi {
const Kernels* kernels_avx512_vnni_unchecked() { return nullptr; }
}  // namespace r1pi
#endif
