// Writes a tensor's rows in a GGUF writer's stream as they are made: each row comes as floats from
// a source and is quantised to the tensor's type, a chunk of rows at a time on several threads.
#pragma once
#include <cstdint>
#include <functional>

#include "ggml/ggml_type.h"

namespace r1pi {

class GgufWriter;
class Progress;

// source(r, row) fills row r (cols floats); it is called from several threads at once, each with
// its own row, so it must be safe to call so. Rows are written in order, whatever the threads do,
// so the bytes do not depend on `threads` (0: one per core).
using RowSource = std::function<void(uint64_t r, float* row)>;
void write_quantized_rows(GgufWriter& w, GgmlType type, uint64_t cols, uint64_t rows, const RowSource& source,
                          Progress& progress, int threads);

}  // namespace r1pi
