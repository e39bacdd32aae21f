// What the generation loop drives: forward passes and the choice of the next token. One rank does
// both itself; in a multi-rank job rank 0 also tells the other ranks what to run and combines their
// parts of the vocabulary.
#pragma once
#include <cstdint>
#include <vector>

#include "layers/llama_forward.h"
#include "sampling/sampler.h"

namespace r1pi {

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  virtual int n_ctx() const = 0;
  // Feeds B tokens at positions pos .. pos + B - 1. With a sampler, returns the next token (the one
  // at position pos + B) chosen from the last token's logits; without one, computes no logits and
  // returns -1.
  virtual int32_t forward(const int32_t* tokens, int B, int pos, Sampler* sampler) = 0;
  // Feeds B tokens as forward() does and returns the pick after each of them: picks[b] is the
  // token the model chooses for position pos + b + 1 having seen tokens[0..b]. Speculative
  // decoding verifies a draft with it.
  virtual std::vector<int32_t> forward_each(const int32_t* tokens, int B, int pos,
                                            const Sampler& sampler) = 0;
};

// The whole model on this rank.
class LocalTokenSource final : public TokenSource {
 public:
  explicit LocalTokenSource(LlamaForward& model) : model_(model) {}
  int n_ctx() const override { return model_.n_ctx(); }
  int32_t forward(const int32_t* tokens, int B, int pos, Sampler* sampler) override {
    const std::vector<float>& logits =
        model_.forward(tokens, B, pos, sampler ? LogitsFor::Last : LogitsFor::None);
    return sampler ? sampler->sample(logits.data(), int64_t(logits.size()), pos + B) : -1;
  }
  std::vector<int32_t> forward_each(const int32_t* tokens, int B, int pos,
                                    const Sampler& sampler) override {
    const std::vector<float>& logits = model_.forward(tokens, B, pos, LogitsFor::All);
    const int64_t V = int64_t(logits.size()) / B;
    std::vector<int32_t> picks(static_cast<size_t>(B));
    for (int b = 0; b < B; ++b) picks[size_t(b)] = sampler.sample(logits.data() + b * V, V, pos + b + 1);
    return picks;
  }

 private:
  LlamaForward& model_;
};

}  // namespace r1pi
