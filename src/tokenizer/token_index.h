// Token text -> id, looked up with string_view so that encoding allocates no keys.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace r1pi {

class TokenIndex {
 public:
  // When a text occurs more than once (some converted vocabularies repeat padding tokens), the
  // lowest id wins.
  explicit TokenIndex(const std::vector<std::string>& tokens) {
    ids_.reserve(tokens.size());
    for (size_t i = 0; i < tokens.size(); ++i) ids_.emplace(tokens[i], static_cast<int32_t>(i));
  }
  // The id of a token with exactly this text, or -1.
  int32_t find(std::string_view text) const {
    auto it = ids_.find(text);
    return it == ids_.end() ? -1 : it->second;
  }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, int32_t, Hash, std::equal_to<>> ids_;
};

}  // namespace r1pi
