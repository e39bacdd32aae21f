#include "runtime/generator.h"

#include <algorithm>
#include <chrono>

#include "common/error.h"

namespace r1pi {

namespace {
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

void check_fits_context(size_t n_prompt, int n_predict, int n_ctx) {
  if (n_prompt == 0) throw Error("empty prompt: nothing to start from");
  if (n_prompt >= size_t(n_ctx))
    throw Error("the prompt is " + std::to_string(n_prompt) + " tokens and does not fit the context of " +
                std::to_string(n_ctx) + " tokens (raise -c/--ctx-size)");
  if (n_predict > 0 && n_prompt + size_t(n_predict) > size_t(n_ctx))
    throw Error("context overflow: " + std::to_string(n_prompt) + " prompt tokens + " +
                std::to_string(n_predict) + " to generate exceed the context of " +
                std::to_string(n_ctx) + " tokens (raise -c/--ctx-size or lower -n)");
}

GenerationResult generate(TokenSource& model, const Tokenizer& tokenizer,
                          const std::vector<int32_t>& prompt, const GenerationOptions& options,
                          const std::function<void(const std::string&)>& on_text) {
  check_fits_context(prompt.size(), options.n_predict, model.n_ctx());
  GenerationResult result;
  Sampler sampler(options.sampler);
  StreamDecoder decoder(tokenizer);

  // ---- prefill: the prompt in batches, logits of the last token only ----
  auto start = std::chrono::steady_clock::now();
  const int n_prompt = int(prompt.size());
  const int batch = std::max(1, options.batch_size);
  if (options.n_cached < 0 || options.n_cached >= n_prompt)
    throw Error("prompt cache: " + std::to_string(options.n_cached) + " cached tokens of a " +
                std::to_string(n_prompt) + "-token prompt (at least its last token must be fed)");
  int32_t token = -1;
  for (int pos = options.n_cached; pos < n_prompt; pos += batch) {
    const int B = std::min(batch, n_prompt - pos);
    token = model.forward(prompt.data() + pos, B, pos, pos + B == n_prompt ? &sampler : nullptr);
  }
  result.prefill_tokens = n_prompt - options.n_cached;
  result.prefill_seconds = seconds_since(start);

  // ---- decode: sample, show, feed back ----
  start = std::chrono::steady_clock::now();
  int pos = n_prompt;
  for (;;) {
    result.generated.push_back(token);
    if (!options.ignore_eos && tokenizer.is_end_of_generation(token)) {
      result.stop_reason = "eog";
      break;
    }
    if (on_text) on_text(decoder.push(token));
    if (options.n_predict > 0 && int(result.generated.size()) >= options.n_predict) {
      result.stop_reason = "n_predict";
      break;
    }
    if (pos >= model.n_ctx()) {
      result.stop_reason = "context full";
      break;
    }
    if (options.cancelled && options.cancelled()) {
      result.stop_reason = "cancelled";
      break;
    }
    token = model.forward(&token, 1, pos++, &sampler);
    ++result.decode_tokens;
  }
  if (on_text) on_text(decoder.flush());
  result.decode_seconds = seconds_since(start);
  return result;
}

}  // namespace r1pi
