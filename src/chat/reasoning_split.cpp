#include "chat/reasoning_split.h"

#include "common/held_text.h"
#include "chat/harmony_split.h"
#include "chat/think_block.h"

namespace r1pi {

ReasoningSplit::ReasoningSplit(ReasoningStart start)
    : state_(start == ReasoningStart::Opens    ? State::Opening
             : start == ReasoningStart::Inside ? State::Inside
                                               : State::Content),
      entered_(start == ReasoningStart::Inside),
      harmony_(start == ReasoningStart::Harmony ? std::make_unique<HarmonySplit>() : nullptr) {}

ReasoningSplit::~ReasoningSplit() = default;

// At the answer's beginning: "<think>" opens the block; anything else, as soon as it cannot
// become "<think>", makes the whole answer content.
void ReasoningSplit::take_opening() {
  if (held_.starts_with(kThinkStart)) {
    held_.erase(0, kThinkStart.size());
    state_ = State::Inside;
    entered_ = true;
  } else if (!kThinkStart.starts_with(held_)) {
    state_ = State::Content;
  }
}

void ReasoningSplit::take_reasoning(TextParts& out) {
  const size_t end = held_.find(kThinkEnd);
  if (end != std::string::npos) {
    out.reasoning = held_.substr(0, end);
    held_.erase(0, end + kThinkEnd.size());
    state_ = State::Content;
    return;
  }
  const size_t hold = partial_marker_at_end(held_, kThinkEnd);
  out.reasoning = held_.substr(0, held_.size() - hold);
  held_.erase(0, held_.size() - hold);
}

TextParts ReasoningSplit::push(std::string_view text) {
  if (harmony_) {
    TextParts out = harmony_->push(text);
    entered_ = harmony_->entered();
    return out;
  }
  TextParts out;
  held_ += text;
  if (state_ == State::Opening) take_opening();
  if (state_ == State::Inside) take_reasoning(out);
  if (state_ == State::Content) out.content.swap(held_);
  return out;
}

TextParts ReasoningSplit::finish() {
  if (harmony_) return harmony_->finish();
  TextParts out;
  (state_ == State::Inside ? out.reasoning : out.content).swap(held_);
  return out;
}

}  // namespace r1pi
