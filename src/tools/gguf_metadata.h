// The metadata llama.cpp's converters write, under exactly its key names, so r1pi's files load in
// llama.cpp and llama.cpp's load in r1pi.
#pragma once
#include <cstdint>

#include "ggml/ggml_type.h"

namespace r1pi {

class GgufWriter;
struct ModelConfig;
struct Vocab;

// general.* and the architecture's hyper-parameter keys, from the same rows the loader reads
// (model/arch/); <arch>.vocab_size too. No <arch>.rope.scaling.*: llama3 scaling travels as
// rope_freqs.weight. general.file_type: llama.cpp's LLAMA_FTYPE_* (a type's traits, or a mix's).
void add_model_metadata(GgufWriter& writer, const ModelConfig& config, uint32_t file_type);

// tokenizer.ggml.* and tokenizer.chat_template.
void add_vocab_metadata(GgufWriter& writer, const Vocab& vocab);

}  // namespace r1pi
