// Google Benchmark of the matrix products as the engine runs them (rows in the chunks that
// layers/linear.cpp hands the thread pool, activations quantised once per input), for every backend
// of this build and CPU:
//
//   read_bw/threads:T                   the read bandwidth of this run (read_sum.h, 1 GiB)
//   matvec/<backend>/<type>/RxC/threads:T   B = 1 (decode): weight GB/s and bw_frac, the fraction
//                                       of this run's read bandwidth at the same thread count
//   int8_peak/<backend>/threads:T       the backend's own int8 multiply-add rate (int8_peak.h)
//   matmul/<backend>/<type>/RxC/B:n/threads:T  the batch curve: GOP/s (2 ops per multiply-add) and,
//                                       for B > 1, peak_frac: its share of that int8 peak
//
// Every weight matrix is replicated to fill >= 1 GiB and the iterations rotate through the copies,
// so that B = 1 reads memory, not the last-level cache. Shapes are the 8B model's (4096 x 4096:
// wq/wo; 14336 x 4096: w1/w3; 4096 x 14336: w2; 128256 x 4096 Q6_K: the output matrix; Q4_K
// and Q6_K in a Q4_K_M file's long-row shapes (Q6_K holds half its w2); Q5_K; Q5_0 and IQ4_NL as
// llama-quantize's fallbacks; Q4_1, Q5_1, IQ4_XS, BF16, Q2_K and Q3_K at 4096 x 4096 beside
// Q4_0's; MXFP4 in gpt-oss's expert shape, 2880 x 2880).
// Extra flags: --backends=avx2,scalar (default: all but scalar) --quick (fewer shapes)
//   --chunk=N the shortest pool task in rows (default: linear.cpp's matmul_min_chunk).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ggml/bf16.h"
#include "ggml/fp16.h"
#include "ggml/ggml_type.h"
#include "neon/kernels.h"
#include "ggml/quant_blocks.h"
#include "int8_peak.h"
#include "read_sum.h"
#include "common/thread_pool.h"
#include "layers/linear.h"

