#include "chat/completion.h"

#include <algorithm>

#include "runtime/stop_strings.h"

namespace r1pi {

namespace {

void append(TextParts& to, const TextParts& more) {
  to.reasoning += more.reasoning;
  to.content += more.content;
}

std::string finish_reason_of(const std::string& stop_reason, bool stop_string) {
  if (stop_string || stop_reason == "eog") return "stop";
  if (stop_reason == "cancelled") return "cancelled";
  return "length";  // "n_predict" or "context full"
}

}  // namespace

int n_predict_within(int requested, size_t n_prompt, int n_ctx) {
  if (requested <= 0) return -1;
  return int(std::min<int64_t>(requested, int64_t(n_ctx) - int64_t(n_prompt)));
}

Completion complete(TokenSource& source, const Tokenizer& tokenizer, const std::vector<int32_t>& prompt,
                    const CompletionSettings& settings, const std::function<void(const TextParts&)>& on_delta) {
  Completion out;
  StopStrings stops(settings.stop);
  ReasoningSplit split(settings.reasoning);
  auto deliver = [&](const TextParts& parts) {
    if (parts.empty()) return;
    append(out.text, parts);
    if (on_delta) on_delta(parts);
  };
  GenerationOptions options = settings.generation;
  options.reuse_cache = true;
  options.render_control = settings.reasoning == ReasoningStart::Harmony;
  options.cancelled = [&] { return stops.matched() || (settings.cancelled && settings.cancelled()); };
  options.on_logprobs = [&](const PickLogprobs& p) {
    out.logprobs.push_back(p);
    if (settings.on_logprobs) settings.on_logprobs(p);
  };
  out.result = generate(source, tokenizer, prompt, options,
                        [&](const std::string& text) { deliver(split.push(stops.push(text))); });
  deliver(split.push(stops.finish()));
  deliver(split.finish());
  out.reasoned = split.entered();
  out.finish_reason = finish_reason_of(out.result.stop_reason, stops.matched());
  out.prompt_tokens = int(prompt.size());
  out.cached_tokens = out.result.cached_tokens;
  return out;
}

}  // namespace r1pi
