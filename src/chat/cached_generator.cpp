#include "chat/cached_generator.h"

#include <algorithm>

namespace r1pi {

GenerationResult CachedGenerator::generate(const std::vector<int32_t>& prompt, GenerationOptions options,
                                           const std::function<void(const std::string&)>& on_text) {
  const auto differ = std::mismatch(held_.begin(), held_.end(), prompt.begin(), prompt.end());
  // The last prompt token is always fed: its logits choose the first token.
  const size_t common = size_t(differ.first - held_.begin());
  options.n_cached = int(std::min(common, prompt.empty() ? 0 : prompt.size() - 1));
  last_reused_ = options.n_cached;
  // Until it returns, the cache holds an unknown mix (a failure may stop it anywhere).
  held_.clear();
  GenerationResult result = r1pi::generate(source_, tokenizer_, prompt, options, on_text);
  // Fed: the prompt and every generated token but the last, which was sampled and never fed.
  held_ = prompt;
  held_.insert(held_.end(), result.generated.begin(), result.generated.begin() + result.decode_tokens);
  return result;
}

}  // namespace r1pi
