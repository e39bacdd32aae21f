#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <utility>

#include "common/error.h"
#include "tokenizer/bpe.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/special_tokens.h"
#include "tokenizer/spm.h"
#include "tokenizer/token_bytes.h"
#include "tokenizer/token_index.h"
#include "tokenizer/utf8.h"

namespace r1pi {

// Lives behind a pointer, so the models may keep references to vocab and index across moves.
struct Tokenizer::Impl {
  Vocab vocab;
  TokenIndex index;
  SpecialTokenMatcher specials;
  std::vector<std::string> bytes;   // render_token_bytes() of every id, computed once
  std::optional<PreTokenizer> pre;  // byte-level BPE only
  std::optional<BpeModel> bpe;
  std::optional<SpmModel> spm;

  // A GPT-2-style byte-level vocabulary (Llama 3's): SentencePiece would find none of its pieces
  // in '▁'-spelt text, and with no byte tokens it has nothing to fall back on. Only normal tokens
  // count: special ones may hold '▁' in any vocabulary (DeepSeek's <｜begin▁of▁sentence｜>).
  static bool spells_bytes_as_gpt2(const Vocab& v) {
    bool byte_level_space = false;
    for (size_t id = 0; id < v.tokens.size(); ++id) {
      if (v.types[id] == TokenType::BYTE) return false;
      if (v.types[id] != TokenType::NORMAL) continue;
      const std::string& t = v.tokens[id];
      if (t.find("\xE2\x96\x81") != std::string::npos) return false;  // '▁'
      byte_level_space = byte_level_space || t.find("\xC4\xA0") != std::string::npos;  // 'Ġ'
    }
    return byte_level_space;
  }

  explicit Impl(Vocab v) : vocab(std::move(v)), index(vocab.tokens), specials(vocab) {
    if (vocab.model == "gpt2") {
      pre.emplace(vocab.pre);
      bpe.emplace(vocab, index, pre->type().ignore_merges);
    } else if (vocab.model == "llama") {
      if (spells_bytes_as_gpt2(vocab))
        throw Error("tokenizer.ggml.model is 'llama' (SentencePiece), but the tokens are byte-level "
                    "BPE ones (spaces spelt 'Ġ', no '▁' pieces, no <0xXX> byte tokens): it would "
                    "encode garbage; such a vocabulary's model is 'gpt2'");
      spm.emplace(vocab, index);
    } else {
      throw Error("unsupported tokenizer model '" + vocab.model + "' (supported: gpt2, llama)");
    }
    bytes.reserve(vocab.tokens.size());
    for (size_t id = 0; id < vocab.tokens.size(); ++id)
      bytes.push_back(render_token_bytes(vocab, static_cast<int32_t>(id)));
  }

  void encode_bpe(const std::vector<Fragment>& fragments, std::vector<int32_t>& out) const {
    for (const Fragment& fragment : fragments) {
      if (fragment.id >= 0) {
        out.push_back(fragment.id);
        continue;
      }
      for (std::string_view piece : pre->split(fragment.text)) bpe->encode_piece(piece, out);
    }
  }

  // llama.cpp's SentencePiece rule: raw text at the start or right after a special token gets a
  // leading space, so that "Hello" encodes as "▁Hello" like a word inside a sentence (unless the
  // vocabulary says add_space_prefix = false, as converted SentencePiece models without
  // add_dummy_prefix do).
  void encode_spm(const std::vector<Fragment>& fragments, std::vector<int32_t>& out) const {
    bool space_first = vocab.add_space_prefix;
    for (const Fragment& fragment : fragments) {
      if (fragment.id >= 0) {
        out.push_back(fragment.id);
        space_first = vocab.add_space_prefix;
        continue;
      }
      std::string text = space_first ? " " : "";
      text += fragment.text;
      spm->encode(spm_escape_spaces(text), out);
      space_first = false;
    }
  }

  void check_id(int32_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= bytes.size()) {
      throw Error("token id " + std::to_string(id) + " is out of range (the vocabulary has " +
                  std::to_string(bytes.size()) + " tokens)");
    }
  }
};

Tokenizer::Tokenizer(Vocab vocab) {
  vocab.validate("tokenizer");
  impl_ = std::make_unique<Impl>(std::move(vocab));
}

Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_bos, bool parse_special) const {
  std::vector<int32_t> out;
  if (add_bos) {
    if (impl_->vocab.bos_id < 0) throw Error("cannot add BOS: the vocabulary has no BOS token");
    out.push_back(impl_->vocab.bos_id);
  }
  std::vector<Fragment> fragments;
  std::string unmarked;  // the text without kPlainMark bytes, where it has some
  if (parse_special) fragments = impl_->specials.split(text, unmarked);
  else if (!text.empty()) fragments.push_back({text});
  if (impl_->bpe) impl_->encode_bpe(fragments, out);
  else impl_->encode_spm(fragments, out);
  return out;
}

std::string Tokenizer::mark_plain(std::string_view text) const { return impl_->specials.mark_plain(text); }

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string out;
  for (int32_t id : ids) {
    impl_->check_id(id);
    out += impl_->bytes[id];
  }
  return out;
}

std::string Tokenizer::token_bytes(int32_t id) const {
  impl_->check_id(id);
  return impl_->bytes[id];
}

int32_t Tokenizer::n_vocab() const { return static_cast<int32_t>(impl_->vocab.tokens.size()); }
int32_t Tokenizer::bos_id() const { return impl_->vocab.bos_id; }
int32_t Tokenizer::eos_id() const { return impl_->vocab.eos_id; }
bool Tokenizer::add_bos() const { return impl_->vocab.add_bos; }

bool Tokenizer::is_end_of_generation(int32_t id) const {
  const std::vector<int32_t>& eog = impl_->vocab.eog_ids;
  if (eog.empty()) return id >= 0 && id == impl_->vocab.eos_id;
  return std::find(eog.begin(), eog.end(), id) != eog.end();
}

std::optional<int32_t> Tokenizer::find_token(std::string_view text) const {
  const int32_t id = impl_->index.find(text);
  return id >= 0 ? std::optional<int32_t>(id) : std::nullopt;
}

const Vocab& Tokenizer::vocab() const { return impl_->vocab; }

std::vector<int32_t> encode_prompt(const Tokenizer& tokenizer, std::string_view text, bool no_bos) {
  return tokenizer.encode(text, !no_bos && tokenizer.add_bos(), true);
}

std::string StreamDecoder::push(int32_t id) {
  const Vocab& v = tokenizer_.vocab();
  const bool control = render_control_ && id >= 0 && size_t(id) < v.types.size() && v.types[size_t(id)] == TokenType::CONTROL;
  pending_ += control ? v.tokens[size_t(id)] : tokenizer_.token_bytes(id);
  const size_t ready = utf8::complete_prefix_length(pending_);
  std::string out = pending_.substr(0, ready);
  pending_.erase(0, ready);
  return out;
}

std::string StreamDecoder::flush() { return std::exchange(pending_, {}); }

}  // namespace r1pi
