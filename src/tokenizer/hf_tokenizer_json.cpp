#include "tokenizer/hf_tokenizer_json.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/error.h"
#include "tokenizer/byte_mapping.h"
#include "tokenizer/eog_tokens.h"
#include "tokenizer/pretokenizer.h"

namespace r1pi {
namespace {

using nlohmann::json;

struct Rename {
  int32_t id;
  const char* text;
  TokenType type;
};

// DeepSeek-R1-Distill-Llama's tokenizer.json differs from Llama 3's only in these added tokens.
// Its chat markers and think tags are not "special" there, so they are USER_DEFINED: they are
// still matched in prompts, and decode shows them (the user should see <think>).
constexpr Rename kDeepSeekR1Renames[] = {
    {128000, "<｜begin▁of▁sentence｜>", TokenType::CONTROL},
    {128001, "<｜end▁of▁sentence｜>", TokenType::CONTROL},
    {128011, "<｜User｜>", TokenType::USER_DEFINED},
    {128012, "<｜Assistant｜>", TokenType::USER_DEFINED},
    {128013, "<think>", TokenType::USER_DEFINED},
    {128014, "</think>", TokenType::USER_DEFINED},
    {128015, "<｜▁pad▁｜>", TokenType::CONTROL},
};

// A tokenizer family's special tokens, as llama.cpp's converter (convert_hf_to_gguf.py) writes them
// from the model's tokenizer_config.json and config.json, which r1pi does not read.
struct Family {
  std::string_view pre;  // the first name of its PreTokenizerType
  const char* bos;
  const char* eos;
  const char* pad;       // nullptr: none
  bool add_bos;
};
constexpr Family kFamilies[] = {
    {"llama-bpe", "<|begin_of_text|>", "<|end_of_text|>", nullptr, true},
    // Qwen2.5 and Qwen3: config.json names <|endoftext|> BOS, but tokenizer_config.json says it is
    // never added; chat turns end with <|im_end|>, the EOS; padding is <|endoftext|>.
    {"qwen2", "<|endoftext|>", "<|im_end|>", "<|endoftext|>", false},
    // gpt-oss (harmony): an answer ends with <|return|>, the EOS; <|startoftext|> is never added.
    {"gpt-4o", "<|startoftext|>", "<|return|>", "<|endoftext|>", false},
};

// Far beyond any real vocabulary; a larger id is a corrupt file, not a reason to allocate gigabytes.
constexpr int64_t kMaxTokenId = 1 << 24;

json parse_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");
  std::stringstream buffer;
  buffer << in.rdbuf();
  try {
    return json::parse(buffer.str());
  } catch (const json::exception& e) {
    throw Error(path + ": not valid JSON: " + e.what());
  }
}

// Places a token at its id, growing the table; an id given two different texts is an error.
void set_token(Vocab& vocab, std::vector<bool>& filled, int64_t id, const std::string& text,
               TokenType type, const std::string& path) {
  if (id < 0 || id > kMaxTokenId)
    throw Error(path + ": token id " + std::to_string(id) + " is out of range");
  if (static_cast<size_t>(id) >= vocab.tokens.size()) {
    vocab.tokens.resize(id + 1);
    vocab.types.resize(id + 1, TokenType::UNDEFINED);
    filled.resize(id + 1, false);
  }
  if (filled[id] && vocab.tokens[id] != text) {
    throw Error(path + ": token id " + std::to_string(id) + " is both '" + vocab.tokens[id] + "' and '" +
                text + "'");
  }
  vocab.tokens[id] = text;
  vocab.types[id] = type;
  filled[id] = true;
}

// The regex of the Split step of a tokenizer.json pre-tokenizer (alone or in a Sequence), or "".
std::string split_regex(const json& pre) {
  const std::string type = pre.is_object() ? pre.value("type", "") : "";
  if (type == "Sequence") {
    for (const json& step : pre.at("pretokenizers")) {
      if (std::string regex = split_regex(step); !regex.empty()) return regex;
    }
  }
  return type == "Split" ? pre.at("pattern").value("Regex", "") : "";
}

// The pre-tokenizer is recognised by its regex: the converter recognises it by the ids of a test
// text, which needs the regex to compute.
const PreTokenizerType& pre_tokenizer_of(const json& doc, const std::string& path) {
  const auto pre = doc.find("pre_tokenizer");
  const std::string regex = pre == doc.end() ? "" : split_regex(*pre);
  if (const PreTokenizerType* type = find_pre_tokenizer_by_pattern(regex)) return *type;
  throw Error(path + ": " +
              (regex.empty() ? "no Split regex in its pre_tokenizer" : "pre-tokenizer regex " + regex) +
              ": not that of a pre-tokenizer r1pi knows (" + pre_tokenizer_names() + ")");
}

const Family& family_of(std::string_view pre) {
  for (const Family& family : kFamilies) {
    if (family.pre == pre) return family;
  }
  throw Error("no special-token names for the '" + std::string(pre) + "' tokenizer family");
}

// llama.cpp's converter makes an added token CONTROL when it is special or looks like a control
// token, as Qwen's fill-in-the-middle and repository markers do without being special.
bool looks_special(const std::string& text) {
  return (text.starts_with("<|") && text.ends_with("|>")) ||
         (text.starts_with("<｜") && text.ends_with("｜>"));
}

int32_t id_of(const Vocab& vocab, const std::string& text, const std::string& path) {
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    if (vocab.tokens[id] == text) return static_cast<int32_t>(id);
  }
  throw Error(path + ": no token '" + text + "'");
}

