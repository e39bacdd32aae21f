// Every architecture's row (one file each in this folder) and what several of them share.
#pragma once
#include <vector>

#include "model/architecture.h"

namespace r1pi {

// The hyper-parameters of every Llama-style decoder (llama.cpp's names after "<arch>."): sizes,
// heads, head size (attention.key_length, else dim / heads), RoPE and norm settings. The
// vocabulary size and RoPE scaling are read apart (ModelConfig::from_gguf): their fallbacks look
// at the file.
std::vector<HyperParam> transformer_params();
// The tensors of a Llama-style decoder (embedding, attention, dense FFN, output), with
// attention_parts (biases, q/k norms) after attn_v in each layer. arch/decoder.cpp holds both.
std::vector<TensorSpec> decoder_tensors(const std::vector<TensorSpec>& attention_parts);

const Architecture& llama_architecture();
const Architecture& qwen2_architecture();
const Architecture& qwen3_architecture();

}  // namespace r1pi
