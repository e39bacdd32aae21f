#include "tokenizer/pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "common/error.h"

namespace r1pi {
namespace {

// The pre-tokenizers r1pi implements, with the names llama.cpp's llama-vocab.cpp gives them. The
// patterns are the tokenizer.json ones; llama.cpp spells (?i:'s|...) out as '[sS]|... for its own
// regex code, PCRE2 takes the original.
const std::vector<PreTokenizerType>& pre_tokenizer_types() {
  static const std::vector<PreTokenizerType> types = {
      // Llama 3 (and DeepSeek-R1-Distill-Llama): LLAMA_VOCAB_PRE_TYPE_LLAMA3. Digits in threes.
      {{"llama-bpe", "llama3", "llama-v3"},
       R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
       true, true},
      // Qwen2.5, Qwen3 and DeepSeek-R1-Distill-Qwen: LLAMA_VOCAB_PRE_TYPE_QWEN2. Digits one by one.
      // Their tokenizer.json also NFC-normalises the text first; llama.cpp does not, nor does r1pi,
      // so text not in NFC gets llama.cpp's ids, which may differ from the transformers library's.
      {{"qwen2", "deepseek-r1-qwen"},
       R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
       false, false},
      // gpt-oss's o200k_harmony (OpenAI's o200k_base split): LLAMA_VOCAB_PRE_TYPE_GPT4O. Letter runs
      // take combining marks (\p{M}) and split before a capital; digits in threes; "/" may end a
      // punctuation run. tiktoken's pattern: llama.cpp rewrites it without \p{M} (Hindi, Thai,
      // Arabic with vowels then split differently; docs/tokenizers.md). A piece that is a whole
      // token is taken whole, as tiktoken does.
      {{"gpt-4o"},
       R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
       true, false},
  };
  return types;
}

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  pcre2_get_error_message(code, buffer, sizeof buffer);
  return reinterpret_cast<const char*>(buffer);
}

}  // namespace

const PreTokenizerType* find_pre_tokenizer(std::string_view name) {
  for (const PreTokenizerType& type : pre_tokenizer_types()) {
    for (std::string_view known : type.names)
      if (known == name) return &type;
  }
  return nullptr;
}

const PreTokenizerType* find_pre_tokenizer_by_pattern(std::string_view pattern) {
  for (const PreTokenizerType& type : pre_tokenizer_types()) {
    if (type.pattern == pattern) return &type;
  }
  return nullptr;
}

std::string pre_tokenizer_names() {
  std::string all;
  for (const PreTokenizerType& type : pre_tokenizer_types()) {
    for (std::string_view name : type.names) all += (all.empty() ? "" : ", ") + std::string(name);
  }
  return all;
}

struct PreTokenizer::Regex {
  pcre2_code* code = nullptr;
  ~Regex() { pcre2_code_free(code); }
};

PreTokenizer::PreTokenizer(const std::string& pre)
    : type_(find_pre_tokenizer(pre)), regex_(std::make_unique<Regex>()) {
  if (!type_)
    throw Error("unsupported pre-tokenizer '" + pre + "' (supported: " + pre_tokenizer_names() + ")");
  const std::string_view pattern = type_->pattern;
  int error = 0;
  PCRE2_SIZE offset = 0;
  // UCP: \s, \p{L} and (?i) follow Unicode, as in the tokenizers library and llama.cpp (\s includes
  // U+0085, which JavaScript ports of the tokenizer do not count as space). MATCH_INVALID_UTF:
  // invalid bytes simply never match instead of making every match fail.
  regex_->code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                    PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error, &offset, nullptr);
  if (!regex_->code) throw Error("pre-tokenizer regex: " + pcre2_message(error));
  // JIT is an optimisation only: the interpreter gives the same matches where JIT is unavailable.
  pcre2_jit_compile(regex_->code, PCRE2_JIT_COMPLETE);
}

PreTokenizer::~PreTokenizer() = default;
PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
  // Per-call match state keeps split() safe to call from several threads on one PreTokenizer.
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
      pcre2_match_data_create_from_pattern(regex_->code, nullptr), &pcre2_match_data_free);

  std::vector<std::string_view> pieces;
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t done = 0;  // end of the last piece
  while (done < text.size()) {
    // The default JIT stack is enough: no alternative nests, so even a million-space run matches.
    const int rc = pcre2_match(regex_->code, subject, text.size(), done, 0, match.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) throw Error("pre-tokenizer: " + pcre2_message(rc));
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
    // Text the regex skipped (only ever invalid UTF-8) is a piece of its own.
    if (ovector[0] > done) pieces.push_back(text.substr(done, ovector[0] - done));
    // Every alternative consumes at least one character, so the loop always advances.
    pieces.push_back(text.substr(ovector[0], ovector[1] - ovector[0]));
    done = ovector[1];
  }
  if (done < text.size()) pieces.push_back(text.substr(done));
  return pieces;
}

}  // namespace r1pi
