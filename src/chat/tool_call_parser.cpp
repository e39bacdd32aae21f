#include "chat/tool_call_parser.h"

#include <algorithm>
#include <array>

#include "common/held_text.h"
#include "chat/json_prefix.h"
#include "chat/tool_call_markers.h"

namespace r1pi {

using nlohmann::ordered_json;
using namespace tool_markers;

namespace {

constexpr std::array<std::string_view, 2> kLlamaKeys = {"name", "type"};
constexpr std::array<std::string_view, 3> kGenericKeys = {"tool_call", "tool_calls", "response"};

// The markers that open a call in running text; DeepSeek's list markers around the calls are
// dropped wherever they stand.
struct TextMarkers {
  std::vector<std::string_view> opening, dropped;
};
TextMarkers text_markers(const ToolCallFormat& format) {
  switch (format.syntax) {
    case ToolCallSyntax::Hermes:
    case ToolCallSyntax::QwenXml: return {{kToolCallOpen}, {}};
    case ToolCallSyntax::DeepSeekV3:
    case ToolCallSyntax::DeepSeekR1: return {{kCallBegin}, {kCallsBegin, kCallsEnd}};
    case ToolCallSyntax::JsonList: return {{format.list_marker}, {}};
    case ToolCallSyntax::MistralArgs: return {{kMistralCalls}, {}};
    case ToolCallSyntax::Harmony: return {{kHarmonyCall}, {}};
    case ToolCallSyntax::Llama3: return {{kPythonTag}, {}};
    case ToolCallSyntax::Generic: return {};
  }
  return {};
}

// Llama 3 and generic calls have no marker: they are the answer's first text.
bool calls_lead(const ToolCallFormat& format) {
  return format.syntax == ToolCallSyntax::Llama3 || format.syntax == ToolCallSyntax::Generic;
}

size_t skip_space(std::string_view text, size_t at) {
  while (at < text.size() && is_json_space(text[at])) ++at;
  return at;
}

}  // namespace

ordered_json openai_delta(const ToolCallDelta& delta) {
  switch (delta.kind) {
    case ToolCallDelta::Kind::Content: return {{"content", delta.text}};
    case ToolCallDelta::Kind::CallStart:
      return {{"tool_calls",
               {{{"index", delta.index},
                 {"id", delta.id},
                 {"type", "function"},
                 {"function", {{"name", delta.text}, {"arguments", ""}}}}}}};
    case ToolCallDelta::Kind::Arguments:
      return {{"tool_calls", {{{"index", delta.index}, {"function", {{"arguments", delta.text}}}}}}};
  }
  return {};
}

void apply_delta(ParsedOutput& output, const ToolCallDelta& delta) {
  switch (delta.kind) {
    case ToolCallDelta::Kind::Content: output.content += delta.text; break;
    case ToolCallDelta::Kind::CallStart: output.tool_calls.push_back({delta.id, delta.text, ""}); break;
    case ToolCallDelta::Kind::Arguments: output.tool_calls.at(delta.index).arguments += delta.text; break;
  }
}

ToolCallStream::ToolCallStream(ToolCallFormat format, CallIdGenerator new_id, ordered_json tools)
    : format_(format),
      new_id_(new_id ? std::move(new_id) : [format] { return new_tool_call_id(format); }),
      tools_(std::move(tools)),
      state_(calls_lead(format) ? State::Leading : State::Text) {}

std::vector<ToolCallDelta> ToolCallStream::push(std::string_view text) {
  out_.clear();
  held_ += text;
  while (step(false)) {
  }
  return std::move(out_);
}

std::vector<ToolCallDelta> ToolCallStream::finish() {
  out_.clear();
  while (step(true)) {
  }
  return std::move(out_);
}

bool ToolCallStream::step(bool final) {
  switch (state_) {
    case State::Leading: return step_leading(final);
    case State::Text: return step_text(final);
    case State::Unit: return step_unit(final);
    case State::Response: return step_response(final);
    case State::AfterResponse: return step_after_response();
  }
  return false;
}

bool ToolCallStream::step_leading(bool final) {
  const size_t start = skip_space(held_, 0);
  emit_content(std::string_view(held_).substr(0, start));
  held_.erase(0, start);
  if (held_.empty()) return false;
  if (held_.front() == '{' || (format_.syntax == ToolCallSyntax::Llama3 && held_.starts_with(kPythonTag))) {
    state_ = State::Unit;
    return true;
  }
  if (!final && format_.syntax == ToolCallSyntax::Llama3 && kPythonTag.starts_with(held_)) return false;
  state_ = State::Text;
  return true;
}

bool ToolCallStream::step_text(bool final) {
  const TextMarkers markers = text_markers(format_);
  size_t first = std::string::npos;
  std::string_view found;
  bool dropped = false;
  for (const auto* list : {&markers.opening, &markers.dropped})
    for (std::string_view marker : *list)
      if (const size_t at = held_.find(marker); at < first) {
        first = at;
        found = marker;
        dropped = list == &markers.dropped;
      }
  if (first == std::string::npos) {
    size_t hold = 0;
    for (const auto* list : {&markers.opening, &markers.dropped})
      for (std::string_view marker : *list)
        if (!final) hold = std::max(hold, partial_marker_at_end(held_, marker));
    emit_content(std::string_view(held_).substr(0, held_.size() - hold));
    held_.erase(0, held_.size() - hold);
    return false;
  }
  emit_content(std::string_view(held_).substr(0, first));
  held_.erase(0, dropped ? first + found.size() : first);
  if (!dropped) state_ = State::Unit;
  return true;
}

bool ToolCallStream::step_unit(bool final) {
  if (format_.syntax == ToolCallSyntax::Generic) {
    // {"response": "... streams: its text is content as it comes.
    const ObjectStart start = match_object_start(held_, 0, kGenericKeys);
    if (start.state == ObjectStart::State::Yes && start.key == "response" && start.at < held_.size() &&
        held_[start.at] == '"') {
      held_.erase(0, start.at + 1);
      state_ = State::Response;
      return true;
    }
  }
  UnitEnd end = unit_end(final);
  if (!end.ready) return false;
  if (end.calls) {
    emit_calls(*end.calls);
    state_ = calls_lead(format_) ? State::Leading : State::Text;
  } else {
    emit_content(std::string_view(held_).substr(0, end.length));
    state_ = State::Text;
  }
  held_.erase(0, end.length);
  return true;
}

bool ToolCallStream::step_response(bool final) {
  const StringPrefix decoded = decode_json_string_prefix(held_);
  emit_content(decoded.text);
  held_.erase(0, decoded.used);
  if (decoded.closed) {
    state_ = State::AfterResponse;
    return true;
  }
  if (final) {  // an escape cut by the end: as written
    emit_content(held_);
    held_.clear();
  }
  return false;
}

bool ToolCallStream::step_after_response() {
  const size_t at = skip_space(held_, 0);
  if (at == held_.size()) return false;  // whitespace: dropped if nothing follows
  if (held_[at] == '}') held_.erase(0, at + 1);
  state_ = State::Text;
  return true;
}

ToolCallStream::UnitEnd ToolCallStream::unit_end(bool final) const {
  switch (format_.syntax) {
    case ToolCallSyntax::Hermes:
    case ToolCallSyntax::QwenXml: return marked_unit_end(kToolCallClose, final);
    case ToolCallSyntax::DeepSeekV3:
    case ToolCallSyntax::DeepSeekR1: return marked_unit_end(kCallEnd, final);
    case ToolCallSyntax::JsonList: return list_unit_end(final);
    case ToolCallSyntax::MistralArgs: return mistral_unit_end(final);
    case ToolCallSyntax::Harmony: return harmony_unit_end(final);
    case ToolCallSyntax::Llama3: return llama_unit_end(final);
    case ToolCallSyntax::Generic: return generic_unit_end(final);
  }
  return {true, held_.size(), std::nullopt};
}

// From an opening marker to its closing one. A call cut short of its closing marker (by the end,
// or by DeepSeek's end of the list) is still a call when what came is whole: models stop right
// after the arguments.
ToolCallStream::UnitEnd ToolCallStream::marked_unit_end(std::string_view close, bool final) const {
  const bool deepseek = close == kCallEnd;
  const std::string_view open = text_markers(format_).opening.front();
  const size_t end = held_.find(close, open.size());
  const size_t list_end = deepseek ? held_.find(kCallsEnd, open.size()) : std::string::npos;
  size_t body_end = std::min(end, list_end), length = body_end == end ? end + close.size() : list_end;
  if (body_end == std::string::npos) {
    if (!final) return {false, 0, std::nullopt};
    body_end = length = held_.size();
  }
  const std::string_view body = std::string_view(held_).substr(open.size(), body_end - open.size());
  return {true, length, deepseek ? parse_deepseek_call(body) : parse_tool_call_block(body, tools_)};
}

// A marker, then a JSON list.
ToolCallStream::UnitEnd ToolCallStream::list_unit_end(bool final) const {
  const size_t marker = format_.list_marker.size();
  const size_t start = skip_space(held_, marker);
  if (start == held_.size()) return {final, held_.size(), std::nullopt};
  if (held_[start] != '[') return {true, marker, std::nullopt};
  const size_t end = json_value_end(held_, start);
  if (end == std::string::npos) return {final, held_.size(), std::nullopt};
  return {true, end, parse_call_list(std::string_view(held_).substr(start, end - start))};
}

// [TOOL_CALLS]f([CALL_ID]id)?[ARGS]{...}: a name runs to [ARGS] without whitespace.
ToolCallStream::UnitEnd ToolCallStream::mistral_unit_end(bool final) const {
  const size_t marker = kMistralCalls.size();
  const size_t args = held_.find(kMistralArgs, marker);
  const size_t space = std::find_if(held_.begin() + marker, held_.end(), is_json_space) - held_.begin();
  if (space < std::min(args, held_.size())) return {true, marker, std::nullopt};
  if (args == std::string::npos) return {final, held_.size(), std::nullopt};
  const size_t start = skip_space(held_, args + kMistralArgs.size());
  if (start == held_.size()) return {final, held_.size(), std::nullopt};
  if (held_[start] != '{') return {true, marker, std::nullopt};
  const size_t end = json_value_end(held_, start);
  if (end == std::string::npos) return {final, held_.size(), std::nullopt};
  std::string_view name = std::string_view(held_).substr(marker, args - marker);
  name = name.substr(0, name.find(kMistralCallId));  // the id a model may copy from its history
  return {true, end, parse_named_call(name, std::string_view(held_).substr(start, end - start))};
}

// <|channel|>commentary to=functions.f<|message|>{...}<|call|>: a name runs to <|message|>.
ToolCallStream::UnitEnd ToolCallStream::harmony_unit_end(bool final) const {
  const size_t message = held_.find(kHarmonyMessage, kHarmonyCall.size());
  const size_t end = held_.find(kHarmonyCallEnd, message == std::string::npos ? held_.size() : message);
  if (message == std::string::npos || end == std::string::npos) return {final, held_.size(), std::nullopt};
  const size_t args = message + kHarmonyMessage.size();
  const std::string_view name = std::string_view(held_).substr(kHarmonyCall.size(), message - kHarmonyCall.size());
  return {true, end + kHarmonyCallEnd.size(), parse_named_call(name, std::string_view(held_).substr(args, end - args))};
}

// {"name": ...} or <|python_tag|> then that or f.call(...).
ToolCallStream::UnitEnd ToolCallStream::llama_unit_end(bool final) const {
  const size_t start = held_.starts_with(kPythonTag) ? skip_space(held_, kPythonTag.size()) : 0;
  if (start == held_.size()) return {final, held_.size(), std::nullopt};
  size_t end = std::string::npos;
  if (held_[start] == '{') {
    const ObjectStart object = match_object_start(held_, start, kLlamaKeys);
    if (object.state == ObjectStart::State::No) return {true, object.at, std::nullopt};
    if (object.state == ObjectStart::State::Yes) end = json_value_end(held_, start);
  } else {  // a built-in tool's call: to its first ')' outside a string
    bool in_string = false;
    for (size_t i = start; i < held_.size() && end == std::string::npos; ++i) {
      if (in_string && held_[i] == '\\') ++i;
      else if (held_[i] == '"') in_string = !in_string;
      else if (!in_string && held_[i] == ')') end = i + 1;
    }
  }
  if (end == std::string::npos) return {final, held_.size(), std::nullopt};
  return {true, end, parse_llama_call(std::string_view(held_).substr(0, end))};
}

// {"tool_call": ...} or {"tool_calls": [...]} ({"response": "..." streams, see step_unit).
ToolCallStream::UnitEnd ToolCallStream::generic_unit_end(bool final) const {
  const ObjectStart object = match_object_start(held_, 0, kGenericKeys);
  if (object.state == ObjectStart::State::No) return {true, object.at, std::nullopt};
  const size_t end = object.state == ObjectStart::State::Yes ? json_value_end(held_, 0) : std::string::npos;
  if (end == std::string::npos) return {final, held_.size(), std::nullopt};
  return {true, end, parse_generic_calls(std::string_view(held_).substr(0, end))};
}

void ToolCallStream::emit_content(std::string_view text) {
  if (!content_started_) {
    text = text.substr(std::min(skip_space(text, 0), text.size()));
    if (text.empty()) return;
    content_started_ = true;
  }
  size_t last = text.size();
  while (last > 0 && is_json_space(text[last - 1])) --last;
  if (last == 0) {
    pending_space_ += text;
    return;
  }
  std::string piece = std::move(pending_space_) + std::string(text.substr(0, last));
  pending_space_ = text.substr(last);
  if (!out_.empty() && out_.back().kind == ToolCallDelta::Kind::Content) out_.back().text += piece;
  else out_.push_back({ToolCallDelta::Kind::Content, std::move(piece), 0, ""});
}

void ToolCallStream::emit_calls(std::vector<ParsedCall>& calls) {
  for (ParsedCall& call : calls) {
    const size_t index = calls_++;
    out_.push_back({ToolCallDelta::Kind::CallStart, std::move(call.name), index, new_id_()});
    out_.push_back({ToolCallDelta::Kind::Arguments, call.arguments.dump(), index, ""});
  }
}

ParsedOutput parse_tool_calls(const ToolCallFormat& format, std::string_view text, CallIdGenerator new_id,
                              const ordered_json& tools) {
  ToolCallStream stream(format, std::move(new_id), tools);
  ParsedOutput output;
  for (const ToolCallDelta& delta : stream.push(text)) apply_delta(output, delta);
  for (const ToolCallDelta& delta : stream.finish()) apply_delta(output, delta);
  return output;
}

}  // namespace r1pi
