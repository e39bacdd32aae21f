// r1pi-model inflate: a small trained Llama embedded, exactly, in a big model's shape, so that a
// test or a benchmark reads the big model's bytes per token while the text is the small model's.
#pragma once
#include <string>

namespace r1pi {

struct MakeOptions;

// Writes the small model of small_path in the shape of big (its preset and shape flags, matrix
// and output types) to out_path. Throws r1pi::Error when the small model does not fit the shape.
void inflate_model(const std::string& small_path, const MakeOptions& big, const std::string& out_path);

}  // namespace r1pi
