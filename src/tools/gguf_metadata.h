// The metadata llama.cpp's converters write for a Llama model, under exactly its key names, so
// r1pi's files load in llama.cpp and llama.cpp's load in r1pi.
#pragma once
#include <cstdint>

#include "ggml/ggml_type.h"

namespace r1pi {

class GgufWriter;
struct ModelShape;
struct Vocab;

// general.file_type (llama_ftype) of a file whose large matrices are matrix_type.
uint32_t llama_file_type(GgmlType matrix_type);

// general.* and llama.* keys (no llama.rope.scaling.*: llama3 scaling travels as rope_freqs.weight).
void add_llama_metadata(GgufWriter& writer, const ModelShape& shape, GgmlType matrix_type);

// tokenizer.ggml.* and tokenizer.chat_template.
void add_vocab_metadata(GgufWriter& writer, const Vocab& vocab);

}  // namespace r1pi
