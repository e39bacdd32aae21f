// libFuzzer harness: the tokenizers alone, on arbitrary bytes (invalid UTF-8, control characters,
// the text of special tokens). The first byte picks the vocabulary and the flags, the rest is text.
//
// Vocabularies: Llama 3's byte-level BPE with DeepSeek-R1's special tokens (llama3-tokenizer.json),
// llama.cpp's SentencePiece test vocabulary (ggml-vocab-llama-spm.gguf), both from the shared data
// folder ($R1PI_SHARED_DATA, else the one configured), and the built-in byte vocabulary.
//
// What must hold (Tokenizer's contract in tokenizer.h), else the harness aborts:
//  - encode never throws for any bytes (these vocabularies have every byte), ids lie in the vocabulary;
//  - decode(encode(x)) == x, with SentencePiece's leading space (at the start and after each special
//    token) and its U+2581 read back as a space, and special tokens rendered as decode renders them
//    (control tokens as nothing);
//  - the special-token split covers the text exactly;
//  - StreamDecoder's output, pushed id by id and flushed, equals decode's.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "gguf/gguf_file.h"
#include "tokenizer/hf_tokenizer_json.h"
#include "tokenizer/special_tokens.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace {

struct Loaded {
  std::unique_ptr<r1pi::Tokenizer> tokenizer;
  std::unique_ptr<r1pi::SpecialTokenMatcher> specials;  // over tokenizer->vocab()
  bool spm = false;
};

std::vector<Loaded> g_tokenizers;

[[noreturn]] void finding(const char* what, std::string_view text) {
  std::fprintf(stderr, "fuzz_tokenizer: %s (input of %zu bytes)\n", what, text.size());
  std::abort();
}

std::string shared_data(const std::string& file) {
  const char* env = std::getenv("R1PI_SHARED_DATA");
  return std::string(env && *env ? env : R1PI_DEFAULT_SHARED_DATA) + "/" + file;
}

std::string spm_unescaped(std::string_view text) {
  std::string out;
  for (size_t pos = 0; pos < text.size();) {
    if (text.substr(pos).starts_with("\xE2\x96\x81")) {
      out += ' ';
      pos += 3;
    } else {
      out += text[pos++];
    }
  }
  return out;
}

void add(r1pi::Vocab vocab) {
  Loaded l;
  l.spm = vocab.model == "llama";
  l.tokenizer = std::make_unique<r1pi::Tokenizer>(std::move(vocab));
  l.specials = std::make_unique<r1pi::SpecialTokenMatcher>(l.tokenizer->vocab());
  g_tokenizers.push_back(std::move(l));
}

void check(const Loaded& l, std::string_view text, bool add_bos, bool parse_special) {
  const r1pi::Tokenizer& tok = *l.tokenizer;
  std::vector<int32_t> ids;
  try {
    ids = tok.encode(text, add_bos, parse_special);
  } catch (const r1pi::Error&) {
    finding("encode refused text", text);
  }
  for (int32_t id : ids)
    if (id < 0 || id >= tok.n_vocab()) finding("id outside the vocabulary", text);
  if (add_bos && (ids.empty() || ids[0] != tok.bos_id())) finding("no BOS first", text);

  // What decode must give back.
  std::vector<r1pi::Fragment> fragments;
  std::string unmarked;  // the text without its plain marks, which the fragments may point into
  if (parse_special) fragments = l.specials->split(text, unmarked);
  else if (!text.empty()) fragments.push_back({text});
  std::string spelled, expected;
  bool after_special = true;
  for (const r1pi::Fragment& f : fragments) {
    if (f.id >= 0) {
      spelled += tok.vocab().tokens[size_t(f.id)];
      expected += tok.token_bytes(f.id);
      after_special = true;
    } else {
      spelled += f.text;
      if (l.spm && after_special) expected += ' ';
      // SentencePiece spells a space as U+2581, so that character in the text comes back as one.
      expected += l.spm ? spm_unescaped(f.text) : std::string(f.text);
      after_special = false;
    }
  }
  // The split drops each plain mark before a special token's spelling (special_tokens.h).
  const std::string_view split_text =
      parse_special && text.find(r1pi::kPlainMark) != std::string_view::npos ? std::string_view(unmarked) : text;
  if (spelled != split_text) finding("the special-token split does not cover the text", text);
  const std::string decoded = tok.decode(ids);
  const std::string bos = add_bos ? tok.token_bytes(tok.bos_id()) : "";
  if (decoded != bos + expected) finding("decode(encode(text)) is not the text", text);

  r1pi::StreamDecoder stream(tok);
  std::string streamed;
  for (int32_t id : ids) streamed += stream.push(id);
  streamed += stream.flush();
  if (streamed != decoded) finding("StreamDecoder and decode disagree", text);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  try {
    add(r1pi::load_hf_tokenizer_json(shared_data("llama3-tokenizer.json"),
                                     r1pi::SpecialTokenNames::DeepSeekR1));
    add(r1pi::Vocab::from_gguf(r1pi::GgufFile::open(shared_data("ggml-vocab-llama-spm.gguf"))));
    add(r1pi::builtin_byte_vocab(300));
  } catch (const r1pi::Error& e) {
    std::fprintf(stderr, "fuzz_tokenizer: %s (set R1PI_SHARED_DATA)\n", e.what());
    std::exit(1);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  const Loaded& l = g_tokenizers[(flags & 3u) % g_tokenizers.size()];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  check(l, text, (flags & 4u) != 0, (flags & 8u) != 0);
  return 0;
}
