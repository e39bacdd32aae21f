#include "chat/harmony_split.h"

#include <algorithm>
#include <array>

#include "common/held_text.h"

namespace r1pi {

namespace {

constexpr std::string_view kChannel = "<|channel|>";
constexpr std::string_view kMessage = "<|message|>";
constexpr std::string_view kStart = "<|start|>";
// What ends a message's body: the end of a message, of a tool call, of the answer.
constexpr std::array<std::string_view, 3> kBodyEnds = {"<|end|>", "<|call|>", "<|return|>"};

// True while text may still become the beginning of marker (or already begins with it).
bool may_begin(std::string_view text, std::string_view marker) {
  return text.size() < marker.size() ? marker.starts_with(text) : text.starts_with(marker);
}

}  // namespace

bool HarmonySplit::step(TextParts& out) {
  switch (state_) {
    case State::Header: {
      // "<|channel|>NAME ...<|message|>": wait for the header's end; anything that does not open
      // with a channel is not harmony, and is content from here on.
      if (!may_begin(held_, kChannel)) {
        state_ = State::Plain;
        return true;
      }
      const size_t message = held_.find(kMessage);
      if (message == std::string::npos) return false;
      const std::string_view header = std::string_view(held_).substr(kChannel.size(), message - kChannel.size());
      const std::string_view name = header.substr(0, header.find_first_of(" <"));
      analysis_ = name == "analysis";
      entered_ = entered_ || analysis_;
      held_.erase(0, message + kMessage.size());
      state_ = State::Body;
      return true;
    }
    case State::Body: {
      std::string& to = analysis_ ? out.reasoning : out.content;
      size_t end = std::string::npos, marker = 0;
      for (std::string_view m : kBodyEnds)
        if (const size_t at = held_.find(m); at < end) end = at, marker = m.size();
      if (end != std::string::npos) {
        to += held_.substr(0, end);
        held_.erase(0, end + marker);
        state_ = State::Between;
        return true;
      }
      size_t hold = 0;
      for (std::string_view m : kBodyEnds) hold = std::max(hold, partial_marker_at_end(held_, m));
      to += held_.substr(0, held_.size() - hold);
      held_.erase(0, held_.size() - hold);
      return false;
    }
    case State::Between: {
      // "<|start|>assistant" (a role, perhaps " to=..."), then the next message's header.
      if (held_.empty()) return false;
      if (!may_begin(held_, kStart)) {
        state_ = State::Plain;
        return true;
      }
      const size_t channel = held_.find(kChannel);
      if (channel == std::string::npos) return false;
      held_.erase(0, channel);
      state_ = State::Header;
      return true;
    }
    case State::Plain:
      out.content += held_;
      held_.clear();
      return false;
  }
  return false;
}

TextParts HarmonySplit::push(std::string_view text) {
  TextParts out;
  held_ += text;
  while (!held_.empty() && step(out)) {
  }
  return out;
}

TextParts HarmonySplit::finish() {
  TextParts out;
  (state_ == State::Body && analysis_ ? out.reasoning : out.content).swap(held_);
  return out;
}

}  // namespace r1pi
