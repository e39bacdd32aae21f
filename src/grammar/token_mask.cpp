#include "grammar/token_mask.h"

#include <optional>
#include <unordered_map>

#include "common/error.h"

namespace r1pi {
namespace {

struct StackSetHash {
  size_t operator()(const StackSet& stacks) const {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (const ParseStack& stack : stacks) {
      for (uint32_t p : stack) h = (h ^ p) * 0x100000001B3ull;
      h = (h ^ 0xFFFFFFFFull) * 0x100000001B3ull;  // stack boundary
    }
    return size_t(h ^ (h >> 29));
  }
};

// Which stacks' tops match every completion of a partial character (bit i: stack i), when
// the answer is the same for all of them and every continuation byte keeps the character valid;
// nullopt otherwise. Such partial characters lead to the same states whatever their bits so far,
// so the walk keeps one state for all of them (the thousands of two-byte prefixes of CJK
// characters inside a JSON string are one state, not thousands).
std::optional<uint64_t> uniform_tops(const Grammar& g, const StackSet& stacks, const Utf8Partial& p) {
  if (stacks.size() > 64) return std::nullopt;
  const uint32_t shift = 6u * p.remaining;
  const uint32_t lo = p.value << shift, hi = lo | ((1u << shift) - 1);
  const uint32_t min_of_length = p.length == 2 ? 0x80 : p.length == 3 ? 0x800 : 0x10000;
  if (lo < min_of_length || hi > kMaxCodePoint || (lo <= 0xDFFF && hi >= 0xD800)) return std::nullopt;
  uint64_t tops = 0;
  for (size_t i = 0; i < stacks.size(); ++i) {
    if (stacks[i].empty()) continue;
    const CharSet& set = g.sets[g.elements[stacks[i].back()].index];
    if (set.covers(lo, hi))
      tops |= uint64_t(1) << i;
    else if (set.intersects(lo, hi))
      return std::nullopt;
  }
  return tops;
}

// The match states one walk meets, with their byte transitions filled in as first needed.
class TransitionCache {
 public:
  static constexpr int32_t kDead = -1;
  static constexpr int32_t kUnknown = -2;

  TransitionCache(const Grammar& g, const GrammarState& start) : g_(g) {
    start_ = intern(intern_stacks(start.stacks()), start.partial());
  }
  int32_t start() const { return start_; }

  int32_t next(int32_t state, uint8_t byte) {
    const int32_t known = transitions_[size_t(state) * 256 + byte];
    if (known != kUnknown) return known;
    const int32_t computed = compute(state, byte);
    transitions_[size_t(state) * 256 + byte] = computed;  // compute() may have grown the table
    return computed;
  }

 private:
  // A state: the stacks and the partial character (for a uniform one, the first met stands for
  // all: their transitions are the same).
  struct State {
    uint32_t stacks;
    Utf8Partial partial;
  };
  struct Key {
    uint32_t stacks;
    Utf8Partial partial;  // value 0 when uniform
    uint64_t uniform;     // uniform_tops + 1; 0: an exact partial character
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t h = (uint64_t(k.stacks) << 32) ^ (uint64_t(k.partial.value) << 8) ^ (uint64_t(k.partial.remaining) << 4) ^
                   k.partial.length;
      return size_t((h ^ (k.uniform * 0x9E3779B97F4A7C15ull)) * 0xFF51AFD7ED558CCDull >> 7);
    }
  };
  const Grammar& g_;
  std::vector<StackSet> stack_sets_;
  std::unordered_map<StackSet, uint32_t, StackSetHash> stack_set_ids_;
  std::vector<State> states_;
  std::unordered_map<Key, int32_t, KeyHash> state_ids_;
  std::vector<int32_t> transitions_;  // 256 per state
  int32_t start_ = 0;

  uint32_t intern_stacks(const StackSet& stacks) {
    const auto [it, fresh] = stack_set_ids_.emplace(stacks, uint32_t(stack_sets_.size()));
    if (fresh) stack_sets_.push_back(stacks);
    return it->second;
  }
  int32_t intern(uint32_t stacks, const Utf8Partial& p) {
    Key key{stacks, p, 0};
    if (p.remaining > 0)
      if (const std::optional<uint64_t> tops = uniform_tops(g_, stack_sets_[stacks], p))
        key = {stacks, {0, p.remaining, p.length}, *tops + 1};
    const auto [it, fresh] = state_ids_.emplace(key, int32_t(states_.size()));
    if (fresh) {
      states_.push_back({stacks, p});
      transitions_.resize(transitions_.size() + 256, kUnknown);
    }
    return it->second;
  }
  int32_t compute(int32_t state, uint8_t byte) {
    const State s = states_[size_t(state)];
    Utf8Partial p = s.partial;
    uint32_t cp = 0;
    switch (utf8_step(p, byte, cp)) {
      case Utf8Step::Invalid:
        return kDead;
      case Utf8Step::Partial:
        return partial_matchable(g_, stack_sets_[s.stacks], p) ? intern(s.stacks, p) : kDead;
      case Utf8Step::Complete: {
        StackSet next = advance_stacks(g_, stack_sets_[s.stacks], cp);
        return next.empty() ? kDead : intern(intern_stacks(next), {});
      }
    }
    return kDead;
  }
};

void check_id(const TokenTrie& trie, int32_t id) {
  if (id < 0 || id >= trie.n_vocab())
    throw Error("grammar: token id " + std::to_string(id) + " outside the vocabulary of " +
                std::to_string(trie.n_vocab()));
}

}  // namespace

std::vector<uint64_t> allowed_tokens(const GrammarState& state, const TokenTrie& trie) {
  std::vector<uint64_t> mask((size_t(trie.n_vocab()) + 63) / 64, 0);
  if (state.can_end())
    for (int32_t id : trie.eog_ids()) mask[size_t(id) >> 6] |= uint64_t(1) << (id & 63);
  TransitionCache cache(state.grammar(), state);
  const TokenTrie::Node* nodes = trie.nodes().data();
  const int32_t* ids = trie.ids().data();
  std::vector<int32_t> at_depth(trie.max_depth() + 1);  // the state after the path to the current node
  at_depth[0] = cache.start();
  for (size_t i = 1, end = trie.n_nodes(); i < end;) {
    const TokenTrie::Node& node = nodes[i];
    const int32_t next = cache.next(at_depth[node.depth - 1u], node.byte);
    if (next == TransitionCache::kDead) {
      i = node.subtree_end;
      continue;
    }
    at_depth[node.depth] = next;
    for (uint32_t t = node.token_begin; t < nodes[i + 1].token_begin; ++t)
      mask[size_t(ids[t]) >> 6] |= uint64_t(1) << (ids[t] & 63);
    ++i;
  }
  return mask;
}

bool allows(const GrammarState& state, const TokenTrie& trie, int32_t id) {
  check_id(trie, id);
  if (trie.is_eog(id)) return state.can_end();
  if (trie.bytes(id).empty()) return false;
  GrammarState copy = state;
  return copy.accept(trie.bytes(id));
}

bool accept_token(GrammarState& state, const TokenTrie& trie, int32_t id) {
  check_id(trie, id);
  if (trie.is_eog(id)) return state.can_end();
  if (trie.bytes(id).empty()) return false;
  return state.accept(trie.bytes(id));
}

}  // namespace r1pi
