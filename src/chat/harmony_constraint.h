// A constraint (a grammar, a JSON Schema, a forced call) on gpt-oss's harmony answer, which is
// messages whose headers are control tokens (harmony_split.h) that a grammar's token trie leaves
// out. The analysis stays free: the answer may open with "<|channel|>analysis<|message|>", and
// after its "<|end|>" comes "<|start|>assistant" and the next message. The constrained message is
// one of the given answers: its header (control tokens matched by their text), then text its
// grammar matches, then an end-of-generation token where the grammar may end. A response format is
// the final channel's message; a forced call, a message to the function
// ("<|channel|>commentary to=functions.f<|message|>", as HarmonySplit passes calls on).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/grammar_state.h"
#include "grammar/token_trie.h"
#include "sampling/token_constraint.h"
#include "tokenizer/tokenizer.h"

namespace r1pi {

struct HarmonyAnswer {
  std::string header;  // e.g. "<|channel|>final<|message|>"
  std::shared_ptr<const Grammar> grammar;
};

// The header of the final channel's message; those of a call to function name: without a content
// type (as HarmonySplit passes calls on) and with gpt-oss's usual " <|constrain|>json".
std::string harmony_final_header();
std::string harmony_call_header(const std::string& name);
std::vector<std::string> harmony_call_headers(const std::string& name);

// Harmony's control tokens a header or the analysis's end is made of, with their text.
using HarmonyMarkers = std::vector<std::pair<int32_t, std::string>>;
// Those of the vocabulary (the ones it has: <|channel|>, <|message|>, <|start|>, <|end|>,
// <|constrain|>), each only where it is a control token: a marker spelled in text is text.
HarmonyMarkers harmony_markers(const Tokenizer& tokenizer);

class HarmonyConstraint final : public TokenConstraint {
 public:
  // Throws r1pi::Error without answers.
  HarmonyConstraint(std::vector<HarmonyAnswer> answers, std::shared_ptr<const TokenTrie> trie, HarmonyMarkers markers);
  std::unique_ptr<TokenConstraint> clone() const override { return std::make_unique<HarmonyConstraint>(*this); }
  bool allowed(TokenMask& mask) const override;
  bool allows(int32_t id) const override;
  void accept(int32_t id) override;
  std::string describe() const override;

 private:
  enum class Phase { Header, Analysis, Answer };
  // What token id adds to the text: its bytes, or a marker's text.
  const std::string& text(int32_t id) const;
  // Whether the header so far plus id's text still begins one of the headers.
  bool fits_header(int32_t id) const;

  std::vector<HarmonyAnswer> answers_;
  std::shared_ptr<const TokenTrie> trie_;
  HarmonyMarkers markers_;
  Phase phase_ = Phase::Header;
  std::string prefix_;  // "<|start|>assistant" once an analysis message has ended
  std::string tail_;    // Header: the header so far; Analysis: its last bytes, watched for "<|end|>"
  std::optional<GrammarState> state_;  // Answer: the chosen header's grammar
  std::string written_;                // the last bytes, for describe()
};

}  // namespace r1pi