namespace {

using r1pi::GgmlType;
using r1pi::Kernels;
using r1pi::MatmulArgs;
using r1pi::ThreadPool;

constexpr size_t kGiB = size_t(1) << 30;
int64_t g_chunk = 0;  // the shortest pool task in rows; 0: as the engine chooses

ThreadPool& pool(int threads) {
  static std::map<int, std::unique_ptr<ThreadPool>> pools;
  auto& p = pools[threads];
  if (!p) p = std::make_unique<ThreadPool>(threads);
  return *p;
}

// Read bandwidth measured in this run, per thread count (for bw_frac).
std::map<int, double>& measured_bw() {
  static std::map<int, double> bw;
  return bw;
}

// Each backend's int8 peak measured in this run, per thread count (for peak_frac).
std::map<std::pair<std::string, int>, double>& measured_peak() {
  static std::map<std::pair<std::string, int>, double> peak;
  return peak;
}

size_t row_bytes(GgmlType t, int64_t cols) { return r1pi::ggml_row_bytes(t, uint64_t(cols)); }

// Random weights with realistic scales (no subnormal products to slow the float unit down),
// replicated to at least min_bytes. Only one set is alive at a time.
struct WeightSet {
  GgmlType type;
  int64_t rows = 0, cols = 0;
  size_t matrix_bytes = 0, copies = 0, total = 0;
  r1pi::HugeBuffer buffer;
  const uint8_t* copy(size_t i) const { return buffer.data() + (i % copies) * matrix_bytes; }
};

const WeightSet& weights(GgmlType t, int64_t rows, int64_t cols) {
  static std::unique_ptr<WeightSet> current;
  if (current && current->type == t && current->rows == rows && current->cols == cols) return *current;
  current.reset();
  auto w = std::make_unique<WeightSet>();
  w->type = t;
  w->rows = rows;
  w->cols = cols;
  w->matrix_bytes = (size_t(rows) * row_bytes(t, cols) + 4095) & ~size_t(4095);
  w->copies = (kGiB + w->matrix_bytes - 1) / w->matrix_bytes;
  w->total = w->copies * w->matrix_bytes;
  w->buffer = r1pi::bench::alloc_buffer(w->total);
  uint64_t s = 0x9E3779B97F4A7C15ull;
  auto next = [&s] {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  };
  // One matrix of random bytes with its scales set, then copied (the copies are separate memory).
  uint8_t* m = w->buffer.data();
  for (size_t i = 0; i + 8 <= w->matrix_bytes; i += 8) {
    const uint64_t v = next();
    std::memcpy(m + i, &v, 8);
  }
  const size_t rb = row_bytes(t, cols);
  for (int64_t r = 0; r < rows; ++r) {
    uint8_t* row = m + size_t(r) * rb;
    if (t == GgmlType::MXFP4) {  // the exponent byte leads: scales near 2^-8, no subnormals
      for (int64_t b = 0; b < cols / 32; ++b) row[b * int64_t(r1pi::ggml_block_bytes(t))] = uint8_t(116 + next() % 8);
    } else if (r1pi::ggml_block_elements(t) == 32) {  // Q4_0, Q5_0, IQ4_NL: d leads the block
      // (Q4_1, Q5_1: d, then m)
      const bool with_m = t == GgmlType::Q4_1 || t == GgmlType::Q5_1;
      for (int64_t b = 0; b < cols / 32; ++b) {
        const uint16_t d[2] = {r1pi::fp32_to_fp16(0.001f + float(next() % 1000) * 1e-5f),
                               r1pi::fp32_to_fp16(-0.01f + float(next() % 1000) * 1e-5f)};
        std::memcpy(row + b * int64_t(r1pi::ggml_block_bytes(t)), d, with_m ? 4 : 2);
      }
    } else if (t == GgmlType::BF16) {  // every element a weight of realistic size
      for (int64_t i = 0; i < cols; ++i) {
        const uint16_t v = r1pi::fp32_to_bf16(float(int64_t(next() % 2001) - 1000) * 1e-5f);
        std::memcpy(row + 2 * i, &v, 2);
      }
    } else if (t == GgmlType::Q2_K || t == GgmlType::Q3_K) {  // d (and dmin) end the block
      for (int64_t b = 0; b < cols / 256; ++b) {
        const uint16_t d[2] = {r1pi::fp32_to_fp16(0.0001f + float(next() % 1000) * 1e-7f),
                               r1pi::fp32_to_fp16(0.0001f + float(next() % 1000) * 1e-7f)};
        uint8_t* end = row + size_t(b + 1) * r1pi::ggml_block_bytes(t);
        if (t == GgmlType::Q2_K) std::memcpy(end - 4, d, 4);
        else std::memcpy(end - 2, d, 2);
      }
    } else if (t == GgmlType::Q6_K) {
      for (int64_t b = 0; b < cols / 256; ++b) {
        auto* blk = reinterpret_cast<r1pi::block_q6_K*>(row) + b;
        blk->d = r1pi::fp32_to_fp16(0.0001f + float(next() % 1000) * 1e-7f);
      }
    } else {  // Q4_K, Q5_K: d and dmin lead the block (IQ4_XS: d, then its high scale bits)
      for (int64_t b = 0; b < cols / 256; ++b) {
        const uint16_t d[2] = {r1pi::fp32_to_fp16(0.0001f + float(next() % 1000) * 1e-7f),
                               r1pi::fp32_to_fp16(0.0001f + float(next() % 1000) * 1e-7f)};
        std::memcpy(row + size_t(b) * rb / size_t(cols / 256), d, 4);
      }
    }
  }
  for (size_t c = 1; c < w->copies; ++c) std::memcpy(m + c * w->matrix_bytes, m, w->matrix_bytes);
  current = std::move(w);
  return *current;
}

// B activation rows quantised by the backend itself.
std::vector<r1pi::block_q8_0> activations(const Kernels& k, int64_t cols, int B) {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(size_t(cols) * B);
  for (float& v : x) v = normal(rng);
  std::vector<r1pi::block_q8_0> q(size_t(cols / 32) * B);
  for (int b = 0; b < B; ++b) k.quantize_row_q8_0(x.data() + size_t(b) * cols, q.data() + size_t(b) * (cols / 32), cols);
  return q;
}

// linear.cpp's matmul: chunks of rows over the pool, each a kernel call for all B tokens.
void run_matmul(const Kernels& k, GgmlType t, ThreadPool& p, const uint8_t* w, int64_t rows,
                int64_t cols, const r1pi::block_q8_0* x, int B, float* out) {
  void (*kernel)(const MatmulArgs&) = r1pi::for_type(k, t).matmul;
  const MatmulArgs args{cols, w, row_bytes(t, cols), 0, 0, reinterpret_cast<const uint8_t*>(x),
                        sizeof(r1pi::block_q8_0) * size_t(cols / 32), B, out, rows};
  p.parallel_for(rows, [&](int64_t r0, int64_t r1) {
    MatmulArgs c = args;
    c.r0 = r0;
    c.r1 = r1;
    kernel(c);
  }, g_chunk > 0 ? g_chunk : r1pi::matmul_min_chunk(rows, p.size()));
}

void BM_read_bw(benchmark::State& state, int threads) {
  static const r1pi::HugeBuffer memory = r1pi::bench::alloc_buffer(kGiB);
  const uint8_t* buf = memory.data();
  ThreadPool& p = pool(threads);
  double best = 0;
  for (auto _ : state) {
    const double gbps = r1pi::bench::read_once(p, buf, kGiB);
    if (gbps > best) best = gbps;
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(kGiB));
  state.counters["best_GBps"] = best;
  measured_bw()[threads] = best;
  state.SetLabel(r1pi::bench::read_sum_kind());
}

void BM_int8_peak(benchmark::State& state, const Kernels* k, int threads) {
  double best = 0;
  for (auto _ : state) best = std::max(best, r1pi::bench::int8_peak_gops(k->name, threads));
  state.counters["GOPs"] = best;
  measured_peak()[{k->name, threads}] = best;
}

void BM_matmul(benchmark::State& state, const Kernels* k, GgmlType t, int64_t rows, int64_t cols, int B,
               int threads) {
  const WeightSet& w = weights(t, rows, cols);
  const std::vector<r1pi::block_q8_0> x = activations(*k, cols, B);
  std::vector<float> out(size_t(rows) * B);
  ThreadPool& p = pool(threads);
  size_t i = 0;
  for (auto _ : state) {
    run_matmul(*k, t, p, w.copy(i++), rows, cols, x.data(), B, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  const double n = double(state.iterations());
  const double bytes = double(rows) * double(row_bytes(t, cols));
  state.counters["weight_GBps"] = benchmark::Counter(n * bytes / 1e9, benchmark::Counter::kIsRate);
  state.counters["GOPs"] =
      benchmark::Counter(n * 2.0 * double(rows) * double(cols) * B / 1e9, benchmark::Counter::kIsRate);
  if (B == 1 && measured_bw().count(threads)) {
    // Filled in by the reporter from the rate; here just remember the bandwidth it compares to.
    state.counters["read_GBps"] = measured_bw()[threads];
  }
  const auto peak = measured_peak().find({k->name, threads});
  if (B > 1 && peak != measured_peak().end() && peak->second > 0) state.counters["peak_GOPs"] = peak->second;
}

// Adds bw_frac = weight_GBps / read_GBps and peak_frac = GOPs / peak_GOPs to the console output.
class FracReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    std::vector<Run> r = runs;
    for (Run& run : r) {
      auto w = run.counters.find("weight_GBps");
      auto b = run.counters.find("read_GBps");
      if (w != run.counters.end() && b != run.counters.end() && b->second.value > 0) {
        // Rate counters hold their final rate by the time they are reported.
        run.counters["bw_frac"] = benchmark::Counter(w->second.value / b->second.value);
      }
      auto g = run.counters.find("GOPs");
      auto p = run.counters.find("peak_GOPs");
      if (g != run.counters.end() && p != run.counters.end() && p->second.value > 0)
        run.counters["peak_frac"] = benchmark::Counter(g->second.value / p->second.value);
    }
    ConsoleReporter::ReportRuns(r);
  }
};

std::string shape_name(int64_t rows, int64_t cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

}  // namespace

int main(int argc, char** argv) {
  std::string backends_flag;
  bool quick = false;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--backends=", 11) == 0) backends_flag = argv[i] + 11;
    else if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    else if (std::strncmp(argv[i], "--chunk=", 8) == 0) g_chunk = std::max<int64_t>(1, std::atoll(argv[i] + 8));
    else args.push_back(argv[i]);
  }
  int n = int(args.size());
  benchmark::Initialize(&n, args.data());

