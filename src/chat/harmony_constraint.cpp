#include "chat/harmony_constraint.h"

#include <algorithm>

#include "chat/tool_call_markers.h"
#include "common/error.h"
#include "grammar/token_mask.h"

namespace r1pi {

namespace {

constexpr std::string_view kAnalysis = "<|channel|>analysis<|message|>", kEnd = "<|end|>",
                           kNext = "<|start|>assistant";

}  // namespace

std::string harmony_final_header() { return "<|channel|>final<|message|>"; }

std::string harmony_call_header(const std::string& name) {
  return std::string(tool_markers::kHarmonyCall) + name + std::string(tool_markers::kHarmonyMessage);
}

std::vector<std::string> harmony_call_headers(const std::string& name) {
  const std::string with_type = std::string(tool_markers::kHarmonyCall) + name + " <|constrain|>json";
  return {harmony_call_header(name), with_type + std::string(tool_markers::kHarmonyMessage)};
}

HarmonyMarkers harmony_markers(const Tokenizer& tokenizer) {
  HarmonyMarkers markers;
  const Vocab& v = tokenizer.vocab();
  for (const char* text : {"<|channel|>", "<|message|>", "<|start|>", "<|end|>", "<|constrain|>"})
    if (const std::optional<int32_t> id = tokenizer.find_token(text);
        id && size_t(*id) < v.types.size() && v.types[size_t(*id)] == TokenType::CONTROL)
      markers.emplace_back(*id, text);
  return markers;
}

HarmonyConstraint::HarmonyConstraint(std::vector<HarmonyAnswer> answers, std::shared_ptr<const TokenTrie> trie,
                                     HarmonyMarkers markers)
    : answers_(std::move(answers)), trie_(std::move(trie)), markers_(std::move(markers)) {
  if (answers_.empty()) throw Error("a harmony constraint needs at least one answer");
}

const std::string& HarmonyConstraint::text(int32_t id) const {
  for (const auto& [marker, text] : markers_)
    if (marker == id) return text;
  return trie_->bytes(id);
}

bool HarmonyConstraint::fits_header(int32_t id) const {
  if (trie_->is_eog(id) || text(id).empty()) return false;
  const std::string so_far = tail_ + text(id);
  // A token may also end a header and go on: past the analysis's header anything, past an
  // answer's what its grammar allows (markers spelled in text can merge with what follows).
  auto fits = [&](const std::string& header, const std::shared_ptr<const Grammar>& grammar) {
    if (header.starts_with(so_far)) return true;
    if (!so_far.starts_with(header)) return false;
    if (!grammar) return true;
    GrammarState state(grammar);
    return state.accept(std::string_view(so_far).substr(header.size()));
  };
  return fits(prefix_ + std::string(kAnalysis), nullptr) ||
         std::ranges::any_of(answers_, [&](const HarmonyAnswer& a) { return fits(prefix_ + a.header, a.grammar); });
}

bool HarmonyConstraint::allowed(TokenMask& mask) const {
  mask.clear();
  if (phase_ == Phase::Analysis) return true;  // free: no mask
  if (phase_ == Phase::Answer) {
    mask = allowed_tokens(*state_, *trie_);
  } else {
    mask.assign((size_t(trie_->n_vocab()) + 63) / 64, 0);
    for (int32_t id = 0; id < trie_->n_vocab(); ++id)
      if (fits_header(id)) mask[size_t(id) >> 6] |= uint64_t(1) << (id & 63);
  }
  return std::ranges::any_of(mask, [](uint64_t word) { return word != 0; });
}

bool HarmonyConstraint::allows(int32_t id) const {
  switch (phase_) {
    case Phase::Analysis: return true;
    case Phase::Answer: return r1pi::allows(*state_, *trie_, id);
    case Phase::Header: return fits_header(id);
  }
  return false;
}

void HarmonyConstraint::accept(int32_t id) {
  const std::string& t = text(id);
  written_ += t;
  if (written_.size() > 48) written_.erase(0, written_.size() - 48);
  if (phase_ == Phase::Answer) {
    if (!accept_token(*state_, *trie_, id))
      throw Error("internal error: the grammar refused token " + std::to_string(id) + " that its mask allowed");
    return;
  }
  tail_ += t;
  if (phase_ == Phase::Analysis) {
    const size_t end = tail_.find(kEnd);
    if (end == std::string::npos) {
      if (tail_.size() > kEnd.size()) tail_.erase(0, tail_.size() - kEnd.size());
      return;
    }
    phase_ = Phase::Header;  // what the token wrote past "<|end|>" begins the next header
    prefix_ = kNext;
    tail_.erase(0, end + kEnd.size());
    return;
  }
  // Header: once one is whole, what the token wrote past it belongs to the next phase.
  if (const std::string analysis = prefix_ + std::string(kAnalysis); tail_.starts_with(analysis)) {
    phase_ = Phase::Analysis;
    tail_.erase(0, analysis.size());
    return;
  }
  for (const HarmonyAnswer& a : answers_)
    if (const std::string header = prefix_ + a.header; tail_.starts_with(header)) {
      phase_ = Phase::Answer;
      state_.emplace(a.grammar);
      if (!state_->accept(std::string_view(tail_).substr(header.size())))
        throw Error("internal error: the grammar refused text that the header's mask allowed");
      tail_.clear();
      return;
    }
}

std::string HarmonyConstraint::describe() const {
  return written_.empty() ? "the start of the answer" : "'..." + written_ + "'";
}

}  // namespace r1pi
