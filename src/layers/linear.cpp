#include "layers/linear.h"

#include "common/error.h"
#include "neon/kernels.h"
#include "runtime/thread_pool.h"

namespace r1pi {

namespace {
bool takes_q8_0(GgmlType type) {
  return type == GgmlType::Q4_0 || type == GgmlType::Q8_0 || type == GgmlType::Q6_K;
}
}  // namespace

void LinearInput::set(const float* x, int B, int64_t cols) {
  x_ = x;
  B_ = B;
  cols_ = cols;
  q8_ready_ = false;
}

void LinearInput::ensure_q8_0(ThreadPool& pool) {
  if (q8_ready_) return;
  if (cols_ % QK8_0 != 0) throw Error("activation length " + std::to_string(cols_) +
                                      " is not a multiple of 32 (Q8_0 blocks)");
  q8_.resize(size_t(B_) * size_t(cols_ / QK8_0));
  const Kernels& k = kernels();
  pool.parallel_for(B_, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      k.quantize_row_q8_0(x_ + b * cols_, q8_.data() + b * (cols_ / QK8_0), cols_);
  }, 1);
  q8_ready_ = true;
}

float dot_row(const Matrix& w, int64_t r, const LinearInput& x, int b) {
  const Kernels& k = kernels();
  const void* row = w.row(r);
  switch (w.type) {
    case GgmlType::Q4_0:
      return k.vec_dot_q4_0_q8_0(w.cols, static_cast<const block_q4_0*>(row), x.q8_0_row(b));
    case GgmlType::Q8_0:
      return k.vec_dot_q8_0_q8_0(w.cols, static_cast<const block_q8_0*>(row), x.q8_0_row(b));
    case GgmlType::Q6_K:
      return k.vec_dot_q6_K_q8_0(w.cols, static_cast<const block_q6_K*>(row), x.q8_0_row(b));
    case GgmlType::F16:
      return k.vec_dot_f16_f32(w.cols, static_cast<const uint16_t*>(row), x.f32_row(b));
    case GgmlType::F32:
      return k.vec_dot_f32(w.cols, static_cast<const float*>(row), x.f32_row(b));
  }
  return 0;
}

void matmul(const Matrix& w, LinearInput& x, float* out, ThreadPool& pool) {
  if (w.cols != x.cols())
    throw Error("matmul: weight rows of " + std::to_string(w.cols) + " against input of " +
                std::to_string(x.cols()));
  if (takes_q8_0(w.type)) x.ensure_q8_0(pool);
  const int B = x.batch();
  // Rows in chunks: each weight row is read once and used for all B tokens while it is in cache.
  pool.parallel_for(w.rows, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      for (int b = 0; b < B; ++b) out[int64_t(b) * w.rows + r] = dot_row(w, r, x, b);
  }, 16);
}

}  // namespace r1pi
