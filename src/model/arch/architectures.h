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
// A mixture of experts in every layer: its three keys (expert_feed_forward_length with
// ffn_fallback where a file may leave it out, nullptr: required) and its tensors, the router whole
// on every rank and each expert's hidden units split (with_biases: gpt-oss's router and expert
// biases; the down projection's whole, added after the sync).
std::vector<HyperParam> expert_params(double (*ffn_fallback)(const ModelConfig&));
std::vector<TensorSpec> expert_ffn_tensors(bool with_biases);
// The tensors of a Llama-style decoder (embedding, attention, FFN, output), with attention_parts
// (biases, q/k norms) after attn_v, output_parts (a bias, sinks) after attn_output, the pre-FFN
// norm under its name and the FFN's tensors after it in each layer.
// arch/decoder.cpp holds these three.
struct DecoderParts {
  std::vector<TensorSpec> attention;
  std::vector<TensorSpec> ffn = dense_ffn_tensors();
  std::vector<TensorSpec> after_output = {};
  std::string_view ffn_norm = "ffn_norm.weight";
};
std::vector<TensorSpec> decoder_tensors(const DecoderParts& parts);

const Architecture& llama_architecture();
const Architecture& qwen2_architecture();
const Architecture& qwen3_architecture();
const Architecture& qwen3moe_architecture();
const Architecture& gpt_oss_architecture();

}  // namespace r1pi
