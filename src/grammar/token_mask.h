// Which tokens a grammar allows next: the per-step mask of constrained decoding.
//
// allowed_tokens walks the vocabulary's trie (token_trie.h) with the match state, skipping every
// subtree whose prefix the grammar refuses. The match states met on the way are interned and their
// byte transitions memoised for the walk, so the many tokens that lead to the same state (all of
// a JSON string's plain characters) cost one table look-up per trie node, not a grammar step.
// A token is allowed exactly when GrammarState::accept(its bytes) would succeed on a copy of the
// state (ending inside a UTF-8 character included); end-of-generation ids exactly when can_end().
#pragma once
#include <cstdint>
#include <vector>

#include "grammar/grammar_state.h"
#include "grammar/token_trie.h"

namespace r1pi {

// Bit id % 64 of word id / 64 is set when token id is allowed (trie.n_vocab() bits).
std::vector<uint64_t> allowed_tokens(const GrammarState& state, const TokenTrie& trie);

inline bool mask_has(const std::vector<uint64_t>& mask, int32_t id) {
  return (mask[size_t(id) >> 6] >> (id & 63)) & 1;
}

// One token (a draft's check): the same answer as the mask's bit, without computing the mask.
bool allows(const GrammarState& state, const TokenTrie& trie, int32_t id);

// Advances state over the token's bytes when allowed (an end-of-generation id leaves the state as
// it is, allowed when can_end()); false, and the state untouched, when not. Throws r1pi::Error
// for an id outside the vocabulary.
[[nodiscard]] bool accept_token(GrammarState& state, const TokenTrie& trie, int32_t id);

}  // namespace r1pi
