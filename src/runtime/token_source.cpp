#include "runtime/token_source.h"

#include "common/error.h"

namespace r1pi {

int32_t feed(TokenSource& source, const int32_t* tokens, int n, int pos, const Sampler* sampler, int seq) {
  const Batch batch = Batch::run(tokens, n, pos, sampler ? LogitsFor::Last : LogitsFor::None, seq);
  const std::vector<int32_t> picks = source.forward(batch, sampler ? std::vector<const Sampler*>{sampler}
                                                                    : std::vector<const Sampler*>{});
  return picks.empty() ? -1 : picks[0];
}

std::vector<float> TokenSource::logits(const Batch&) {
  throw Error("internal error: this token source returns picks only, not logits");
}

std::vector<int32_t> LocalTokenSource::forward(const Batch& batch, const std::vector<const Sampler*>& samplers) {
  if (samplers.size() != size_t(batch.n_logits()))
    throw Error("internal error: " + std::to_string(samplers.size()) + " samplers for " +
                std::to_string(batch.n_logits()) + " picks");
  const std::vector<float>& logits = model_.forward(batch);
  const int64_t V = model_.shard().vocab.size();
  std::vector<int32_t> picks;
  picks.reserve(samplers.size());
  for (int b = 0; b < batch.size(); ++b) {
    if (!batch.logits[size_t(b)]) continue;
    const float* row = logits.data() + int64_t(picks.size()) * V;
    const int pos = batch.positions[size_t(b)];
    // The slot holds the batch's tokens now: its history up to and with this entry's token.
    picks.push_back(samplers[picks.size()]->pick_from_row(row, V, pos + 1,
                                                          model_.cache().tokens(batch.seqs[size_t(b)]).data(),
                                                          size_t(pos) + 1));
  }
  return picks;
}

}  // namespace r1pi
