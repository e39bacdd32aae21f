#include "chat/reasoning_split.h"

#include "chat/held_text.h"

namespace r1pi {

namespace {
constexpr std::string_view kThinkEnd = "</think>";
}  // namespace

TextParts ReasoningSplit::push(std::string_view text) {
  TextParts out;
  if (!in_reasoning_) {
    out.content = text;
    return out;
  }
  held_ += text;
  const size_t end = held_.find(kThinkEnd);
  if (end != std::string::npos) {
    out.reasoning = held_.substr(0, end);
    out.content = held_.substr(end + kThinkEnd.size());
    held_.clear();
    in_reasoning_ = false;
    return out;
  }
  const size_t hold = partial_marker_at_end(held_, kThinkEnd);
  out.reasoning = held_.substr(0, held_.size() - hold);
  held_.erase(0, held_.size() - hold);
  return out;
}

TextParts ReasoningSplit::finish() {
  TextParts out;
  out.reasoning.swap(held_);
  return out;
}

}  // namespace r1pi
