// generate() with a prompt cache: the engine's KV cache keeps what the previous generation fed,
// and a prompt that begins with those tokens feeds only the rest. Batch-invariant kernels make a
// position's keys and values the same whichever batch computed them, so the output is
// bit-identical to a cold prefill of the whole prompt (tests/server checks it).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/generator.h"

namespace r1pi {

class CachedGenerator {
 public:
  CachedGenerator(TokenSource& source, const Tokenizer& tokenizer) : source_(source), tokenizer_(tokenizer) {}
  // As generate(); options.n_cached is set here.
  GenerationResult generate(const std::vector<int32_t>& prompt, GenerationOptions options,
                            const std::function<void(const std::string&)>& on_text);
  int n_ctx() const { return source_.n_ctx(); }
  const Tokenizer& tokenizer() const { return tokenizer_; }
  // Prompt tokens the last generate() took from the cache.
  int last_reused() const { return last_reused_; }

 private:
  TokenSource& source_;
  const Tokenizer& tokenizer_;
  std::vector<int32_t> held_;  // the tokens at positions 0 .. held_.size() - 1 of the KV cache
  int last_reused_ = 0;
};

}  // namespace r1pi
