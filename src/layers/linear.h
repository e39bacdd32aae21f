// y = W x for a batch of B tokens: the one op that reads the weights.
//
// Quantised weights (Q4_0, Q8_0, Q6_K) take the activations quantised to Q8_0, once per input and
// shared by every matrix that reads it (wq/wk/wv, w1/w3); F32 and F16 weights take them as floats.
// Each output element is one kernel call on one weight row and one token, so the result neither
// depends on the batch size nor on which thread computed it.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "common/error.h"
#include "ggml/quant_blocks.h"
#include "model/model_weights.h"
#include "neon/kernels.h"

namespace r1pi {

class ThreadPool;

// Thrown by LinearInput::ensure_q8_0 for an input Q8_0 cannot hold: one past 127 x 65504 (the
// block's fp16 scale would be inf, and the products noise or zero), NaN or inf. `row` is the
// input's row; the forward names the layer and position.
struct ActivationRangeError : Error {
  ActivationRangeError(const std::string& what, int row) : Error(what), row(row) {}
  int row;
};

// Whether a Q8_0 block's fp16 scale is inf or NaN (all exponent bits set): its input was past
// 127 x 65504, or not finite, and the block's products are lost.
inline bool q8_0_scale_overflows(const block_q8_0& block) { return (block.d & 0x7c00) == 0x7c00; }

class LinearInput {
 public:
  // x: B rows of `cols` floats, kept by pointer (must outlive the matmuls that use it). what: the
  // input's name in messages ("the attention input (attn_norm's output)").
  void set(const float* x, int B, int64_t cols, const char* what = "a matmul input");
  int batch() const { return B_; }
  int64_t cols() const { return cols_; }
  const float* f32_row(int b) const { return x_ + int64_t(b) * cols_; }
  const block_q8_0* q8_0_row(int b) const { return q8_.data() + int64_t(b) * (cols_ / QK8_0); }
  // Quantises to Q8_0 (with kern's quantiser) on first use after set().
  void ensure_q8_0(ThreadPool& pool, const Kernels& kern);

 private:
  const float* x_ = nullptr;
  int B_ = 0;
  int64_t cols_ = 0;
  bool q8_ready_ = false;
  const char* what_ = "";
  std::vector<block_q8_0> q8_;
};

// out[b * w.rows + r] = W[r] . x[b] for b < x.batch(), r < w.rows, with kern's kernels (the
// process's backend unless a test names another).
void matmul(const Matrix& w, LinearInput& x, float* out, ThreadPool& pool, const Kernels& kern = kernels());

// Several products of one input (wq/wk/wv, w1/w3), each as matmul computes it, in one pass of the
// thread pool over all their rows: one hand-off instead of several, and a small matrix (wk, wv)
// no longer runs alone in short chunks. Results are those of separate matmul calls, bit for bit.
struct Product {
  const Matrix& w;
  float* out;
};
void matmul_each(std::initializer_list<Product> products, LinearInput& x, ThreadPool& pool,
                 const Kernels& kern = kernels());

// Products of separate inputs (a mixture of experts: each chosen expert's matrices on the tokens
// that chose it), each as matmul computes it, in one pass of the thread pool.
struct InputProduct {
  const Matrix* w;
  LinearInput* x;
  float* out;
};
void matmul_inputs(const std::vector<InputProduct>& products, ThreadPool& pool, const Kernels& kern = kernels());

// The shortest chunk of rows the thread pool hands out for `rows` rows in all (bench_kernels
// measures with it).
int64_t matmul_min_chunk(int64_t rows, int threads);

}  // namespace r1pi
