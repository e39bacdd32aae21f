// libFuzzer harness: what the server does with a request body before anything reaches the engine,
// and with the engine's text on its way back.
//
// Input: 1 flag byte, then the body. Bit 0 picks the route (chat or completions). The body goes
// through parse_api_request(), which must accept it or refuse it with a 400 ApiError, nothing
// else; an accepted request must hold what the server relies on (a non-empty list of known roles,
// sampling values in range, n_predict's bounds), and render under every template, thinking on and
// off. Then the same bytes, cut at the places the flag's other bits and the body's length give,
// play the engine's streamed text: the stop strings and the reasoning split (from each place an
// answer can start: no reasoning, opening "<think>" itself, inside the prompt's) must give back
// exactly the text (up to the first stop string), and the response chunks built from any bytes
// must serialise.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "chat/reasoning_split.h"
#include "runtime/stop_strings.h"
#include "server/api_error.h"
#include "server/api_request.h"
#include "server/api_response.h"

namespace {

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "fuzz_api_request: %s\n", what);
  std::abort();
}

void check_request(const r1pi::ApiRequest& r) {
  if (r.endpoint == r1pi::Endpoint::Chat) {
    if (r.messages.empty()) finding("accepted a chat without messages");
    for (const r1pi::ChatMessage& m : r.messages)
      if (!r1pi::known_chat_role(m.role)) finding("accepted an unknown role");
    const auto effort = r.template_kwargs.find("reasoning_effort");
    const std::string level = effort != r.template_kwargs.end() && effort->is_string() ? effort->get<std::string>() : "";
    for (r1pi::ChatTemplate t : {r1pi::ChatTemplate::Harmony, r1pi::ChatTemplate::DeepSeekR1, r1pi::ChatTemplate::Llama3,
                                 r1pi::ChatTemplate::Qwen3, r1pi::ChatTemplate::Qwen25, r1pi::ChatTemplate::ChatML})
      for (bool thinking : {true, false})
        if (r1pi::render_chat(t, r.messages, thinking, level).empty()) finding("rendered a chat as nothing");
  }
  if (r.max_tokens != -1 && (r.max_tokens < 1 || r.max_tokens > (1 << 24))) finding("accepted max_tokens out of range");
  const r1pi::SamplerParams& s = r.sampler;
  if (!std::isfinite(s.temperature) || s.temperature < 0 || s.temperature > 100) finding("accepted a bad temperature");
  if (!std::isfinite(s.top_p) || s.top_p < 0 || s.top_p > 1) finding("accepted a bad top_p");
  if (s.top_k < 0) finding("accepted a negative top_k");
  if (r.stop.size() > 16) finding("accepted more than 16 stop strings");
}

// The text in pieces through the stop strings and the split, as complete() streams it.
void check_streaming(const std::string& text, size_t cut_a, size_t cut_b, const std::vector<std::string>& stops,
                     r1pi::ReasoningStart start) {
  r1pi::StopStrings stop(stops);
  r1pi::ReasoningSplit split(start);
  r1pi::TextParts all;
  auto take = [&](const r1pi::TextParts& p) {
    all.reasoning += p.reasoning;
    all.content += p.content;
  };
  const size_t a = std::min(cut_a, text.size()), b = std::min(std::max(a, cut_b), text.size());
  for (const std::string& piece : {text.substr(0, a), text.substr(a, b - a), text.substr(b)}) take(split.push(stop.push(piece)));
  take(split.push(stop.finish()));
  take(split.finish());
  size_t end = text.size();
  for (const std::string& s : stops)
    if (!s.empty()) end = std::min(end, text.find(s));
  const std::string shown = text.substr(0, end);
  if (stop.matched() != (end != text.size())) finding("a stop string matched where there is none, or was missed");
  const bool opens = start == r1pi::ReasoningStart::Opens && shown.starts_with("<think>");
  if (start != r1pi::ReasoningStart::Inside && !opens) {
    if (!all.reasoning.empty() || all.content != shown) finding("reasoning where the answer opened none");
    if (split.entered()) finding("entered a reasoning that was not there");
    return;
  }
  const std::string rest = opens ? shown.substr(7) : shown;
  const size_t think = rest.find("</think>");
  const std::string joined = think == std::string::npos ? all.reasoning : all.reasoning + "</think>" + all.content;
  if (joined != rest) finding("the stop strings and the split lost or changed text");
  if (think == std::string::npos && !all.content.empty()) finding("content without </think>");
  if (!split.entered()) finding("a reasoning that was not entered");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t flags = data[0];
  const std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
  const r1pi::Endpoint endpoint = flags & 1u ? r1pi::Endpoint::Completion : r1pi::Endpoint::Chat;
  std::vector<std::string> stops;
  try {
    const r1pi::ApiRequest r = r1pi::parse_api_request(endpoint, body, r1pi::SamplerParams{});
    check_request(r);
    stops = r.stop;
  } catch (const r1pi::ApiError& e) {
    if (e.status != 400) finding("refused with a status other than 400");
  }
  // The body as generated text: a stop string from the request (or "STOP") and any cuts.
  if (stops.empty()) stops = {"STOP"};
  for (r1pi::ReasoningStart start :
       {r1pi::ReasoningStart::None, r1pi::ReasoningStart::Opens, r1pi::ReasoningStart::Inside})
    check_streaming(body, size_t(flags >> 1) % (body.size() + 1), size_t(flags >> 4) * body.size() / 15, stops, start);
  // Any bytes (invalid UTF-8 included) in a streamed chunk and a whole response serialise.
  r1pi::ApiRequest chat;
  const r1pi::ResponseId id{"chatcmpl-fuzz", 0, "fuzz"};
  r1pi::Completion done;
  done.text = {body.substr(0, body.size() / 2), body.substr(body.size() / 2)};
  if (r1pi::sse_event(r1pi::chunk_json(chat, id, done.text)).empty() || r1pi::json_text(r1pi::response_json(chat, id, done)).empty())
    finding("a response did not serialise");
  return 0;
}
