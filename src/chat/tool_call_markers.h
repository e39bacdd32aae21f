// The literal text of the call syntaxes (tool_call_format.h), shared by the layouts a grammar is
// built from and the parser that reads calls back.
#pragma once
#include <string_view>

namespace r1pi::tool_markers {

inline constexpr std::string_view kToolCallOpen = "<tool_call>";  // Hermes, QwenXml
inline constexpr std::string_view kToolCallClose = "</tool_call>";
inline constexpr std::string_view kFunctionOpen = "<function=";  // QwenXml
inline constexpr std::string_view kFunctionClose = "</function>";
inline constexpr std::string_view kParameterOpen = "<parameter=";
inline constexpr std::string_view kParameterClose = "</parameter>";

inline constexpr std::string_view kPythonTag = "<|python_tag|>";  // Llama 3

inline constexpr std::string_view kCallsBegin = "<｜tool▁calls▁begin｜>";  // DeepSeek
inline constexpr std::string_view kCallsEnd = "<｜tool▁calls▁end｜>";
inline constexpr std::string_view kCallBegin = "<｜tool▁call▁begin｜>";
inline constexpr std::string_view kCallEnd = "<｜tool▁call▁end｜>";
inline constexpr std::string_view kCallSep = "<｜tool▁sep｜>";
inline constexpr std::string_view kJsonFence = "```json";  // R1's arguments block
inline constexpr std::string_view kFence = "```";

inline constexpr std::string_view kMistralCalls = "[TOOL_CALLS]";  // Mistral
inline constexpr std::string_view kMistralArgs = "[ARGS]";
inline constexpr std::string_view kMistralCallId = "[CALL_ID]";
inline constexpr std::string_view kGraniteCall = "<|tool_call|>";

// Harmony (gpt-oss): a message to a function, as HarmonySplit passes it on (whatever the model
// put in the header besides the recipient dropped): "<|channel|>commentary to=functions.f<|message|>
// {args}<|call|>". The model writes it after "<|start|>assistant", the recipient in the channel's
// header or in the role's (harmony_split.h).
inline constexpr std::string_view kHarmonyCall = "<|channel|>commentary to=functions.";
inline constexpr std::string_view kHarmonyMessage = "<|message|>";
inline constexpr std::string_view kHarmonyCallEnd = "<|call|>";

}  // namespace r1pi::tool_markers
