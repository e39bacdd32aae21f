#include "server/metrics.h"

#include <algorithm>
#include <sstream>

namespace r1pi {

void Metrics::request(int status) {
  std::lock_guard lock(mutex_);
  if (status >= 500) ++requests_server_error_;
  else if (status >= 400) ++requests_client_error_;
  else ++requests_ok_;
}

void Metrics::completed(const Completion& c) {
  std::lock_guard lock(mutex_);
  const GenerationResult& r = c.result;
  ++generations_;
  if (c.finish_reason == "cancelled") ++cancelled_;
  prompt_tokens_ += uint64_t(c.prompt_tokens);
  cached_tokens_ += uint64_t(c.cached_tokens);
  completion_tokens_ += uint64_t(c.completion_tokens());
  prefill_seconds_ += r.prefill_seconds;
  decode_seconds_ += r.decode_seconds;
  decode_tokens_ += uint64_t(r.decode_tokens);
  last_prefill_tps_ = r.prefill_tokens / std::max(r.prefill_seconds, 1e-9);
  last_decode_tps_ = r.decode_tokens / std::max(r.decode_seconds, 1e-9);
  if (r.speculative) {
    ++spec_generations_;
    spec_drafted_ += uint64_t(r.spec.drafted);
    spec_accepted_ += uint64_t(r.spec.accepted);
    spec_steps_ += uint64_t(r.spec.steps);
  }
}

std::string Metrics::text(size_t queue_length) {
  std::lock_guard lock(mutex_);
  std::ostringstream o;
  auto metric = [&](const char* name, const char* type, const char* help, auto value, const char* labels = "") {
    o << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n'
      << name << labels << ' ' << value << '\n';
  };
  o << "# HELP r1pi_requests_total HTTP requests answered, by status class\n# TYPE r1pi_requests_total counter\n"
    << "r1pi_requests_total{status=\"2xx\"} " << requests_ok_ << "\nr1pi_requests_total{status=\"4xx\"} "
    << requests_client_error_ << "\nr1pi_requests_total{status=\"5xx\"} " << requests_server_error_ << '\n';
  metric("r1pi_generations_total", "counter", "completions generated", generations_);
  metric("r1pi_generations_cancelled_total", "counter", "completions ended by a client that went away", cancelled_);
  metric("r1pi_prompt_tokens_total", "counter", "prompt tokens of the completions", prompt_tokens_);
  metric("r1pi_prompt_tokens_cached_total", "counter", "prompt tokens taken from the prompt cache", cached_tokens_);
  metric("r1pi_completion_tokens_total", "counter", "tokens generated", completion_tokens_);
  metric("r1pi_prefill_seconds_total", "counter", "seconds spent feeding prompts", prefill_seconds_);
  metric("r1pi_decode_seconds_total", "counter", "seconds spent generating", decode_seconds_);
  metric("r1pi_decode_tokens_per_second", "gauge", "decode speed of the last completion", last_decode_tps_);
  metric("r1pi_prefill_tokens_per_second", "gauge", "prompt speed of the last completion", last_prefill_tps_);
  metric("r1pi_decode_tokens_per_second_mean", "gauge", "decode speed over all completions",
         decode_tokens_ / std::max(decode_seconds_, 1e-9));
  metric("r1pi_queue_length", "gauge", "requests waiting or running", queue_length);
  if (spec_generations_ > 0) {  // speculative decoding (--spec) was on
    metric("r1pi_spec_drafted_tokens_total", "counter", "draft tokens verified", spec_drafted_);
    metric("r1pi_spec_accepted_tokens_total", "counter", "draft tokens the model accepted", spec_accepted_);
    metric("r1pi_spec_acceptance_ratio", "gauge", "accepted / drafted over all completions",
           double(spec_accepted_) / double(std::max<uint64_t>(spec_drafted_, 1)));
    metric("r1pi_spec_tokens_per_step", "gauge", "tokens generated per decode forward over all completions",
           double(spec_accepted_ + spec_steps_) / double(std::max<uint64_t>(spec_steps_, 1)));
  }
  return o.str();
}

}  // namespace r1pi
