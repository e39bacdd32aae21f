#include "server/job_queue.h"

namespace r1pi {

bool Job::abandoned() {
  // cancelled first: once it is set the connection may be closed, and its descriptor reused.
  if (cancelled) return true;
  if (connection_.closed()) cancelled = true;
  return cancelled;
}

void Job::add(const TextParts& parts) {
  std::lock_guard lock(mutex_);
  pieces_.push_back(parts);
  news_.notify_all();
}

void Job::add_logprobs(const PickLogprobs& p) {
  std::lock_guard lock(mutex_);
  logprobs_.push_back(p);  // the text the token makes, or the end, wakes the reader
}

void Job::finish(Completion completion) {
  std::lock_guard lock(mutex_);
  completion_ = std::move(completion);
  news_.notify_all();
}

void Job::fail(const std::string& message) {
  std::lock_guard lock(mutex_);
  error_ = message.empty() ? "the generation failed" : message;
  news_.notify_all();
}

Job::News Job::wait() {
  std::unique_lock lock(mutex_);
  news_.wait(lock, [&] { return !pieces_.empty() || completion_ || !error_.empty(); });
  News news;
  news.pieces.swap(pieces_);
  news.logprobs.swap(logprobs_);
  news.completion = completion_;
  news.error = error_;
  return news;
}

bool JobQueue::push(std::shared_ptr<Job> job) {
  std::lock_guard lock(mutex_);
  if (closed_ || waiting_.size() + running_ >= capacity_) return false;
  job->ticket = ++tickets_;
  waiting_.push_back(std::move(job));
  ready_.notify_one();
  return true;
}

std::shared_ptr<Job> JobQueue::pop(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (!ready_.wait_for(lock, timeout, [&] { return !waiting_.empty(); })) return nullptr;
  std::shared_ptr<Job> job = std::move(waiting_.front());
  waiting_.pop_front();
  ++running_;
  return job;
}

void JobQueue::done_with_one() {
  std::lock_guard lock(mutex_);
  --running_;
}

size_t JobQueue::length() {
  std::lock_guard lock(mutex_);
  return waiting_.size() + running_;
}

std::deque<std::shared_ptr<Job>> JobQueue::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  return std::exchange(waiting_, {});
}

}  // namespace r1pi
