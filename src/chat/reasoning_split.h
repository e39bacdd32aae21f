// DeepSeek-R1's answer in two parts: the reasoning before "</think>" and the answer after it,
// split while the text streams in, even when "</think>" arrives cut over tokens. The split is
// exact: reasoning + "</think>" + content is the text generated (nothing is trimmed).
#pragma once
#include <string>
#include <string_view>

namespace r1pi {

struct TextParts {
  std::string reasoning, content;
  bool empty() const { return reasoning.empty() && content.empty(); }
};

class ReasoningSplit {
 public:
  // in_reasoning: the text starts inside the reasoning (R1's prompt ends with "<think>\n"); false
  // sends everything to content.
  explicit ReasoningSplit(bool in_reasoning) : in_reasoning_(in_reasoning) {}
  TextParts push(std::string_view text);
  TextParts finish();  // the held-back end of a reasoning that never closed

 private:
  bool in_reasoning_;
  std::string held_;
};

}  // namespace r1pi
