// The matcher's step (llama.cpp's stack-set approach, written anew): a match in progress is a set
// of parse stacks, each a list of positions in Grammar::elements still to match, the top last.
// After expansion every top is a character element; an empty stack means the grammar is complete.
// One code point advances every stack whose top matches it and drops the others. UTF-8 arrives a
// byte at a time (tokens split characters), so a partial character is carried beside the stacks
// and must stay matchable by some top.
#pragma once
#include <cstdint>
#include <vector>

#include "grammar/grammar.h"

namespace r1pi {

using ParseStack = std::vector<uint32_t>;
using StackSet = std::vector<ParseStack>;  // sorted, no duplicates: equal matches compare equal

// A UTF-8 character begun but not finished.
struct Utf8Partial {
  uint32_t value = 0;     // the bits read so far
  uint8_t remaining = 0;  // continuation bytes still to come; 0: between characters
  uint8_t length = 0;     // the character's length in bytes
  bool operator==(const Utf8Partial&) const = default;
};

enum class Utf8Step { Complete, Partial, Invalid };
// One byte into p; Complete sets cp (and resets p). Invalid for malformed, overlong, surrogate or
// out-of-range sequences.
Utf8Step utf8_step(Utf8Partial& p, uint8_t byte, uint32_t& cp);
// The code points a partial character can still become.
void utf8_completions(const Utf8Partial& p, uint32_t& lo, uint32_t& hi);

StackSet initial_stacks(const Grammar& g);
// The stacks after cp (empty: cp is not allowed here).
StackSet advance_stacks(const Grammar& g, const StackSet& stacks, uint32_t cp);
// Whether some top can match some completion of p.
bool partial_matchable(const Grammar& g, const StackSet& stacks, const Utf8Partial& p);
// Whether some stack is empty (sorted: the empty one would come first).
inline bool stacks_complete(const StackSet& stacks) { return !stacks.empty() && stacks.front().empty(); }

}  // namespace r1pi
