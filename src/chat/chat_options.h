// What the terminal chat and the server take from the command line besides the run options.
#pragma once
#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "runtime/generator.h"

namespace r1pi {

struct ChatOptions {
  std::string template_name;     // --chat-template; empty: the model's (detect_chat_template)
  std::string template_file;     // --chat-template-file: a Jinja template instead of the model's
  std::string system;            // --system: the system message of every conversation
  bool hide_think = false;       // --hide-think: the terminal chat does not show the reasoning
  std::vector<std::string> stop;  // -r: the terminal chat's answers also end where one of these appears
  bool reasoning = true;         // --reasoning on|off: the template's enable_thinking (the server's
                                 // default for requests without chat_template_kwargs)
  std::string reasoning_effort;   // --reasoning-effort low|medium|high: the template's reasoning_effort
                                 // (harmony's level; the server's default for requests without one)
  bool temperature_given = false, top_p_given = false;  // else R1's recommended values apply
  GenerationOptions generation;  // -n, -b and the sampler from the command line
};

// The template named by --chat-template or the model's; throws r1pi::Error for an unknown name.
ChatTemplate chosen_template(const ChatOptions& options, const Tokenizer& tokenizer);

// The sampler a conversation starts from: the command line's, with DeepSeek's recommendation
// (temperature 0.6, top-p 0.95) for what it left unsaid when the template is R1's.
SamplerParams chat_sampler(const ChatOptions& options, ChatTemplate t);

}  // namespace r1pi
