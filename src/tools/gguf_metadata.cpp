#include "tools/gguf_metadata.h"

#include "gguf/gguf_writer.h"
#include "tokenizer/eog_tokens.h"
#include "tokenizer/vocab.h"
#include "model/architecture.h"
#include "model/model_config.h"

namespace r1pi {

void add_model_metadata(GgufWriter& w, const ModelConfig& c, uint32_t file_type) {
  const Architecture& arch = *c.arch;
  w.add("general.architecture", GgufValue::string(std::string(arch.name)));
  w.add("general.name", GgufValue::string(c.name));
  w.add("general.file_type", GgufValue::u32(file_type));
  w.add("general.quantization_version", GgufValue::u32(2));  // ggml's GGML_QNT_VERSION
  w.add(arch.key("vocab_size"), GgufValue::u32(c.n_vocab));
  for (const HyperParam& p : arch.params) {
    if (auto* u = std::get_if<uint32_t ModelConfig::*>(&p.field)) {
      if (p.written_when_default || !p.fallback || c.*(*u) != uint32_t(p.fallback(c)))
        w.add(arch.key(p.key), GgufValue::u32(c.*(*u)));
    } else {
      const float v = c.*std::get<float ModelConfig::*>(p.field);
      if (p.written_when_default || !p.fallback || v != float(p.fallback(c)))
        w.add(arch.key(p.key), GgufValue::f32(v));
    }
  }
  if (c.yarn_factor > 0) {  // as llama.cpp's converter writes a YaRN rope_scaling
    w.add(arch.key("rope.scaling.type"), GgufValue::string("yarn"));
    w.add(arch.key("rope.scaling.factor"), GgufValue::f32(c.yarn_factor));
    w.add(arch.key("rope.scaling.original_context_length"), GgufValue::u32(c.yarn_original_context));
  }
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
  // GGUF has one slot for a second end-of-generation token, the end of turn; llama.cpp finds any
  // further ones by name. Where EOS is the end of turn (Qwen's <|im_end|>) the slot stays empty,
  // as in the files llama.cpp's converter writes.
  if (v.eos_id < 0 || !ends_turn(v.tokens[v.eos_id])) {
    for (int32_t id : v.eog_ids) {
      if (id != v.eos_id) {
        add_id("tokenizer.ggml.eot_token_id", id);
        break;
      }
    }
  }
  w.add("tokenizer.ggml.add_bos_token", GgufValue::boolean(v.add_bos));
  if (!v.chat_template.empty()) w.add("tokenizer.chat_template", GgufValue::string(v.chat_template));
}

}  // namespace r1pi
