// The reasoning block the R1 and Qwen3 templates and models write: "<think>" reasoning "</think>"
// answer. Plain text to r1pi, whatever the vocabulary makes of it: R1's "</think>" is one
// USER_DEFINED token, Qwen3's "<think>" an ordinary one, and a model may spell either in pieces.
#pragma once
#include <string_view>

namespace r1pi {

inline constexpr std::string_view kThinkStart = "<think>";
inline constexpr std::string_view kThinkEnd = "</think>";

// An earlier answer as both templates keep it: the text after its last "</think>" (all of it
// when there is none).
inline std::string_view after_last_think_end(std::string_view answer) {
  const size_t end = answer.rfind(kThinkEnd);
  return end == std::string_view::npos ? answer : answer.substr(end + kThinkEnd.size());
}

}  // namespace r1pi
