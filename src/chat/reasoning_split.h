// A reasoning model's answer in two parts: the reasoning inside the think block and the answer
// after "</think>", split while the text streams in, even when a marker arrives cut over tokens
// ("<th" + "ink>"). The split is exact: the text generated is "<think>" (when the answer opened
// the block itself) + reasoning + "</think>" + content, nothing trimmed.
#pragma once
#include <memory>
#include <string>
#include <string_view>

namespace r1pi {

struct TextParts {
  std::string reasoning, content;
  bool empty() const { return reasoning.empty() && content.empty(); }
};

// Where the generated text starts, as the template leaves it.
enum class ReasoningStart {
  None,    // no reasoning: every byte is content
  Opens,   // the answer may open a think block: "<think>" as its very first text (Qwen3 writes it)
  Inside,  // the prompt opened the block (R1's ends with "<think>\n"): reasoning until "</think>"
  Harmony, // gpt-oss's channels: analysis is the reasoning, the rest content (harmony_split.h)
};

class HarmonySplit;

class ReasoningSplit {
 public:
  explicit ReasoningSplit(ReasoningStart start);
  ~ReasoningSplit();
  TextParts push(std::string_view text);
  TextParts finish();  // what is held back at the end: an unclosed reasoning, or "<th" that was content
  // True once the text is inside a think block (from the start, or opened by the answer).
  bool entered() const { return entered_; }

 private:
  enum class State { Opening, Inside, Content };
  void take_opening();
  void take_reasoning(TextParts& out);

  State state_;
  bool entered_;
  std::string held_;  // text that may still be (or complete) a marker
  std::unique_ptr<HarmonySplit> harmony_;  // ReasoningStart::Harmony's own split
};

}  // namespace r1pi
