// Requests waiting for the engine, served one at a time in arrival order. The HTTP threads put a
// Job in and wait on it; the engine's thread (rank 0's main thread: MPI is called from it only)
// takes them out and reports each piece of text back through the job.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <utility>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "chat/completion.h"
#include "sampling/token_constraint.h"
#include "server/api_request.h"
#include "server/client_connection.h"

namespace r1pi {

class Job {
 public:
  Job(ApiRequest request, std::vector<int32_t> prompt, ClientConnection connection = {})
      : request(std::move(request)), prompt(std::move(prompt)), connection_(connection) {}
  const ApiRequest request;
  const std::vector<int32_t> prompt;
  // The rule the answer must follow (request_constraint.h), set before the job is queued; null: free.
  std::shared_ptr<const TokenConstraint> constraint;
  // The client went away (a failed write, an answer that could not be sent): stop at the next token.
  // The HTTP side sets it before it lets the connection go.
  std::atomic<bool> cancelled{false};
  // True once the client is gone: `cancelled`, or (asked by the engine before the job and before
  // every token) its connection closed, which also sets `cancelled`.
  bool abandoned();
  // Arrival and service order (1, 2, ...): equal orders show requests are served first come, first
  // served. ticket is set by JobQueue::push, served by the engine before the job's first piece.
  uint64_t ticket = 0, served = 0;

  // ---- the engine's side ----
  void add(const TextParts& parts);
  void add_logprobs(const PickLogprobs& p);  // a token's, before its text (if it makes any)
  void finish(Completion completion);
  void fail(const std::string& message);

  // ---- the HTTP side: waits until there is news, then takes it ----
  struct News {
    std::vector<TextParts> pieces;
    std::vector<PickLogprobs> logprobs;    // the tokens' since the last news
    std::optional<Completion> completion;  // set once, with the last pieces
    std::string error;                     // the generation failed
  };
  News wait();

 private:
  std::mutex mutex_;
  std::condition_variable news_;
  std::vector<TextParts> pieces_;
  std::vector<PickLogprobs> logprobs_;
  std::optional<Completion> completion_;
  std::string error_;
  const ClientConnection connection_;
};

class JobQueue {
 public:
  explicit JobQueue(size_t capacity) : capacity_(capacity) {}
  // False when capacity jobs are waiting or running (the server answers 503) or it is closed.
  bool push(std::shared_ptr<Job> job);
  // The oldest job, or nothing after `timeout` (so that the caller can look at its stop flag).
  std::shared_ptr<Job> pop(std::chrono::milliseconds timeout);
  void done_with_one();   // the job popped last is finished: its place is free
  size_t length();        // waiting and running
  // Refuses new jobs and returns the waiting ones (shutdown).
  std::deque<std::shared_ptr<Job>> close();

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::shared_ptr<Job>> waiting_;
  size_t capacity_;
  size_t running_ = 0;
  uint64_t tickets_ = 0;
  bool closed_ = false;
};

}  // namespace r1pi
