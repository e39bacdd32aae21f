#include "grammar/parse_stacks.h"

#include <algorithm>

namespace r1pi {
namespace {

using Kind = Grammar::Kind;

// Pushes stack (with its top not yet expanded) into out once every top is a character element:
// a rule on top is replaced by what follows it, then each of its alternatives' first elements.
void expand(const Grammar& g, ParseStack& stack, StackSet& out) {
  if (stack.empty() || g.elements[stack.back()].kind == Kind::Chars) {
    out.push_back(stack);
    return;
  }
  const uint32_t at = stack.back();
  const uint32_t rule = g.elements[at].index;
  stack.pop_back();
  if (g.elements[at + 1].kind != Kind::End) stack.push_back(at + 1);
  const size_t depth = stack.size();
  for (uint32_t start : g.alternatives[rule]) {
    if (g.elements[start].kind != Kind::End) stack.push_back(start);
    expand(g, stack, out);
    stack.resize(depth);
  }
  // Leave the caller's stack as it was.
  if (g.elements[at + 1].kind != Kind::End) stack.pop_back();
  stack.push_back(at);
}

void normalize(StackSet& stacks) {
  std::sort(stacks.begin(), stacks.end());
  stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
}

}  // namespace

Utf8Step utf8_step(Utf8Partial& p, uint8_t b, uint32_t& cp) {
  if (p.remaining == 0) {
    if (b < 0x80) {
      cp = b;
      return Utf8Step::Complete;
    }
    if (b >= 0xC2 && b <= 0xDF) p = {uint32_t(b & 0x1F), 1, 2};
    else if (b >= 0xE0 && b <= 0xEF) p = {uint32_t(b & 0x0F), 2, 3};
    else if (b >= 0xF0 && b <= 0xF4) p = {uint32_t(b & 0x07), 3, 4};
    else return Utf8Step::Invalid;
    return Utf8Step::Partial;
  }
  if ((b & 0xC0) != 0x80) return Utf8Step::Invalid;
  Utf8Partial next{(p.value << 6) | (b & 0x3F), uint8_t(p.remaining - 1), p.length};
  // Reject overlong, out-of-range and surrogate forms as soon as the bits say so: a token may
  // end inside a character only where some character can still follow.
  uint32_t lo = 0, hi = 0;
  utf8_completions(next, lo, hi);
  if (hi < lo || (lo >= 0xD800 && hi <= 0xDFFF)) return Utf8Step::Invalid;
  if (next.remaining > 0) {
    p = next;
    return Utf8Step::Partial;
  }
  cp = next.value;
  p = {};
  return Utf8Step::Complete;
}

void utf8_completions(const Utf8Partial& p, uint32_t& lo, uint32_t& hi) {
  const uint32_t shift = 6u * p.remaining;
  lo = p.value << shift;
  hi = lo | ((1u << shift) - 1);
  const uint32_t min_of_length = p.length == 2 ? 0x80 : p.length == 3 ? 0x800 : 0x10000;
  lo = std::max(lo, min_of_length);
  hi = std::min(hi, kMaxCodePoint);
}

StackSet initial_stacks(const Grammar& g) {
  StackSet out;
  ParseStack stack;
  for (uint32_t start : g.alternatives[g.root]) {
    stack.clear();
    if (g.elements[start].kind != Kind::End) stack.push_back(start);
    expand(g, stack, out);
  }
  normalize(out);
  return out;
}

StackSet advance_stacks(const Grammar& g, const StackSet& stacks, uint32_t cp) {
  StackSet out;
  ParseStack next;
  for (const ParseStack& stack : stacks) {
    if (stack.empty() || !g.sets[g.elements[stack.back()].index].contains(cp)) continue;
    next.assign(stack.begin(), stack.end() - 1);
    const uint32_t following = stack.back() + 1;
    if (g.elements[following].kind != Kind::End) next.push_back(following);
    expand(g, next, out);
  }
  normalize(out);
  return out;
}

bool partial_matchable(const Grammar& g, const StackSet& stacks, const Utf8Partial& p) {
  uint32_t lo = 0, hi = 0;
  utf8_completions(p, lo, hi);
  for (const ParseStack& stack : stacks)
    if (!stack.empty() && g.sets[g.elements[stack.back()].index].intersects(lo, hi)) return true;
  return false;
}

}  // namespace r1pi
