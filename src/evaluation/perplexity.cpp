#include "evaluation/perplexity.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>

#include "common/atomic_file.h"
#include "common/error.h"

namespace r1pi {

namespace {

using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

// A row's log-partition (log of the sum of exp) in double, and its first largest entry.
struct RowSoftmax {
  double log_z = 0;
  int64_t argmax = 0;
};

RowSoftmax softmax_of(const float* row, int64_t V) {
  const int64_t argmax = std::max_element(row, row + V) - row;
  const double m = row[argmax];
  double sum = 0;
  for (int64_t i = 0; i < V; ++i) sum += std::exp(double(row[i]) - m);
  return {m + std::log(sum), argmax};
}

// KL(p || q) of the softmaxes of rows a (p) and b (q).
double kl_divergence(const float* a, RowSoftmax sa, const float* b, RowSoftmax sb, int64_t V) {
  double kl = 0;
  for (int64_t i = 0; i < V; ++i) {
    const double log_p = a[i] - sa.log_z, log_q = b[i] - sb.log_z;
    kl += std::exp(log_p) * (log_p - log_q);
  }
  return std::max(kl, 0.0);  // rounding can leave a tiny negative sum for equal rows
}

// Running sums of negative log-likelihoods, giving the perplexity and its standard error.
struct NllSums {
  double sum = 0, sum2 = 0;
  int64_t n = 0;
  void add(double nll) { sum += nll, sum2 += nll * nll, ++n; }
  double perplexity() const { return n ? std::exp(sum / double(n)) : 0; }
  double uncertainty() const {
    if (n < 2) return 0;
    const double mean = sum / double(n), var = std::max(sum2 / double(n) - mean * mean, 0.0);
    return perplexity() * std::sqrt(var / double(n - 1));
  }
};

// Everything done with each kept row, in order: scored, saved, compared.
class RowSink {
 public:
  RowSink(const PerplexityOptions& o, int64_t n_vocab, int64_t n_rows)
      : V_(n_vocab), other_(nullptr, std::fclose), other_row_(size_t(n_vocab)) {
    if (!o.save_logits.empty()) {
      save_path_ = o.save_logits;
      // Through a temporary: the old file stays whole until the new one is (and --kl-divergence
      // may name it).
      try {
        save_.emplace(save_path_, std::vector<std::string>{o.compare_logits});
      } catch (const WriteError& e) {
        cannot_save(e.error_number);
      }
    }
    if (!o.compare_logits.empty()) {
      other_path_ = o.compare_logits;
      std::error_code ec;
      const auto size = std::filesystem::file_size(other_path_, ec);
      if (ec || !std::filesystem::is_regular_file(other_path_))
        throw Error(other_path_ + ": no such logits file (" + (ec ? ec.message() : "not a regular file") + ")");
      const uint64_t want = uint64_t(n_rows) * uint64_t(n_vocab) * sizeof(float);
      if (size != want)
        throw Error(other_path_ + ": " + std::to_string(size) + " bytes, but " + std::to_string(n_rows) +
                    " rows of " + std::to_string(n_vocab) + " float32 logits are " + std::to_string(want) +
                    " (the same ids, mode and -c, and a model with the same vocabulary, must write it)");
      other_.reset(std::fopen(other_path_.c_str(), "rb"));
      if (!other_) throw Error(other_path_ + ": cannot read (" + std::strerror(errno) + ")");
    }
  }

  // target < 0: the row has no next id (the last position).
  void add(const float* row, int32_t target) {
    const RowSoftmax s = softmax_of(row, V_);
    if (target >= 0) mine_.add(s.log_z - row[target]);
    if (save_ && std::fwrite(row, sizeof(float), size_t(V_), save_->stream()) != size_t(V_)) cannot_save(errno);
    if (other_) {
      if (std::fread(other_row_.data(), sizeof(float), size_t(V_), other_.get()) != size_t(V_))
        throw Error(other_path_ + ": cannot read the logits (" + std::strerror(errno) + ")");
      const RowSoftmax o = softmax_of(other_row_.data(), V_);
      if (target >= 0) other_nll_.add(o.log_z - other_row_[size_t(target)]);
      const double kl = kl_divergence(other_row_.data(), o, row, s, V_);
      kl_sum_ += kl;
      kl_max_ = std::max(kl_max_, kl);
      same_top_ += o.argmax == s.argmax;
    }
    ++kept_;
  }

  double perplexity() const { return mine_.perplexity(); }

  PerplexityResult finish() {
    if (save_) {
      try {
        save_->commit();
      } catch (const WriteError& e) {
        cannot_save(e.error_number);
      }
    }
    PerplexityResult r;
    r.kept = kept_;
    r.scored = mine_.n;
    r.perplexity = mine_.perplexity();
    r.uncertainty = mine_.uncertainty();
    if (other_) {
      r.compared = true;
      r.other_perplexity = other_nll_.perplexity();
      r.kl_mean = kept_ ? kl_sum_ / double(kept_) : 0;
      r.kl_max = kl_max_;
      r.top1_agreement = kept_ ? double(same_top_) / double(kept_) : 0;
    }
    return r;
  }

