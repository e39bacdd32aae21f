#include "sampling/penalties.h"

#include <algorithm>
#include <vector>

namespace r1pi {

void apply_penalties(float* logits, int64_t n, int32_t first_id, const int32_t* history, size_t n_history,
                     const PenaltyParams& params) {
  if (!params.active()) return;
  const size_t window = params.last_n < 0 ? n_history : std::min(n_history, size_t(params.last_n));
  // The window's ids in order, counted as runs: no table of the vocabulary's size per row.
  std::vector<int32_t> ids(history + (n_history - window), history + n_history);
  std::sort(ids.begin(), ids.end());
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j < ids.size() && ids[j] == ids[i]) ++j;
    const int64_t at = int64_t(ids[i]) - first_id;
    if (at >= 0 && at < n) {
      float& logit = logits[at];
      logit = logit <= 0.0f ? logit * params.repeat : logit / params.repeat;
      logit -= float(j - i) * params.frequency + params.presence;
    }
    i = j;
  }
}

}  // namespace r1pi
