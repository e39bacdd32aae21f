// The ChatML family of chat templates: "<|im_start|>ROLE\nTEXT<|im_end|>\n" per message and
// "<|im_start|>assistant\n" to open the answer, plus what Qwen's templates add to it. A dialect is
// a row of data, not a copy of the renderer.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_message.h"

namespace r1pi {

struct ChatMLDialect {
  std::string_view default_system;  // rendered first when the first message is not a system one
  // Qwen3's think blocks: earlier answers lose their reasoning, answers after the last question
  // keep it in a "<think>\n...\n</think>\n\n" block, and thinking off (enable_thinking=false, or a
  // "/no_think" soft switch) opens the answer with the empty block.
  bool think_blocks = false;
};

inline constexpr ChatMLDialect kChatML{};
inline constexpr ChatMLDialect kQwen25{"You are Qwen, created by Alibaba Cloud. You are a helpful assistant."};
inline constexpr ChatMLDialect kQwen3{{}, true};

// thinking: the template's enable_thinking (only a dialect with think blocks reads it).
std::string render_chatml(const ChatMLDialect& dialect, const std::vector<ChatMessage>& messages, bool thinking);

}  // namespace r1pi
