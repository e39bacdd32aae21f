#include "tools/row_writer.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "common/thread_pool.h"
#include "ggml/quantize.h"
#include "gguf/gguf_writer.h"
#include "tools/progress.h"

namespace r1pi {

namespace {
// Elements made per write: a few MB of output, whatever the row length.
constexpr uint64_t kChunkElements = uint64_t{1} << 22;
}  // namespace

void write_quantized_rows(GgufWriter& w, GgmlType type, uint64_t cols, uint64_t rows, const RowSource& source,
                          Progress& progress, int threads) {
  const int n_threads = threads > 0 ? threads : ThreadPool::available_cores();
  const size_t row_bytes = ggml_row_bytes(type, cols);
  const uint64_t chunk_rows = std::max<uint64_t>(1, kChunkElements / cols);
  std::vector<uint8_t> out(std::min(rows, chunk_rows) * row_bytes);
  // One scratch row per thread, allocated here so that the threads themselves cannot throw.
  std::vector<std::vector<float>> scratch(static_cast<size_t>(n_threads), std::vector<float>(cols));
  auto fill = [&](uint64_t r0, uint64_t begin, uint64_t end, std::vector<float>& row) {
    for (uint64_t r = begin; r < end; ++r) {
      source(r0 + r, row.data());
      quantize_row(type, row.data(), out.data() + r * row_bytes, static_cast<int64_t>(cols));
    }
  };
  for (uint64_t r0 = 0; r0 < rows; r0 += chunk_rows) {
    const uint64_t n = std::min(chunk_rows, rows - r0);
    std::vector<std::jthread> helpers;  // joined on scope exit, even if this thread throws
    for (int k = 1; k < n_threads; ++k) {
      helpers.emplace_back(fill, r0, n * k / n_threads, n * (k + 1) / n_threads, std::ref(scratch[size_t(k)]));
    }
    fill(r0, 0, n / n_threads, scratch[0]);
    helpers.clear();
    w.write_data(out.data(), n * row_bytes);
    progress.add(n * row_bytes);
  }
}

}  // namespace r1pi
