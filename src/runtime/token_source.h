// What the generation loop drives: forward passes and the choice of the next token. One rank does
// both itself; in a multi-rank job rank 0 also tells the other ranks what to run and combines their
// parts of the vocabulary.
#pragma once
#include <cstdint>

#include "layers/llama_forward.h"
#include "sampling/sampler.h"

namespace r1pi {

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  virtual int n_ctx() const = 0;
  // Feeds B tokens at positions pos .. pos + B - 1. With a sampler, returns the next token chosen
  // from the last token's logits; without one, computes no logits and returns -1.
  virtual int32_t forward(const int32_t* tokens, int B, int pos, Sampler* sampler) = 0;
};

// The whole model on this rank.
class LocalTokenSource final : public TokenSource {
 public:
  explicit LocalTokenSource(LlamaForward& model) : model_(model) {}
  int n_ctx() const override { return model_.n_ctx(); }
  int32_t forward(const int32_t* tokens, int B, int pos, Sampler* sampler) override {
    const std::vector<float>& logits =
        model_.forward(tokens, B, pos, sampler ? LogitsFor::Last : LogitsFor::None);
    return sampler ? sampler->sample(logits.data(), int64_t(logits.size())) : -1;
  }

 private:
  LlamaForward& model_;
};

}  // namespace r1pi
