// The tokenizer on small hand-made vocabularies: SentencePiece merges and byte fallback, byte-level
// BPE merge order, the built-in byte vocabulary, streaming, vocabulary checks and GGUF loading.
#include <gtest/gtest.h>

#include <fstream>

#include "common/error.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/model_loader.h"
#include "tools/model_maker.h"
#include "test_support.h"
#include "tokenizer/byte_mapping.h"
#include "tokenizer/hf_tokenizer_json.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer.h"

namespace r1pi {
namespace {

using Ids = std::vector<int32_t>;

// A SentencePiece vocabulary laid out as Llama 2's: <unk>, <s>, </s>, 256 byte tokens, pieces.
struct SpmFixture {
  Vocab vocab;
  int32_t add(const std::string& text, float score, TokenType type = TokenType::NORMAL) {
    vocab.tokens.push_back(text);
    vocab.scores.push_back(score);
    vocab.types.push_back(type);
    return static_cast<int32_t>(vocab.tokens.size() - 1);
  }
  SpmFixture() {
    vocab.model = "llama";
    vocab.pre = "default";
    vocab.unk_id = add("<unk>", 0, TokenType::UNKNOWN);
    vocab.bos_id = add("<s>", 0, TokenType::CONTROL);
    vocab.eos_id = add("</s>", 0, TokenType::CONTROL);
    char name[8];
    for (int b = 0; b < 256; ++b) {
      std::snprintf(name, sizeof name, "<0x%02X>", b);
      add(name, 0, TokenType::BYTE);
    }
  }
};

TEST(SpmTokenizer, MergesByScoreWithSpacePrefix) {
  SpmFixture f;
  for (const char* piece : {"h", "e", "l", "o", "b", "c"}) f.add(piece, -2);
  f.add("ll", -3);
  f.add("he", -4);
  f.add("hello", -5);
  f.add("llo", -8);
  f.add("ab", -10);
  const int32_t space = f.add("▁", -1), a = f.add("a", -2), bc = f.add("bc", -9),
                space_hello = f.add("▁hello", -6);
  const Tokenizer t(f.vocab);
  // "▁hello" is reachable by merges: ll, llo, he, hello, ▁hello.
  EXPECT_EQ(t.encode("hello", false, false), Ids{space_hello});
  EXPECT_EQ(t.decode({space_hello}), " hello");
  // "bc" scores higher than "ab": a + bc, and "abc" is no token.
  EXPECT_EQ(t.encode("abc", false, false), (Ids{space, a, bc}));
  EXPECT_EQ(t.encode("hello", true, false), (Ids{1, space_hello}));
  EXPECT_EQ(t.encode("", false, false), Ids{});
  EXPECT_EQ(t.encode("", true, false), Ids{1});
}

TEST(SpmTokenizer, ByteFallbackAndRoundTrip) {
  SpmFixture f;
  f.add("▁", -1);
  const int32_t h = f.add("h", -2), space_h = f.add("▁h", -3);
  const Tokenizer t(f.vocab);
  // "é" (C3 A9) is not in the vocabulary: its bytes are <0xC3> <0xA9> (ids 3 + byte).
  EXPECT_EQ(t.encode("hé h", false, false), (Ids{space_h, 3 + 0xC3, 3 + 0xA9, space_h}));
  const std::string text = "h h\n\xFF é🦙";
  EXPECT_EQ(t.decode(t.encode(text, false, false)), " " + text);  // the space prefix stays
  EXPECT_EQ(t.decode({1, h, 2}), "h");
  EXPECT_EQ(t.decode({0}), "▅");
}

// SentencePiece spells a space as "▁" (U+2581), so that mark in the input is the space's piece and
// decodes as a space, as in sentencepiece and llama.cpp (fuzz_tokenizer found the round-trip promise
// in tokenizer.h silent on it).
TEST(SpmTokenizer, SpaceMarkInTheTextDecodesAsASpace) {
  SpmFixture f;
  const int32_t space = f.add("▁", -1), a = f.add("a", -2);
  const Tokenizer t(f.vocab);
  EXPECT_EQ(t.encode("a▁a", false, false), (Ids{space, a, space, a}));
  EXPECT_EQ(t.decode(t.encode("a▁a", false, false)), " a a");
}

TEST(SpmTokenizer, SpecialTokensRestartTheSpacePrefix) {
  SpmFixture f;
  const int32_t space_h = f.add("▁h", -3);
  f.add("h", -2);
  f.add("▁", -1);
  const Tokenizer t(f.vocab);
  EXPECT_EQ(t.encode("h</s>h", false, true), (Ids{space_h, 2, space_h}));
  EXPECT_EQ(t.encode("</s>", false, true), Ids{2});
}

TEST(SpmTokenizer, NoSpacePrefixWhenTheVocabularySaysSo) {
  SpmFixture f;
  const int32_t h = f.add("h", -2), space_h = f.add("▁h", -3);
  f.add("▁", -1);
  f.vocab.add_space_prefix = false;
  const Tokenizer t(f.vocab);
  EXPECT_EQ(t.encode("h h", false, false), (Ids{h, space_h}));
  EXPECT_EQ(t.encode("h</s>h", false, true), (Ids{h, 2, h}));
  EXPECT_EQ(t.decode(t.encode("h h", false, false)), "h h");
}

TEST(SpmTokenizer, UnknownWithoutByteTokens) {
  Vocab v;
  v.model = "llama";
  v.tokens = {"<unk>", "▁", "a"};
  v.types = {TokenType::UNKNOWN, TokenType::NORMAL, TokenType::NORMAL};
  v.unk_id = 0;
  EXPECT_EQ(Tokenizer(v).encode("ab", false, false), (Ids{1, 2, 0}));
  v.unk_id = -1;
  v.types[0] = TokenType::NORMAL;
  EXPECT_THROW(Tokenizer(v).encode("ab", false, false), Error);
}

// Byte tokens plus "ab", "bc", "abcd" with the given merges.
Vocab small_bpe(const std::vector<std::string>& merges) {
  Vocab v = builtin_byte_vocab(258);
  for (const char* text : {"ab", "bc", "abcd"}) {
    v.tokens.push_back(text);
    v.types.push_back(TokenType::NORMAL);
  }
  v.merges = merges;
  return v;
}

TEST(BpeTokenizer, MergesByRankThenLeftmost) {
  EXPECT_EQ(Tokenizer(small_bpe({"b c", "a b"})).encode("abc", false, false), (Ids{'a', 259}));
  EXPECT_EQ(Tokenizer(small_bpe({"a b", "b c"})).encode("abc", false, false), (Ids{258, 'c'}));
  // Whole pieces that are tokens win without any merge (Llama 3's ignore_merges).
  EXPECT_EQ(Tokenizer(small_bpe({})).encode("abcd", false, false), Ids{260});
  // "bcbc" with only "b c": both pairs merge.
  EXPECT_EQ(Tokenizer(small_bpe({"b c"})).encode("bcbc", false, false), (Ids{259, 259}));
}

// Qwen's pre-tokenizer row does not ignore merges: a piece that is a token but that no merge
// reaches is spelt by its merges, as the tokenizers library does with ignore_merges false.
TEST(BpeTokenizer, QwenNeverSkipsMerges) {
  Vocab v = small_bpe({"a b"});
  v.pre = "qwen2";
  EXPECT_EQ(Tokenizer(v).encode("abcd", false, false), (Ids{258, 'c', 'd'}));
  v.pre = "llama-bpe";
  EXPECT_EQ(Tokenizer(v).encode("abcd", false, false), Ids{260});
}

TEST(BpeTokenizer, RefusesBrokenMerges) {
  EXPECT_THROW(Tokenizer(small_bpe({"a x"})), Error);    // "x" is a byte token but "ax" is no token
  EXPECT_THROW(Tokenizer(small_bpe({"ab cd"})), Error);  // "cd" is not a token
  EXPECT_THROW(Tokenizer(small_bpe({"abc"})), Error);    // not a pair
}

TEST(ByteVocab, Layout) {
  const Tokenizer t(builtin_byte_vocab(300));
  EXPECT_EQ(t.n_vocab(), 300);
  EXPECT_EQ(t.bos_id(), 256);
  EXPECT_EQ(t.eos_id(), 257);
  EXPECT_EQ(t.vocab().tokens[' '], "Ġ");
  EXPECT_EQ(t.vocab().tokens['\n'], "Ċ");
  EXPECT_EQ(t.vocab().tokens[258], "<|reserved_special_token_0|>");
  EXPECT_EQ(t.vocab().tokens[299], "<|reserved_special_token_41|>");
  EXPECT_TRUE(t.is_end_of_generation(257));
  EXPECT_EQ(t.encode("hi", true, false), (Ids{256, 'h', 'i'}));
  EXPECT_EQ(t.encode("a<|end_of_text|>", false, true), (Ids{'a', 257}));
  EXPECT_EQ(t.encode("a<|end_of_text|>", false, false).size(), 16u);
  EXPECT_THROW(builtin_byte_vocab(257), Error);
}

TEST(ByteVocab, RoundTripsAnyBytes) {
  const Tokenizer t(builtin_byte_vocab(260));
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  for (const std::string& text :
       {all, std::string("\xC3\x28\xA0\xA1 \xF0\x28\x8C\x28"), std::string("\0x\0", 3)}) {
    const Ids ids = t.encode(text, false, true);
    EXPECT_EQ(ids.size(), text.size());
    EXPECT_EQ(t.decode(ids), text);
  }
  EXPECT_EQ(t.decode({256, 'o', 'k', 257, 259}), "ok");
}

TEST(StreamDecoder, HoldsBackIncompleteCharacters) {
  const Tokenizer t(builtin_byte_vocab(258));
  StreamDecoder stream(t);
  const std::string llama = "🦙";  // F0 9F A6 99
  EXPECT_EQ(stream.push(uint8_t(llama[0])), "");
  EXPECT_EQ(stream.push(uint8_t(llama[1])), "");
  EXPECT_EQ(stream.push(uint8_t(llama[2])), "");
  EXPECT_EQ(stream.push(uint8_t(llama[3])), llama);
  EXPECT_EQ(stream.push('a'), "a");
  EXPECT_EQ(stream.push(0xC3), "");
  EXPECT_EQ(stream.push(256), "");  // BOS renders as nothing and does not break the character
  EXPECT_EQ(stream.push(0xA9), "é");
  // Bytes that can never complete a character are shown at once.
  EXPECT_EQ(stream.push(0xFF), "\xFF");
  EXPECT_EQ(stream.push(0xE2), "");
  EXPECT_EQ(stream.push('x'), "\xE2x");
  EXPECT_EQ(stream.push(0xE2), "");
  EXPECT_EQ(stream.flush(), "\xE2");
  EXPECT_EQ(stream.flush(), "");
}

TEST(PreTokenizer, SplitsLikeLlama3) {
  const PreTokenizer pre("llama-bpe");
  using Pieces = std::vector<std::string_view>;
  EXPECT_EQ(pre.split("Hello world's  12345!!\n\n"),
            (Pieces{"Hello", " world", "'s", " ", " ", "123", "45", "!!\n\n"}));
  EXPECT_EQ(pre.split("a\xFF\xFE b"), (Pieces{"a", "\xFF\xFE", " b"}));
  EXPECT_EQ(pre.split(""), Pieces{});
  const std::string spaces(200000, ' ');
  EXPECT_EQ(pre.split(spaces + "x").size(), 2u);
  EXPECT_THROW(PreTokenizer("default"), Error);
  EXPECT_THROW(PreTokenizer("deepseek-v3"), Error);
}

TEST(PreTokenizer, SplitsLikeQwen2UnderBothNames) {
  using Pieces = std::vector<std::string_view>;
  for (const char* name : {"qwen2", "deepseek-r1-qwen"}) {
    const PreTokenizer pre(name);
    EXPECT_EQ(&pre.type(), find_pre_tokenizer("qwen2"));
    EXPECT_EQ(pre.split("Hello world's  12345!!\n\n"),
              (Pieces{"Hello", " world", "'s", " ", " ", "1", "2", "3", "4", "5", "!!\n\n"}));
  }
  EXPECT_FALSE(find_pre_tokenizer("qwen2")->ignore_merges);
  EXPECT_TRUE(find_pre_tokenizer("llama-bpe")->ignore_merges);
}

TEST(Vocab, ValidateRefusesInconsistentVocabularies) {
  Vocab v = builtin_byte_vocab(260);
  v.types.pop_back();
  EXPECT_THROW(v.validate("x"), Error);
  EXPECT_THROW(Tokenizer{v}, Error);
  v = builtin_byte_vocab(260);
  v.bos_id = 260;
  EXPECT_THROW(v.validate("x"), Error);
  v = builtin_byte_vocab(260);
  v.scores = {1.0f};
  EXPECT_THROW(v.validate("x"), Error);
  v = builtin_byte_vocab(260);
  v.eog_ids.push_back(-3);
  EXPECT_THROW(v.validate("x"), Error);
  v = builtin_byte_vocab(260);
  v.types[5] = static_cast<TokenType>(9);
  EXPECT_THROW(v.validate("x"), Error);
  v = builtin_byte_vocab(260);
  v.model = "bert";
  EXPECT_THROW(Tokenizer{v}, Error);
  v = builtin_byte_vocab(260);
  v.pre = "deepseek-v3";  // a pre-tokenizer llama.cpp knows and r1pi does not
  try {
    Tokenizer{v};
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported pre-tokenizer"), std::string::npos) << e.what();
  }
  v = builtin_byte_vocab(260);
  v.tokens.erase(v.tokens.begin() + 'a');
  v.types.pop_back();
  EXPECT_THROW(Tokenizer{v}, Error);  // byte 'a' has no token
}

void write_vocab_gguf(const std::string& path, const Vocab& v, bool with_types) {
  GgufWriter w;
  w.add("tokenizer.ggml.model", GgufValue::string(v.model));
  w.add("tokenizer.ggml.pre", GgufValue::string(v.pre));
  w.add("tokenizer.ggml.tokens", GgufValue::string_array(v.tokens));
  if (with_types) {
    std::vector<int32_t> types;
    for (TokenType type : v.types) types.push_back(static_cast<int32_t>(type));
    w.add("tokenizer.ggml.token_type", GgufValue::i32_array(types));
  }
  w.add("tokenizer.ggml.merges", GgufValue::string_array(v.merges));
  w.add("tokenizer.ggml.bos_token_id", GgufValue::u32(v.bos_id));
  w.add("tokenizer.ggml.eos_token_id", GgufValue::u32(v.eos_id));
  w.add("tokenizer.ggml.eot_token_id", GgufValue::u32(259));
  w.add("tokenizer.ggml.add_bos_token", GgufValue::boolean(false));
  w.add("tokenizer.chat_template", GgufValue::string("{{ bos_token }}"));
  w.open(path);
  w.close();
}

// Llama 3's byte-level vocabulary labelled as SentencePiece ('llama') would encode every word
// through <unk>: refused, with or without DeepSeek's special names (which hold '▁').
TEST(Vocab, SentencePieceModelOverAByteLevelVocabularyIsRefused) {
  for (SpecialTokenNames names : {SpecialTokenNames::Llama3, SpecialTokenNames::DeepSeekR1}) {
    Vocab v = load_hf_tokenizer_json(test::shared_data("llama3-tokenizer.json"), names);
    EXPECT_NO_THROW(Tokenizer{v});
    v.model = "llama";
    const std::string error = test::error_of([&] { Tokenizer{v}; });
    EXPECT_NE(error.find("tokenizer.ggml.model is 'llama' (SentencePiece), but the tokens are byte-level"),
              std::string::npos) << error;
  }
}

// Errors of the tokenizer built from a file name the file.
TEST(Vocab, TokenizerErrorsNameTheFile) {
  // The built-in byte vocabulary says tokenizer.ggml.model = "gpt2"; "bert" has the same length,
  // so the value can be changed in place.
  MakeOptions o;
  o.progress = false;
  const std::string path = test::make_model_file("bert-tokenizer", o);
  std::string bytes = test::read_file(path);
  const std::string key = "tokenizer.ggml.model";
  const size_t at = bytes.find(key);
  ASSERT_NE(at, std::string::npos);
  const size_t value = at + key.size() + 4 + 8;  // the type (uint32) and the string length (uint64)
  ASSERT_EQ(bytes.substr(value, 4), "gpt2");
  bytes.replace(value, 4, "bert");
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  const std::string error = test::error_of([&] { describe_model(GgufFile::open(path), 0, 1); });
  EXPECT_NE(error.find(path + ": tokenizer: unsupported tokenizer model 'bert'"), std::string::npos) << error;
}

TEST(Vocab, FromGguf) {
  const std::string dir = test::scratch_dir("vocab_from_gguf");
  Vocab v = small_bpe({"a b"});
  v.tokens[260] = "<|eot_id|>";
  v.types[260] = TokenType::CONTROL;
  write_vocab_gguf(dir + "/vocab.gguf", v, true);
  const Vocab read = Vocab::from_gguf(GgufFile::open(dir + "/vocab.gguf"));
  EXPECT_EQ(read.model, "gpt2");
  EXPECT_EQ(read.pre, "llama-bpe");
  EXPECT_EQ(read.tokens, v.tokens);
  EXPECT_EQ(read.types, v.types);
  EXPECT_EQ(read.merges, v.merges);
  EXPECT_EQ(read.bos_id, 256);
  EXPECT_EQ(read.eos_id, 257);
  EXPECT_EQ(read.unk_id, -1);
  EXPECT_FALSE(read.add_bos);
  EXPECT_EQ(read.chat_template, "{{ bos_token }}");
  EXPECT_EQ(read.eog_ids, (Ids{257, 260, 259}));
  EXPECT_EQ(Tokenizer(read).encode("ab", false, false), Ids{258});

  // Token types default to NORMAL; a bad BOS id is refused, naming the file.
  v.bos_id = 5000;
  write_vocab_gguf(dir + "/bad.gguf", v, false);
  try {
    Vocab::from_gguf(GgufFile::open(dir + "/bad.gguf"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.gguf"), std::string::npos) << e.what();
  }
}

// Without tokenizer.ggml.add_bos_token, BOS is added as llama.cpp adds it: for Llama 3's
// pre-tokenizer and SentencePiece, not for Qwen's.
TEST(Vocab, AddBosDefaultFollowsThePreTokenizer) {
  const std::string dir = test::scratch_dir("vocab_add_bos");
  const Vocab v = small_bpe({"a b"});
  auto read_without_key = [&](const std::string& model, const std::string& pre) {
    GgufWriter w;
    w.add("tokenizer.ggml.model", GgufValue::string(model));
    w.add("tokenizer.ggml.pre", GgufValue::string(pre));
    w.add("tokenizer.ggml.tokens", GgufValue::string_array(v.tokens));
    w.add("tokenizer.ggml.merges", GgufValue::string_array(v.merges));
    const std::string path = dir + "/" + model + "-" + pre + ".gguf";
    w.open(path);
    w.close();
    return Vocab::from_gguf(GgufFile::open(path)).add_bos;
  };
  EXPECT_TRUE(read_without_key("gpt2", "llama-bpe"));
  EXPECT_FALSE(read_without_key("gpt2", "qwen2"));
  EXPECT_FALSE(read_without_key("gpt2", "deepseek-r1-qwen"));
  EXPECT_TRUE(read_without_key("llama", "default"));
}

// llama.cpp's converters write -1 for an absent special token (0xFFFFFFFF as UINT32, as in the
// stories260K.gguf that llama.cpp's CI runs); other ids outside the vocabulary stay errors.
TEST(Vocab, MinusOneMeansNoToken) {
  const std::string dir = test::scratch_dir("vocab_minus_one");
  const Vocab v = small_bpe({"a b"});
  auto read_with = [&](const char* key, GgufValue value) {
    GgufWriter w;
    w.add("tokenizer.ggml.model", GgufValue::string("llama"));
    w.add("tokenizer.ggml.tokens", GgufValue::string_array(v.tokens));
    w.add(key, std::move(value));
    w.add("tokenizer.ggml.seperator_token_id", GgufValue::u32(0xFFFFFFFFu));
    const std::string path = dir + "/" + key + ".gguf";
    w.open(path);
    w.close();
    return Vocab::from_gguf(GgufFile::open(path));
  };
  EXPECT_EQ(read_with("tokenizer.ggml.padding_token_id", GgufValue::u32(0xFFFFFFFFu)).pad_id, -1);
  EXPECT_EQ(read_with("tokenizer.ggml.padding_token_id", GgufValue::i32(-1)).pad_id, -1);
  EXPECT_EQ(read_with("tokenizer.ggml.padding_token_id", GgufValue::u32(7)).pad_id, 7);
  EXPECT_TRUE(read_with("tokenizer.ggml.padding_token_id", GgufValue::u32(7)).add_space_prefix);
  EXPECT_FALSE(read_with("tokenizer.ggml.add_space_prefix", GgufValue::boolean(false)).add_space_prefix);
  // An absent BOS/EOS of a SentencePiece vocabulary is llama.cpp's default id, as for a missing key.
  EXPECT_EQ(read_with("tokenizer.ggml.eos_token_id", GgufValue::u32(0xFFFFFFFFu)).eos_id, 2);
  const Vocab no_eot = read_with("tokenizer.ggml.eot_token_id", GgufValue::u64(~uint64_t{0}));
  EXPECT_EQ(no_eot.eog_ids, Ids{2});
  for (GgufValue bad : {GgufValue::i32(-2), GgufValue::u32(0xFFFFFFFEu), GgufValue::u32(261)}) {
    try {
      read_with("tokenizer.ggml.padding_token_id", bad);
      FAIL() << "expected an error for " << bad.to_display_string();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("padding"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace r1pi
