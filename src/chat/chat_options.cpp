#include "chat/chat_options.h"

#include "common/error.h"

namespace r1pi {

ChatTemplate chosen_template(const ChatOptions& o, const Tokenizer& tokenizer) {
  if (o.template_name.empty()) return detect_chat_template(tokenizer);
  if (auto t = chat_template_named(o.template_name)) return *t;
  throw Error("--chat-template " + o.template_name + ": give one of " + chat_template_names());
}

SamplerParams chat_sampler(const ChatOptions& o, ChatTemplate t) {
  SamplerParams p = o.generation.sampler;
  if (t == ChatTemplate::DeepSeekR1) {
    if (!o.temperature_given) p.temperature = 0.6f;
    if (!o.top_p_given) p.top_p = 0.95f;
  }
  return p;
}

}  // namespace r1pi
