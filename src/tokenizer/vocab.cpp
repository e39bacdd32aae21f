#include "tokenizer/vocab.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "common/error.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_value.h"
#include "tokenizer/eog_tokens.h"
#include "tokenizer/pretokenizer.h"

namespace r1pi {
namespace {

constexpr int32_t kLastTokenType = static_cast<int32_t>(TokenType::BYTE);

// llama.cpp's converters write -1 for a special token the model does not have; stored as UINT32
// it reads 0xFFFFFFFF (stories260K.gguf, the file llama.cpp's CI runs, has it for padding and
// separator). llama.cpp then keeps its default for that token, as if the key were missing.
bool means_no_token(const GgufValue& value) {
  if (!value.is_integer()) return false;
  const bool is_signed = value.type == GgufValueType::INT8 || value.type == GgufValueType::INT16 ||
                         value.type == GgufValueType::INT32 || value.type == GgufValueType::INT64;
  return is_signed ? value.i == -1
                   : value.u == std::numeric_limits<uint32_t>::max() ||
                         value.u == std::numeric_limits<uint64_t>::max();
}

// An optional token id key: missing or -1 is none; any other id beyond int32 can never index a
// vocabulary (ids inside int32 but past the vocabulary are refused by Vocab::validate).
std::optional<int32_t> read_id(const GgufFile& file, std::string_view key) {
  const GgufValue* stored = file.find(key);
  if (!stored || means_no_token(*stored)) return std::nullopt;
  const uint64_t value = file.get_u64(key);  // refuses non-integers and other negative values
  if (value > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    throw Error(file.path() + ": " + std::string(key) + " = " + std::to_string(value) +
                " is not a token id");
  }
  return static_cast<int32_t>(value);
}

void check_id(const std::string& context, const char* what, int64_t id, size_t n_tokens) {
  if (id == -1) return;
  if (id < 0 || static_cast<uint64_t>(id) >= n_tokens) {
    throw Error(context + ": " + what + " id " + std::to_string(id) +
                " is out of range (the vocabulary has " + std::to_string(n_tokens) + " tokens)");
  }
}

}  // namespace

Vocab Vocab::from_gguf(const GgufFile& file) {
  Vocab vocab;
  vocab.model = file.get_string("tokenizer.ggml.model");
  // llama.cpp reads a missing pre-tokenizer as "default" (GPT-2's regex), which is not Llama 3's.
  vocab.pre = file.try_string("tokenizer.ggml.pre").value_or("default");
  vocab.tokens = file.get_string_array("tokenizer.ggml.tokens");
  if (file.has("tokenizer.ggml.token_type")) {
    const std::vector<int32_t> types = file.get_i32_array("tokenizer.ggml.token_type");
    vocab.types.reserve(types.size());
    for (size_t i = 0; i < types.size(); ++i) {
      if (types[i] < 0 || types[i] > kLastTokenType) {
        throw Error(file.path() + ": tokenizer.ggml.token_type[" + std::to_string(i) +
                    "] = " + std::to_string(types[i]) + " is not a token type");
      }
      vocab.types.push_back(static_cast<TokenType>(types[i]));
    }
  } else {
    vocab.types.assign(vocab.tokens.size(), TokenType::NORMAL);
  }
  if (file.has("tokenizer.ggml.scores")) vocab.scores = file.get_f32_array("tokenizer.ggml.scores");
  if (file.has("tokenizer.ggml.merges")) vocab.merges = file.get_string_array("tokenizer.ggml.merges");

  // SentencePiece files without these keys (or with -1 in them) use llama.cpp's fixed ids. The
  // separator, class, mask and fill-in-the-middle ids are not read: nothing in r1pi uses them.
  const bool spm = vocab.model == "llama";
  auto spm_default = [&](int32_t id) {
    return spm && static_cast<size_t>(id) < vocab.tokens.size() ? id : -1;
  };
  vocab.bos_id = read_id(file, "tokenizer.ggml.bos_token_id").value_or(spm_default(1));
  vocab.eos_id = read_id(file, "tokenizer.ggml.eos_token_id").value_or(spm_default(2));
  vocab.unk_id = read_id(file, "tokenizer.ggml.unknown_token_id").value_or(spm_default(0));
  vocab.pad_id = read_id(file, "tokenizer.ggml.padding_token_id").value_or(-1);
  // Without the key llama.cpp adds BOS for SentencePiece and for the BPE pre-tokenizers that say so
  // (Llama 3's, not Qwen's).
  const PreTokenizerType* pre = spm ? nullptr : find_pre_tokenizer(vocab.pre);
  vocab.add_bos = file.try_bool("tokenizer.ggml.add_bos_token").value_or(pre ? pre->add_bos : true);
  vocab.add_space_prefix = file.try_bool("tokenizer.ggml.add_space_prefix").value_or(true);
  vocab.chat_template = file.try_string("tokenizer.chat_template").value_or("");

  vocab.eog_ids = standard_eog_ids(vocab);
  for (const char* key : {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"}) {
    if (const std::optional<int32_t> id = read_id(file, key)) add_eog_id(vocab.eog_ids, *id);
  }
  vocab.validate(file.path());
  return vocab;
}

void Vocab::validate(const std::string& context) const {
  const size_t n = tokens.size();
  if (n == 0) throw Error(context + ": the vocabulary has no tokens");
  // Such a file loads and generates, but every token prints as nothing: a silent failure.
  if (std::all_of(tokens.begin(), tokens.end(), [](const std::string& t) { return t.empty(); }))
    throw Error(context + ": every one of the vocabulary's " + std::to_string(n) +
                " token strings is empty: nothing generated could be printed (a damaged tokenizer.ggml.tokens?)");
  if (n > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    throw Error(context + ": too many tokens (" + std::to_string(n) + ")");
  }
  if (types.size() != n) {
    throw Error(context + ": " + std::to_string(types.size()) + " token types for " + std::to_string(n) +
                " tokens");
  }
  if (!scores.empty() && scores.size() != n) {
    throw Error(context + ": " + std::to_string(scores.size()) + " token scores for " +
                std::to_string(n) + " tokens");
  }
  for (size_t i = 0; i < n; ++i) {
    const auto type = static_cast<int32_t>(types[i]);
    if (type < 0 || type > kLastTokenType) {
      throw Error(context + ": token " + std::to_string(i) + " has invalid type " +
                  std::to_string(type));
    }
  }
  check_id(context, "BOS", bos_id, n);
  check_id(context, "EOS", eos_id, n);
  check_id(context, "unknown-token", unk_id, n);
  check_id(context, "padding", pad_id, n);
  for (int32_t id : eog_ids) {
    if (id < 0) throw Error(context + ": end-of-generation id " + std::to_string(id) + " is negative");
    check_id(context, "end-of-generation", id, n);
  }
}

}  // namespace r1pi
