#include "grammar/token_mask.h"

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
    int32_t& slot = transitions_[size_t(state) * 256 + byte];
    if (slot != kUnknown) return slot;
    const int32_t computed = compute(state, byte);
    transitions_[size_t(state) * 256 + byte] = computed;  // slot may have moved: intern() grows the table
    return computed;
  }

 private:
  struct State {
    uint32_t stacks;
    Utf8Partial partial;
  };
  const Grammar& g_;
  std::vector<StackSet> stack_sets_;
  std::unordered_map<StackSet, uint32_t, StackSetHash> stack_set_ids_;
  std::vector<State> states_;
  std::unordered_map<uint64_t, int32_t> state_ids_;  // (stack set, partial character) -> state
  std::vector<int32_t> transitions_;                 // 256 per state
  int32_t start_ = 0;

  uint32_t intern_stacks(const StackSet& stacks) {
    const auto [it, fresh] = stack_set_ids_.emplace(stacks, uint32_t(stack_sets_.size()));
    if (fresh) stack_sets_.push_back(stacks);
    return it->second;
  }
  int32_t intern(uint32_t stacks, const Utf8Partial& p) {
    const uint64_t key = (uint64_t(stacks) << 32) ^ (uint64_t(p.value) << 8) ^ (uint64_t(p.remaining) << 4) ^ p.length;
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
  const std::vector<TokenTrie::Node>& nodes = trie.nodes();
  const std::vector<int32_t>& ids = trie.ids();
  std::vector<int32_t> at_depth(1, cache.start());  // the state after the path to the current node
  for (size_t i = 1; i < nodes.size();) {
    const TokenTrie::Node& node = nodes[i];
    const int32_t next = cache.next(at_depth[node.depth - 1u], node.byte);
    if (next == TransitionCache::kDead) {
      i = node.subtree_end;
      continue;
    }
    if (at_depth.size() <= node.depth) at_depth.resize(node.depth + 1u);
    at_depth[node.depth] = next;
    for (uint32_t t = trie.token_begin(i); t < trie.token_begin(i + 1); ++t)
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
