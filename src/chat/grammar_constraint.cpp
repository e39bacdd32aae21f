#include "chat/grammar_constraint.h"

#include <map>
#include <mutex>

#include "common/error.h"
#include "grammar/token_mask.h"

namespace r1pi {

namespace {

constexpr std::string_view kOpen = "<think>", kClose = "</think>";

}  // namespace

std::shared_ptr<const TokenTrie> token_trie_of(const Tokenizer& tokenizer) {
  static std::mutex mutex;
  static std::map<const Tokenizer*, std::shared_ptr<const TokenTrie>> tries;
  std::lock_guard lock(mutex);
  std::shared_ptr<const TokenTrie>& trie = tries[&tokenizer];
  if (!trie) trie = std::make_shared<const TokenTrie>(tokenizer);
  return trie;
}

GrammarConstraint::GrammarConstraint(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> trie,
                                     ReasoningStart start)
    : state_(std::move(grammar)),
      trie_(std::move(trie)),
      phase_(start == ReasoningStart::Inside  ? Phase::Reasoning
             : start == ReasoningStart::Opens ? Phase::MayOpen
                                              : Phase::Answer) {
  // Harmony's answer is messages whose headers are control tokens, which the trie leaves out.
  if (start == ReasoningStart::Harmony) throw Error("internal error: harmony's constraint is HarmonyConstraint");
}

bool GrammarConstraint::allowed(TokenMask& mask) const {
  mask.clear();
  if (phase_ == Phase::Reasoning) return true;  // free: no mask
  mask = allowed_tokens(state_, *trie_);
  // The answer's first token may open a think block instead.
  if (phase_ == Phase::MayOpen)
    for (int32_t id = 0; id < trie_->n_vocab(); ++id)
      if (trie_->bytes(id).starts_with(kOpen)) mask[size_t(id) >> 6] |= uint64_t(1) << (id & 63);
  for (uint64_t word : mask)
    if (word) return true;
  return false;
}

bool GrammarConstraint::allows(int32_t id) const {
  if (phase_ == Phase::Reasoning) return true;
  if (phase_ == Phase::MayOpen && trie_->bytes(id).starts_with(kOpen)) return true;
  return r1pi::allows(state_, *trie_, id);
}

void GrammarConstraint::accept(int32_t id) {
  const std::string& bytes = trie_->bytes(id);
  if (phase_ == Phase::MayOpen) {
    if (bytes.starts_with(kOpen)) {
      phase_ = Phase::Reasoning;
      tail_ = bytes.substr(kOpen.size());
    } else {
      phase_ = Phase::Answer;
    }
  } else if (phase_ == Phase::Reasoning) {
    tail_ += bytes;
  }
  if (phase_ == Phase::Reasoning) {
    const size_t end = tail_.find(kClose);
    if (end == std::string::npos) {
      if (tail_.size() > kClose.size()) tail_.erase(0, tail_.size() - kClose.size());
      return;
    }
    // The answer begins after the block; what the closing token wrote past "</think>" (a
    // newline) counts for the grammar only where it allows it.
    phase_ = Phase::Answer;
    const std::string rest = tail_.substr(end + kClose.size());
    tail_.clear();
    (void)state_.accept(rest);
    return;
  }
  if (!accept_token(state_, *trie_, id))
    throw Error("internal error: the grammar refused token " + std::to_string(id) + " that its mask allowed");
  written_ += bytes;
  if (written_.size() > 48) written_.erase(0, written_.size() - 48);
}

std::string GrammarConstraint::describe() const {
  return written_.empty() ? "the start of the answer" : "'..." + written_ + "'";
}

}  // namespace r1pi
