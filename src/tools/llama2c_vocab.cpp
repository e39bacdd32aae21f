#include "tools/llama2c_vocab.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "common/error.h"

namespace r1pi {

namespace {

constexpr int32_t kUnk = 0, kBos = 1, kEos = 2;
const std::string kSpaceMarker = "\xE2\x96\x81";  // U+2581, SentencePiece's space

bool is_byte_piece(const std::string& t) {
  return t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>' &&
         std::isxdigit(static_cast<unsigned char>(t[3])) && std::isxdigit(static_cast<unsigned char>(t[4]));
}

std::string escape_spaces(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == ' ') out += kSpaceMarker;
    else out += c;
  }
  return out;
}

Vocab empty_llama_vocab() {
  Vocab v;
  v.model = "llama";
  v.pre = "default";
  v.bos_id = kBos;
  v.eos_id = kEos;
  v.unk_id = kUnk;
  v.add_bos = true;
  return v;
}

// llama2.c writes "<s>"/"</s>" as "\n<s>\n"-style text and sometimes junk for <unk>; the ids are
// what matter, so those three get their canonical names (as llama.cpp's converter does).
void add_token(Vocab& v, std::string text, float score) {
  const int32_t id = static_cast<int32_t>(v.tokens.size());
  TokenType type = TokenType::NORMAL;
  if (id == kUnk) { text = "<unk>"; type = TokenType::UNKNOWN; }
  else if (id == kBos) { text = "<s>"; type = TokenType::CONTROL; }
  else if (id == kEos) { text = "</s>"; type = TokenType::CONTROL; }
  else if (text.empty()) type = TokenType::CONTROL;
  else if (is_byte_piece(text)) type = TokenType::BYTE;
  v.tokens.push_back(escape_spaces(text));
  v.scores.push_back(score);
  v.types.push_back(type);
}

Vocab placeholder_vocab(uint32_t n_vocab) {
  Vocab v = empty_llama_vocab();
  for (uint32_t id = 0; id < n_vocab; ++id) {
    std::string text;
    if (id >= 3 && id < 3 + 256) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "<0x%02X>", id - 3);
      text = buf;
    } else if (id >= 3) {
      text = "<piece_" + std::to_string(id) + ">";
    }
    add_token(v, text, 0.0f);
  }
  return v;
}

Vocab read_tokenizer_bin(const std::string& path, uint32_t n_vocab) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open the tokenizer");
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t pos = 0;
  auto read = [&](void* dst, size_t n, uint32_t token) {
    if (bytes.size() - pos < n) {
      throw Error(path + ": ends inside token " + std::to_string(token) + " of " +
                  std::to_string(n_vocab) + " (not a llama2.c tokenizer.bin for this model?)");
    }
    std::memcpy(dst, bytes.data() + pos, n);
    pos += n;
  };
  int32_t max_token_length;  // only a hint for llama2.c's buffers; lengths are checked below
  read(&max_token_length, 4, 0);

  Vocab v = empty_llama_vocab();
  for (uint32_t id = 0; id < n_vocab; ++id) {
    float score;
    int32_t len;
    read(&score, 4, id);
    read(&len, 4, id);
    if (len < 0 || static_cast<size_t>(len) > bytes.size() - pos) {
      throw Error(path + ": token " + std::to_string(id) + " has length " + std::to_string(len) +
                  ", more than the file holds (not a llama2.c tokenizer.bin for this model?)");
    }
    std::string text(bytes.data() + pos, static_cast<size_t>(len));
    pos += text.size();
    add_token(v, std::move(text), score);
  }
  if (pos != bytes.size()) {
    throw Error(path + ": " + std::to_string(bytes.size() - pos) + " bytes follow the " +
                std::to_string(n_vocab) + " tokens the model has (tokenizer of another model?)");
  }
  return v;
}

}  // namespace

Vocab llama2c_vocab(const std::string& tokenizer_bin, uint32_t n_vocab) {
  return tokenizer_bin.empty() ? placeholder_vocab(n_vocab) : read_tokenizer_bin(tokenizer_bin, n_vocab);
}

}  // namespace r1pi
