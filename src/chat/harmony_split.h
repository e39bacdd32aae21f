// gpt-oss's answer in the harmony format (shared/data/gptoss/ARCH_FACTS.md section 7), split while
// it streams: after the prompt's "<|start|>assistant" the model writes messages
//   <|channel|>NAME[ to=RECIPIENT][<|constrain|>TYPE]<|message|>BODY<|end|>
// each further one after "<|start|>assistant", the last ending with <|return|> (or <|call|>). The
// analysis channel's bodies are the reasoning; the final channel's and commentary's (preambles)
// the content. The markers and headers are dropped, except for a message to a function
// (" to=functions.f", in the header or after the role): that is a tool call, passed on in the
// content as "<|channel|>commentary to=functions.f<|message|>{args}<|call|>" for the call parser
// (tool_call_markers.h), the same however the model placed the recipient. Text that does not follow
// the format is content, as it comes. Markers may arrive cut over several pieces. The markers are
// control tokens: the generation renders their text for this split
// (GenerationOptions::render_control).
#pragma once
#include <string>
#include <string_view>

#include "chat/reasoning_split.h"

namespace r1pi {

class HarmonySplit {
 public:
  TextParts push(std::string_view text);
  TextParts finish();
  bool entered() const { return entered_; }  // some analysis was seen

 private:
  enum class State { Header, Body, Between, Plain };
  // One step over held_; false when it must wait for more text.
  bool step(TextParts& out);

  State state_ = State::Header;
  bool analysis_ = false;  // the body being read is the analysis channel's
  bool call_ = false;      // the body being read is a function's arguments
  std::string recipient_;  // the message's " to=", when the role named it
  bool entered_ = false;
  std::string held_;
};

}  // namespace r1pi
