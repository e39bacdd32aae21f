// Picks the next token from logits: greedy at temperature 0, else temperature, top-k and top-p
// (nucleus) sampling with a seeded generator, so the same seed gives the same tokens.
#pragma once
#include <cstdint>
#include <vector>

namespace r1pi {

struct SamplerParams {
  float temperature = 0.8f;  // 0: greedy
  int top_k = 40;            // <= 0: whole vocabulary
  float top_p = 0.95f;       // 1: off
  uint64_t seed = 0;
};

// The token with the largest logit; ties go to the lowest id.
int32_t argmax(const float* logits, int64_t n);

class Sampler {
 public:
  explicit Sampler(const SamplerParams& params);
  const SamplerParams& params() const { return params_; }
  bool greedy() const { return params_.temperature <= 0.0f; }
  int32_t sample(const float* logits, int64_t n);

 private:
  double next_uniform();  // [0, 1)

  SamplerParams params_;
  uint64_t state_;
  struct Candidate {
    float logit;
    int32_t id;
  };
  std::vector<Candidate> candidates_;
};

}  // namespace r1pi