  std::vector<const Kernels*> backends;
  for (const Kernels* k : r1pi::available_backends()) {
    const std::string name = k->name;
    const bool wanted = backends_flag.empty()
                            ? (k != &r1pi::kernels_scalar() || r1pi::available_backends().size() == 1)
                            : ("," + backends_flag + ",").find("," + name + ",") != std::string::npos;
    if (wanted) backends.push_back(k);
  }

  const int thread_counts[] = {1, 2};
  for (int t : thread_counts)
    benchmark::RegisterBenchmark(("read_bw/threads:" + std::to_string(t)).c_str(), BM_read_bw, t)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond)
        ->MinTime(0.5);
  for (const Kernels* k : backends)
    for (int t : thread_counts)
      benchmark::RegisterBenchmark(("int8_peak/" + std::string(k->name) + "/threads:" + std::to_string(t)).c_str(),
                                   BM_int8_peak, k, t)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond)
          ->Iterations(3);

  struct Shape {
    GgmlType type;
    int64_t rows, cols;
  };
  std::vector<Shape> matvec = {{GgmlType::Q4_0, 4096, 4096}, {GgmlType::Q4_0, 14336, 4096},
                               {GgmlType::Q4_0, 4096, 14336}, {GgmlType::Q6_K, 128256, 4096},
                               {GgmlType::Q4_K, 4096, 4096},  {GgmlType::Q4_K, 14336, 4096},
                               {GgmlType::Q4_K, 4096, 14336}, {GgmlType::Q6_K, 4096, 14336},
                               {GgmlType::Q6_K, 14336, 4096},
                               {GgmlType::Q5_K, 4096, 4096},  {GgmlType::Q5_0, 4096, 4096},
                               {GgmlType::IQ4_NL, 4096, 4096}, {GgmlType::Q4_1, 4096, 4096},
                               {GgmlType::Q5_1, 4096, 4096},  {GgmlType::IQ4_XS, 4096, 4096},
                               {GgmlType::BF16, 4096, 4096},  {GgmlType::Q2_K, 4096, 4096},
                               {GgmlType::Q3_K, 4096, 4096},  {GgmlType::MXFP4, 2880, 2880}};
  if (quick) matvec = {{GgmlType::Q4_0, 14336, 4096}};
  for (const Kernels* k : backends)
    for (const Shape& s : matvec)
      for (int t : thread_counts) {
        const std::string name = std::string("matvec/") + k->name + "/" + std::string(r1pi::ggml_type_name(s.type)) + "/" +
                                 shape_name(s.rows, s.cols) + "/threads:" + std::to_string(t);
        benchmark::RegisterBenchmark(name.c_str(), BM_matmul, k, s.type, s.rows, s.cols, 1, t)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond)
            ->MinTime(0.5);
      }

  const std::vector<int> batches = {1, 2, 4, 8, 9, 16, 64, 128};
  std::vector<Shape> batched = {{GgmlType::Q4_0, 4096, 4096}, {GgmlType::Q4_0, 14336, 4096},
                                {GgmlType::Q4_K, 4096, 4096}, {GgmlType::Q6_K, 4096, 4096},
                                {GgmlType::Q8_0, 4096, 4096}, {GgmlType::Q5_K, 4096, 4096},
                                {GgmlType::Q4_1, 4096, 4096},
                                {GgmlType::Q5_1, 4096, 4096}, {GgmlType::IQ4_XS, 4096, 4096},
                                {GgmlType::BF16, 4096, 4096}, {GgmlType::Q2_K, 4096, 4096},
                                {GgmlType::Q3_K, 4096, 4096},  {GgmlType::MXFP4, 2880, 2880}};
  if (quick) batched = {{GgmlType::Q4_0, 4096, 4096}};
  for (const Kernels* k : backends)
    for (const Shape& s : batched)
      for (int t : thread_counts)
        for (int B : batches) {
          const std::string name = std::string("matmul/") + k->name + "/" + std::string(r1pi::ggml_type_name(s.type)) + "/" + shape_name(s.rows, s.cols) +
                                   "/B:" + std::to_string(B) + "/threads:" + std::to_string(t);
          benchmark::RegisterBenchmark(name.c_str(), BM_matmul, k, s.type, s.rows, s.cols, B, t)
              ->UseRealTime()
              ->Unit(benchmark::kMillisecond)
              ->MinTime(0.3);
        }

  FracReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