 private:
  [[noreturn]] void cannot_save(int err) const {
    throw Error(save_path_ + ": cannot write the logits (" + std::strerror(err) + ")");
  }

  int64_t V_;
  std::string save_path_, other_path_;
  std::optional<AtomicFile> save_;
  File other_;
  std::vector<float> other_row_;
  NllSums mine_, other_nll_;
  double kl_sum_ = 0, kl_max_ = 0;
  int64_t kept_ = 0, same_top_ = 0;
};

// Feeds ids[begin, end) of one sequence at positions from 0 (the slot cleared first) in batches,
// asking for the logits at positions keep_from and later, up to keep_to (exclusive); hands each
// kept row with its next id (or -1) to sink, then calls done(position reached).
void feed_sequence(TokenSource& source, const std::vector<int32_t>& tokens, const std::vector<int32_t>& next,
                   int keep_from, int keep_to, int batch_size, int64_t V, RowSink& sink,
                   const std::function<void(int)>& done) {
  source.truncate(0, 0);
  const int n = int(tokens.size());
  Batch batch;
  for (int start = 0; start < n; start += batch_size) {
    const int count = std::min(batch_size, n - start);
    batch.clear();
    for (int p = start; p < start + count; ++p) batch.add(tokens[size_t(p)], 0, p, p >= keep_from && p < keep_to);
    const std::vector<float> rows = source.logits(batch);
    for (int p = std::max(start, keep_from), k = 0; p < std::min(start + count, keep_to); ++p, ++k)
      sink.add(rows.data() + int64_t(k) * V, next[size_t(p)]);
    if (done) done(start + count);
  }
}

}  // namespace

int64_t kept_rows(int64_t n_tokens, const PerplexityOptions& o, int n_ctx_available) {
  if (o.all_positions) {
    if (n_tokens < 2) throw Error("--all-logits needs at least 2 ids, got " + std::to_string(n_tokens));
    if (n_tokens > n_ctx_available)
      throw Error("--all-logits: " + std::to_string(n_tokens) + " ids do not fit the context of " +
                  std::to_string(n_ctx_available) + " (give -c " + std::to_string(n_tokens) + " or more)");
    return n_tokens;
  }
  if (o.n_ctx < 4) throw Error("-c " + std::to_string(o.n_ctx) + ": chunks need at least 4 tokens");
  if (n_tokens < 2 * int64_t(o.n_ctx))
    throw Error("the text is " + std::to_string(n_tokens) + " tokens: perplexity with -c " + std::to_string(o.n_ctx) +
                " needs at least " + std::to_string(2 * o.n_ctx) + " (two chunks; give a longer text or a smaller -c)");
  const int first = o.n_ctx / 2;
  return n_tokens / o.n_ctx * int64_t(o.n_ctx - 1 - first);
}

PerplexityResult run_perplexity(TokenSource& source, const std::vector<int32_t>& ids, int64_t n_vocab,
                                const PerplexityOptions& o) {
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || ids[i] >= n_vocab)
      throw Error("id " + std::to_string(ids[i]) + " (number " + std::to_string(i + 1) +
                  ") is outside the model's vocabulary of " + std::to_string(n_vocab));
  const int64_t n_rows = kept_rows(int64_t(ids.size()), o, source.n_ctx());
  RowSink sink(o, n_vocab, n_rows);
  const int batch = std::max(1, o.batch);
  if (o.all_positions) {
    std::vector<int32_t> next(ids.begin() + 1, ids.end());
    next.push_back(-1);
    feed_sequence(source, ids, next, 0, int(ids.size()), batch, n_vocab, sink, [&](int reached) {
      if (o.progress) o.progress(reached, int64_t(ids.size()), sink.perplexity());
    });
    return sink.finish();
  }
  if (o.n_ctx > source.n_ctx())
    throw Error("-c " + std::to_string(o.n_ctx) + " is more than the context of " + std::to_string(source.n_ctx()));
  const int64_t n_chunks = int64_t(ids.size()) / o.n_ctx;
  for (int64_t c = 0; c < n_chunks; ++c) {
    const auto begin = ids.begin() + c * o.n_ctx;
    std::vector<int32_t> tokens(begin, begin + o.n_ctx), next(begin + 1, begin + o.n_ctx);
    next.push_back(-1);
    if (o.chunk_bos >= 0) tokens[0] = o.chunk_bos;
    feed_sequence(source, tokens, next, o.n_ctx / 2, o.n_ctx - 1, batch, n_vocab, sink, {});
    if (o.progress) o.progress((c + 1) * o.n_ctx, n_chunks * o.n_ctx, sink.perplexity());
  }
  return sink.finish();
}

}  // namespace r1pi
