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
// The gated FFN of the dense decoders (ffn_gate, ffn_up, ffn_down), split by hidden units.
std::vector<TensorSpec> dense_ffn_tensors();
// The tensors of a Llama-style decoder (embedding, attention, FFN, output), with attention_parts
// (biases, q/k norms) after attn_v and the FFN's tensors after ffn_norm in each layer.
// arch/decoder.cpp holds these three.
std::vector<TensorSpec> decoder_tensors(const std::vector<TensorSpec>& attention_parts,
                                        const std::vector<TensorSpec>& ffn = dense_ffn_tensors());

const Architecture& llama_architecture();
const Architecture& qwen2_architecture();
const Architecture& qwen3_architecture();
const Architecture& qwen3moe_architecture();

}  // namespace r1pi
