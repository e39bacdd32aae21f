#include "runtime/step_timings.h"

#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/error.h"

namespace r1pi {

TimedTokenSource::TimedTokenSource(TokenSource& inner, std::function<void(const Step&)> on_step,
                                   std::function<StepCost()> last_cost)
    : inner_(inner), on_step_(std::move(on_step)), last_cost_(std::move(last_cost)) {}

Step TimedTokenSource::step(const Batch& batch, std::chrono::steady_clock::time_point start) const {
  Step step{batch.positions[0], batch.size(), {}};
  if (last_cost_)
    step.cost = last_cost_();
  else
    step.cost.pred_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return step;
}

std::vector<float> TimedTokenSource::logits(const Batch& batch) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<float> rows = inner_.logits(batch);
  on_step_(step(batch, start));
  return rows;
}

std::vector<int32_t> TimedTokenSource::forward(const Batch& batch, const std::vector<const Sampler*>& samplers) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<int32_t> picks = inner_.forward(batch, samplers);
  const int B = batch.size();
  Step step = this->step(batch, start);
  if (B > 1 && picks.size() == size_t(B) && runs_of(batch).size() == 1)
    while (step.accepted + 1 < B && batch.tokens[size_t(step.accepted + 1)] == picks[size_t(step.accepted)])
      ++step.accepted;
  on_step_(step);
  return picks;
}

TimingsCsv::TimingsCsv(const std::string& path) : path_(path) {
  try {
    out_.emplace(path);
  } catch (const WriteError& e) {
    fail(e.error_number);
  }
  // Flushed at once: a full disk (/dev/full) fails here, before the run, not in the buffer at exit.
  if (std::fprintf(out_->stream(), "pos,tokens,pred_ms,sync_ms,sent_bytes,recv_bytes,accepted\n") < 0 ||
      std::fflush(out_->stream()) != 0)
    fail(errno);
}

void TimingsCsv::fail(int err) {
  out_.reset();
  throw Error(path_ + ": cannot write the timings file: " + std::strerror(err));
}

void TimingsCsv::close() {
  if (!out_) return;
  try {
    out_->commit();
  } catch (const WriteError& e) {
    fail(e.error_number);
  }
  out_.reset();
}

void TimingsCsv::write(const Step& s, bool flush) {
  if (!out_) throw Error(path_ + ": the timings file is closed");
  // %.4f: microsecond resolution, which a tiny model's forwards need.
  if (std::fprintf(out_->stream(), "%d,%d,%.4f,%.4f,%llu,%llu,%d\n", s.pos, s.tokens, s.cost.pred_seconds * 1e3,
                   s.cost.sync_seconds * 1e3, (unsigned long long)s.cost.sent,
                   (unsigned long long)s.cost.received, s.accepted) < 0 ||
      (flush && std::fflush(out_->stream()) != 0))
    fail(errno);
}

}  // namespace r1pi
