// o200k_vectors TOKENIZER_JSON VECTORS_JSON [GGUF]: gpt-oss's tokenizer (o200k_harmony, from
// o200k_tokenizer_json.py) against js-tiktoken's ids, OpenAI's reference tokenizer
// (shared/data/gptoss/o200k_harmony_vectors.json): every case's ordinary ids (special-token text as
// text) and its ids with the harmony specials parsed, and decode gives the text back. Where
// llama.cpp's ids differ (its regex drops combining marks; it parses five harmony markers even as
// text), r1pi follows tiktoken, the model's own: it must give tiktoken's ids there, not llama.cpp's.
// With a GGUF made from the same tokenizer.json, the file's tokenizer gives the same ids. Also the
// vocabulary's layout: sizes, specials, end-of-generation tokens. Prints PASS/FAIL lines.
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "tokenizer/hf_tokenizer_json.h"
#include "tokenizer/tokenizer.h"

namespace {

using Ids = std::vector<int32_t>;
int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "PASS" : "FAIL", what.c_str());
  failures += !ok;
}

std::string show(const Ids& ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return "[" + s + "]";
}

void check_cases(const r1pi::Tokenizer& t, const nlohmann::json& cases, const std::string& which) {
  int ordinary = 0, special = 0, decoded = 0, llama_differs = 0;
  for (const nlohmann::json& c : cases) {
    const std::string text = c.at("text");
    const Ids want = c.at("ids"), want_harmony = c.at("ids_harmony");
    const Ids got = t.encode(text, false, false), got_harmony = t.encode(text, false, true);
    if (got == want) ++ordinary;
    else std::printf("  %s ordinary '%s': %s, tiktoken %s\n", which.c_str(), text.c_str(), show(got).c_str(), show(want).c_str());
    if (got_harmony == want_harmony) ++special;
    else std::printf("  %s with specials '%s': %s, tiktoken %s\n", which.c_str(), text.c_str(), show(got_harmony).c_str(),
                     show(want_harmony).c_str());
    decoded += t.decode(got) == text;
    llama_differs += c.contains("llama_cpp_ids") || c.contains("llama_cpp_ids_special");
  }
  const size_t n = cases.size();
  check(ordinary == int(n), which + ": " + std::to_string(ordinary) + " of " + std::to_string(n) +
                                " cases give js-tiktoken's ordinary ids (" + std::to_string(llama_differs) +
                                " where llama.cpp's differ)");
  check(special == int(n), which + ": " + std::to_string(special) + " of " + std::to_string(n) +
                               " give its ids with the harmony specials parsed");
  check(decoded == int(n), which + ": " + std::to_string(decoded) + " of " + std::to_string(n) + " decode back to the text");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: o200k_vectors TOKENIZER_JSON VECTORS_JSON [GGUF]\n");
    return 2;
  }
  try {
    const nlohmann::json vectors = nlohmann::json::parse(std::ifstream(argv[2]));
    const nlohmann::json& cases = vectors.at("cases");
    const r1pi::Tokenizer t(r1pi::load_hf_tokenizer_json(argv[1], r1pi::SpecialTokenNames::Llama3));
    const r1pi::Vocab& v = t.vocab();
    check(v.pre == "gpt-4o" && t.n_vocab() == 201088 && v.merges.size() == 446189,
          "the vocabulary: pre " + v.pre + ", " + std::to_string(t.n_vocab()) + " tokens, " +
              std::to_string(v.merges.size()) + " merges (gpt-oss's GGUF: gpt-4o, 201088, 446189)");
    check(t.bos_id() == 199998 && t.eos_id() == 200002 && v.pad_id == 199999 && !t.add_bos(),
          "BOS <|startoftext|> 199998 (never added), EOS <|return|> 200002, padding <|endoftext|> 199999");
    check(t.is_end_of_generation(200002) && t.is_end_of_generation(200012) && t.is_end_of_generation(199999) &&
              !t.is_end_of_generation(200007),
          "generation ends at <|return|>, <|call|> and <|endoftext|>, not at <|end|> (it closes a message)");
    check(v.tokens[200018] == "<|endofprompt|>" && v.tokens[200005] == "<|channel|>" && v.tokens[201087] == "<|reserved_201087|>",
          "specials: 200018 <|endofprompt|>, 200005 <|channel|>, 201087 <|reserved_201087|>");
    check_cases(t, cases, "tokenizer.json");
    if (argc > 3) {
      const r1pi::Tokenizer g(r1pi::Vocab::from_gguf(r1pi::GgufFile::open(argv[3])));
      check(g.vocab().pre == "gpt-4o" && g.n_vocab() == 201088, "the GGUF's vocabulary reads back");
      check_cases(g, cases, "GGUF");
    }
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
  return failures ? 1 : 0;
}
