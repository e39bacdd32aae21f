#include "layers/linear.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "common/error.h"
#include "neon/kernels.h"
#include "common/thread_pool.h"

namespace r1pi {

void LinearInput::set(const float* x, int B, int64_t cols, const char* what) {
  x_ = x;
  B_ = B;
  cols_ = cols;
  what_ = what;
  q8_ready_ = false;
}

namespace {

// The scale of a block past Q8_0's range is an fp16 inf (NaN for NaN input): all exponent bits set.
// Checked on the quantiser's output, so every backend's quantiser is covered, at one compare per
// 32 floats; the values themselves are not touched.
void check_q8_0_range(const std::vector<block_q8_0>& q8, const float* x, int64_t blocks_per_row,
                      const char* what) {
  for (size_t i = 0; i < q8.size(); ++i) {
    if (!q8_0_scale_overflows(q8[i])) continue;
    float amax = 0;
    for (int j = 0; j < QK8_0; ++j) {
      const float v = std::fabs(x[i * QK8_0 + j]);
      if (std::isnan(v)) {  // NaN wins, so that it is what the message shows
        amax = v;
        break;
      }
      amax = std::max(amax, v);
    }
    char value[32];
    std::snprintf(value, sizeof value, "%g", amax);
    const std::string problem = std::string("holds ") + value +
        (std::isfinite(amax) ? ", past the largest value a Q8_0 activation holds (127 x 65504, about 8.3e6)" : "");
    throw ActivationRangeError(std::string(what) + " " + problem, int(int64_t(i) / blocks_per_row));
  }
}

}  // namespace

void LinearInput::ensure_q8_0(ThreadPool& pool, const Kernels& backend) {
  if (q8_ready_) return;
  if (cols_ % QK8_0 != 0) throw Error("activation length " + std::to_string(cols_) +
                                      " is not a multiple of 32 (Q8_0 blocks)");
  q8_.resize(size_t(B_) * size_t(cols_ / QK8_0));
  // Rows in chunks of at least 16384 floats (a few microseconds): a smaller input (a decode step,
  // a mixture of experts' few tokens per expert) is quantised by the caller, not handed to the
  // pool, whose hand-off would cost more than the work.
  pool.parallel_for(B_, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      backend.quantize_row_q8_0(x_ + b * cols_, q8_.data() + b * (cols_ / QK8_0), cols_);
  }, std::max<int64_t>(1, 16384 / cols_));
  check_q8_0_range(q8_, x_, cols_ / QK8_0, what_);
  q8_ready_ = true;
}

void matmul(const Matrix& w, LinearInput& x, float* out, ThreadPool& pool, const Kernels& kern) {
  matmul_each({{w, out}}, x, pool, kern);
}

void matmul_each(std::initializer_list<Product> products, LinearInput& x, ThreadPool& pool, const Kernels& backend) {
  std::vector<InputProduct> each;
  each.reserve(products.size());
  for (const Product& p : products) each.push_back({&p.w, &x, p.out});
  matmul_inputs(each, pool, backend);
}

void matmul_inputs(const std::vector<InputProduct>& products, ThreadPool& pool, const Kernels& backend) {
  struct Job {
    MatmulArgs args;
    void (*kernel)(const MatmulArgs&);
    int64_t first_row;  // in the rows of all products one after the other
    int64_t rows;
  };
  std::vector<Job> jobs;
  jobs.reserve(products.size());
  int64_t total_rows = 0;
  for (const InputProduct& p : products) {
    const Matrix& w = *p.w;
    LinearInput& x = *p.x;
    if (w.cols != x.cols())
      throw Error("matmul: weight rows of " + std::to_string(w.cols) + " against input of " +
                  std::to_string(x.cols()));
    const bool q8 = activation_type(w.type) == GgmlType::Q8_0;
    if (q8) x.ensure_q8_0(pool, backend);
    const MatmulArgs args{
        w.cols, w.data, w.row_bytes, 0, 0,
        q8 ? reinterpret_cast<const uint8_t*>(x.q8_0_row(0))
           : reinterpret_cast<const uint8_t*>(x.f32_row(0)),
        q8 ? sizeof(block_q8_0) * size_t(x.cols() / QK8_0) : sizeof(float) * size_t(x.cols()),
        x.batch(), p.out, w.rows};
    jobs.push_back({args, for_type(backend, w.type).matmul, total_rows, w.rows});
    total_rows += w.rows;
  }
  // A chunk that spans two products is one kernel call on each part.
  pool.parallel_for(total_rows, [&](int64_t r0, int64_t r1) {
    for (const Job& job : jobs) {
      const int64_t begin = std::max(r0, job.first_row) - job.first_row;
      const int64_t end = std::min(r1, job.first_row + job.rows) - job.first_row;
      if (begin >= end) continue;
      MatmulArgs part = job.args;
      part.r0 = begin;
      part.r1 = end;
      job.kernel(part);
    }
  }, matmul_min_chunk(total_rows, pool.size()));
}

// Rows in chunks: each chunk streams its weight rows once for all B tokens. The pool starts with
// long chunks and ends with short ones, down to 1/32 of the rows per thread (at least 16 rows):
// long runs for the hardware prefetcher, little waiting at the end.
int64_t matmul_min_chunk(int64_t rows, int threads) {
  return std::max<int64_t>(16, rows / (int64_t(threads) * 32));
}

}  // namespace r1pi
