#include "layers/moe_routing.h"

#include <algorithm>
#include <vector>

namespace r1pi {

void choose_experts(float* logits, int n_experts, int k, ExpertChoice* chosen, const Kernels& kern,
                    ExpertGating gating) {
  if (gating == ExpertGating::SoftmaxTopK) kern.softmax(logits, n_experts);
  for (int i = 0; i < k; ++i) {
    // The first expert not chosen yet, then any later one strictly larger: equal values go to
    // the lower index (and NaN, which compares false, never displaces one).
    auto taken = [&](int e) {
      for (int j = 0; j < i; ++j)
        if (chosen[j].expert == uint32_t(e)) return true;
      return false;
    };
    int best = -1;
    for (int e = 0; e < n_experts; ++e)
      if (!taken(e) && (best < 0 || logits[e] > logits[best])) best = e;
    chosen[i] = {uint32_t(best), logits[best]};
  }
  if (gating == ExpertGating::TopKSoftmax) {
    // Once per token and layer: a buffer of the thread's own, not an allocation each time.
    thread_local std::vector<float> w;
    w.resize(static_cast<size_t>(k));
    for (int i = 0; i < k; ++i) w[size_t(i)] = chosen[i].weight;
    kern.softmax(w.data(), k);
    for (int i = 0; i < k; ++i) chosen[i].weight = w[size_t(i)];
    return;
  }
  float sum = 0.0f;
  for (int i = 0; i < k; ++i) sum += chosen[i].weight;
  sum = std::max(sum, kMinExpertWeightSum);
  for (int i = 0; i < k; ++i) chosen[i].weight /= sum;
}

}  // namespace r1pi
