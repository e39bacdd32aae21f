#include "tools/gguf_metadata.h"

#include "gguf/gguf_writer.h"
#include "tokenizer/vocab.h"
#include "tools/model_shape.h"

namespace r1pi {

uint32_t llama_file_type(GgmlType matrix_type) {
  // llama.cpp's LLAMA_FTYPE_ALL_F32, MOSTLY_F16, MOSTLY_Q4_0, MOSTLY_Q8_0, MOSTLY_Q6_K.
  switch (matrix_type) {
    case GgmlType::F32: return 0;
    case GgmlType::F16: return 1;
    case GgmlType::Q4_0: return 2;
    case GgmlType::Q8_0: return 7;
    case GgmlType::Q6_K: return 18;
  }
  return 0;
}

void add_llama_metadata(GgufWriter& w, const ModelShape& s, GgmlType matrix_type) {
  w.add("general.architecture", GgufValue::string("llama"));
  w.add("general.name", GgufValue::string(s.name));
  w.add("general.file_type", GgufValue::u32(llama_file_type(matrix_type)));
  w.add("general.quantization_version", GgufValue::u32(2));  // ggml's GGML_QNT_VERSION
  w.add("llama.vocab_size", GgufValue::u32(s.n_vocab));
  w.add("llama.context_length", GgufValue::u32(s.n_ctx));
  w.add("llama.embedding_length", GgufValue::u32(s.dim));
  w.add("llama.block_count", GgufValue::u32(s.n_layers));
  w.add("llama.feed_forward_length", GgufValue::u32(s.ffn_dim));
  w.add("llama.rope.dimension_count", GgufValue::u32(s.rotated_dim()));
  w.add("llama.attention.head_count", GgufValue::u32(s.n_heads));
  w.add("llama.attention.head_count_kv", GgufValue::u32(s.n_kv_heads));
  w.add("llama.attention.layer_norm_rms_epsilon", GgufValue::f32(s.rms_eps));
  w.add("llama.rope.freq_base", GgufValue::f32(s.rope_base));
}

void add_vocab_metadata(GgufWriter& w, const Vocab& v) {
  w.add("tokenizer.ggml.model", GgufValue::string(v.model));
  if (!v.pre.empty()) w.add("tokenizer.ggml.pre", GgufValue::string(v.pre));
  w.add("tokenizer.ggml.tokens", GgufValue::string_array(v.tokens));
  if (!v.scores.empty()) w.add("tokenizer.ggml.scores", GgufValue::f32_array(v.scores));
  std::vector<int32_t> types(v.types.size());
  for (size_t i = 0; i < types.size(); ++i) types[i] = static_cast<int32_t>(v.types[i]);
  w.add("tokenizer.ggml.token_type", GgufValue::i32_array(types));
  // llama.cpp refuses a BPE vocabulary without the merges key, even an empty one.
  if (v.model == "gpt2" || !v.merges.empty()) {
    w.add("tokenizer.ggml.merges", GgufValue::string_array(v.merges));
  }
  auto add_id = [&](const char* key, int32_t id) {
    if (id >= 0) w.add(key, GgufValue::u32(static_cast<uint32_t>(id)));
  };
  add_id("tokenizer.ggml.bos_token_id", v.bos_id);
  add_id("tokenizer.ggml.eos_token_id", v.eos_id);
  add_id("tokenizer.ggml.unknown_token_id", v.unk_id);
  add_id("tokenizer.ggml.padding_token_id", v.pad_id);
  // GGUF has one slot for a second end-of-generation token (end of turn); llama.cpp finds any
  // further ones by name.
  for (int32_t id : v.eog_ids) {
    if (id != v.eos_id) {
      add_id("tokenizer.ggml.eot_token_id", id);
      break;
    }
  }
  w.add("tokenizer.ggml.add_bos_token", GgufValue::boolean(v.add_bos));
  if (!v.chat_template.empty()) w.add("tokenizer.chat_template", GgufValue::string(v.chat_template));
}

}  // namespace r1pi
