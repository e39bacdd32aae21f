#include "chat/harmony_split.h"

#include <algorithm>
#include <array>

#include "chat/tool_call_markers.h"
#include "common/held_text.h"

namespace r1pi {

namespace {

constexpr std::string_view kChannel = "<|channel|>";
constexpr std::string_view kMessage = "<|message|>";
constexpr std::string_view kStart = "<|start|>";
constexpr std::string_view kTo = " to=", kFunctions = "functions.";
// What ends a message's body: the end of a message, of a tool call, of the answer.
constexpr std::array<std::string_view, 3> kBodyEnds = {"<|end|>", "<|call|>", "<|return|>"};

// True while text may still become the beginning of marker (or already begins with it).
bool may_begin(std::string_view text, std::string_view marker) {
  return text.size() < marker.size() ? marker.starts_with(text) : text.starts_with(marker);
}

// The recipient a header names (" to=functions.f"), or "".
std::string recipient_in(std::string_view header) {
  const size_t to = header.find(kTo);
  if (to == std::string_view::npos) return "";
  const std::string_view rest = header.substr(to + kTo.size());
  return std::string(rest.substr(0, rest.find_first_of(" <")));
}

}  // namespace

bool HarmonySplit::step(TextParts& out) {
  switch (state_) {
    case State::Header: {
      // "[ to=RECIPIENT]<|channel|>NAME[ to=RECIPIENT] ...<|message|>" (the recipient after the
      // role, which the prompt or Between has read, or in the channel's header): wait for the
      // header's end. Anything else is not harmony, and is content from here on.
      if (!may_begin(held_, kChannel) && !may_begin(held_, kTo)) {
        state_ = State::Plain;
        return true;
      }
      const size_t channel = held_.find(kChannel), message = held_.find(kMessage, channel);
      if (channel == std::string::npos || message == std::string::npos) return false;
      const std::string_view header = std::string_view(held_).substr(0, message);
      const size_t name_at = channel + kChannel.size();
      const std::string_view name = header.substr(name_at, header.find_first_of(" <", name_at) - name_at);
      if (std::string recipient = recipient_in(header); !recipient.empty()) recipient_ = std::move(recipient);
      call_ = recipient_.starts_with(kFunctions);
      // A message to a function is its call, passed on in one spelling for the parser.
      if (call_)
        out.content += std::string(tool_markers::kHarmonyCall) + recipient_.substr(kFunctions.size()) +
                       std::string(tool_markers::kHarmonyMessage);
      analysis_ = name == "analysis" && !call_;
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
        if (call_) to += tool_markers::kHarmonyCallEnd;
        held_.erase(0, end + marker);
        recipient_.clear();
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
      recipient_ = recipient_in(std::string_view(held_).substr(0, channel));
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
  // A call ends the generation at <|call|>, a stop token, which the text does not show.
  if (state_ == State::Body && call_) out.content += tool_markers::kHarmonyCallEnd;
  return out;
}

}  // namespace r1pi
