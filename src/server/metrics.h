// The counters /metrics shows in Prometheus' text format.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "chat/completion.h"

namespace r1pi {

class Metrics {
 public:
  void request(int status);                 // every answered request, by status class
  void completed(const Completion& c);      // a generation that ran
  std::string text(size_t queue_length);    // the exposition

 private:
  std::mutex mutex_;
  uint64_t requests_ok_ = 0, requests_client_error_ = 0, requests_server_error_ = 0;
  uint64_t generations_ = 0, cancelled_ = 0;
  uint64_t prompt_tokens_ = 0, cached_tokens_ = 0, completion_tokens_ = 0;
  double prefill_seconds_ = 0, decode_seconds_ = 0;
  uint64_t decode_tokens_ = 0;
  uint64_t spec_generations_ = 0, spec_drafted_ = 0, spec_accepted_ = 0, spec_steps_ = 0;  // --spec
  double last_decode_tps_ = 0, last_prefill_tps_ = 0;
};

}  // namespace r1pi