void read_model(const json& doc, Vocab& vocab, std::vector<bool>& filled, const std::string& path) {
  const json& model = doc.at("model");
  const std::string type = model.value("type", "");
  if (type != "BPE") throw Error(path + ": model type '" + type + "' is not supported (only BPE)");
  for (const auto& [text, id] : model.at("vocab").items()) {
    set_token(vocab, filled, id.get<int64_t>(), text, TokenType::NORMAL, path);
  }
  // Merges come as "left right" (older files) or as ["left", "right"] (tokenizers >= 0.20).
  for (const json& merge : model.at("merges")) {
    if (merge.is_string()) vocab.merges.push_back(merge.get<std::string>());
    else vocab.merges.push_back(merge.at(0).get<std::string>() + " " + merge.at(1).get<std::string>());
  }
  if (const auto added = doc.find("added_tokens"); added != doc.end() && !added->is_null()) {
    for (const json& token : *added) {
      const std::string text = token.at("content").get<std::string>();
      // The others (Qwen's <think>, <tool_call>) are USER_DEFINED: still matched in prompts, and
      // shown in the output.
      const TokenType kind = token.value("special", false) || looks_special(text) ? TokenType::CONTROL
                                                                                  : TokenType::USER_DEFINED;
      set_token(vocab, filled, token.at("id").get<int64_t>(), text, kind, path);
    }
  }
}

}  // namespace

Vocab load_hf_tokenizer_json(const std::string& path, SpecialTokenNames names) {
  const json doc = parse_file(path);
  Vocab vocab;
  vocab.model = "gpt2";
  std::vector<bool> filled;
  try {
    vocab.pre = pre_tokenizer_of(doc, path).names.front();
    read_model(doc, vocab, filled, path);
  } catch (const json::exception& e) {
    throw Error(path + ": malformed tokenizer.json: " + e.what());
  }
  for (size_t id = 0; id < filled.size(); ++id) {
    if (!filled[id]) throw Error(path + ": no token has id " + std::to_string(id));
  }

  const Family& family = family_of(vocab.pre);
  vocab.add_bos = family.add_bos;
  std::string bos = family.bos, eos = family.eos;
  if (names == SpecialTokenNames::DeepSeekR1) {
    if (vocab.pre != "llama-bpe")
      throw Error(path + ": DeepSeek-R1's special-token names are known for its Llama 3 distills only");
    for (const Rename& rename : kDeepSeekR1Renames) {
      if (static_cast<size_t>(rename.id) >= vocab.tokens.size()) {
        throw Error(path + ": too few tokens for DeepSeek-R1 names (no id " + std::to_string(rename.id) +
                    ")");
      }
      vocab.tokens[rename.id] = rename.text;
      vocab.types[rename.id] = rename.type;
    }
    bos = kDeepSeekR1Renames[0].text;
    eos = kDeepSeekR1Renames[1].text;
  }
  vocab.bos_id = id_of(vocab, bos, path);
  vocab.eos_id = id_of(vocab, eos, path);
  if (family.pad) vocab.pad_id = id_of(vocab, family.pad, path);
  // DeepSeek's tokenizer_config pads with EOS.
  if (names == SpecialTokenNames::DeepSeekR1) vocab.pad_id = vocab.eos_id;
  vocab.eog_ids = standard_eog_ids(vocab);
  vocab.validate(path);
  return vocab;
}

Vocab builtin_byte_vocab(int32_t n_vocab) {
  if (n_vocab < 258) {
    throw Error("the built-in byte vocabulary needs at least 258 tokens (256 bytes, BOS, EOS), not " +
                std::to_string(n_vocab));
  }
  Vocab vocab;
  vocab.model = "gpt2";
  vocab.pre = "llama-bpe";
  vocab.add_bos = true;
  vocab.tokens.reserve(n_vocab);
  for (int b = 0; b < 256; ++b) vocab.tokens.push_back(byte_mapping::to_text(static_cast<uint8_t>(b)));
  vocab.types.assign(256, TokenType::NORMAL);
  vocab.tokens.push_back("<|begin_of_text|>");
  vocab.tokens.push_back("<|end_of_text|>");
  for (int32_t id = 258; id < n_vocab; ++id) {
    vocab.tokens.push_back("<|reserved_special_token_" + std::to_string(id - 258) + "|>");
  }
  vocab.types.resize(n_vocab, TokenType::CONTROL);
  vocab.bos_id = 256;
  vocab.eos_id = 257;
  vocab.eog_ids = {257};
  vocab.validate("built-in byte vocabulary");
  return vocab;
}

}  // namespace r1pi
