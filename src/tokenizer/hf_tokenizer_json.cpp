#include "tokenizer/hf_tokenizer_json.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/error.h"
#include "tokenizer/byte_mapping.h"
#include "tokenizer/eog_tokens.h"

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
      const TokenType kind =
          token.value("special", false) ? TokenType::CONTROL : TokenType::USER_DEFINED;
      set_token(vocab, filled, token.at("id").get<int64_t>(), token.at("content").get<std::string>(),
                kind, path);
    }
  }
}

}  // namespace

Vocab load_hf_tokenizer_json(const std::string& path, SpecialTokenNames names) {
  const json doc = parse_file(path);
  Vocab vocab;
  vocab.model = "gpt2";
  vocab.pre = "llama-bpe";
  vocab.add_bos = true;
  std::vector<bool> filled;
  try {
    read_model(doc, vocab, filled, path);
  } catch (const json::exception& e) {
    throw Error(path + ": malformed tokenizer.json: " + e.what());
  }
  for (size_t id = 0; id < filled.size(); ++id) {
    if (!filled[id]) throw Error(path + ": no token has id " + std::to_string(id));
  }

  std::string bos = "<|begin_of_text|>", eos = "<|end_of_text|>";
  if (names == SpecialTokenNames::DeepSeekR1) {
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
  // DeepSeek's tokenizer_config pads with EOS; Llama 3 names no padding token.
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
