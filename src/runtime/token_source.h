// What the generation loop drives: forward passes over batches and the choice of the token after
// each entry that asks for one, by the caller's sampler. One rank does both itself; in a
// multi-rank job rank 0 also tells the other ranks what to run and combines their parts of the
// vocabulary.
#pragma once
#include <cstdint>
#include <vector>

#include "layers/batch.h"
#include "layers/model_forward.h"
#include "sampling/sampler.h"

namespace r1pi {

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  virtual int n_ctx() const = 0;   // positions per sequence
  virtual int n_seqs() const = 0;  // sequences (KV cache slots)
  // Feeds the batch and returns the token picked after each entry whose logits it wants, in batch
  // order: picks[i] by samplers[i], the token at that entry's position + 1 of its sequence (a
  // sampled pick is a function of the logits, the seed and that position). samplers has one entry
  // per such token; a batch that wants no logits returns nothing.
  virtual std::vector<int32_t> forward(const Batch& batch, const std::vector<const Sampler*>& samplers) = 0;
  // Feeds the batch and returns the whole logits row (n_vocab floats) after each entry whose logits
  // it wants, in batch order: what r1pi-perplexity scores (a multi-rank source gathers the ranks'
  // parts of the vocabulary on rank 0). A source without logits throws r1pi::Error.
  virtual std::vector<float> logits(const Batch& batch);
  // What slot seq holds: the tokens at positions 0 .. n - 1 (a prompt that begins with them need
  // not feed them again).
  virtual const std::vector<int32_t>& cached(int seq) const = 0;
  // Whether slot seq can go on at position n (n <= what it holds) without being fed again from its
  // start, which the forward then does (a window layer's ring: KvCache::resumable).
  virtual bool resumable(int seq, int n) const = 0;
  // Slot seq forgets positions n and later (n = 0 frees it for another sequence).
  virtual void truncate(int seq, int n) = 0;
  // Slot dst holds what slot src holds (a prompt cache shared across slots).
  virtual void copy(int src, int dst) = 0;
};

// n tokens of sequence seq at positions pos ..: without a sampler no logits and -1, with one the
// token after the last.
int32_t feed(TokenSource& source, const int32_t* tokens, int n, int pos, const Sampler* sampler, int seq = 0);

// The whole model on this rank.
class LocalTokenSource final : public TokenSource {
 public:
  explicit LocalTokenSource(ModelForward& model) : model_(model) {}
  int n_ctx() const override { return model_.n_ctx(); }
  int n_seqs() const override { return model_.n_seqs(); }
  std::vector<int32_t> forward(const Batch& batch, const std::vector<const Sampler*>& samplers) override;
  std::vector<float> logits(const Batch& batch) override { return model_.forward(batch); }
  const std::vector<int32_t>& cached(int seq) const override { return model_.cache().tokens(seq); }
  bool resumable(int seq, int n) const override { return model_.cache().resumable(seq, n); }
  void truncate(int seq, int n) override { model_.cache().truncate(seq, n); }
  void copy(int src, int dst) override { model_.cache().copy(src, dst); }

 private:
  ModelForward& model_;
};

}  // namespace r1pi
