#include "runtime/mpi/rank_watchdog.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace r1pi {

namespace {

using Clock = std::chrono::steady_clock;

// Tags of their own, so that no ping can match a message of the job.
constexpr int kPingTag = 7401, kPongTag = 7402;

double g_rank_timeout = kDefaultRankTimeout;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Answers every ping that has come in: its sender is finding out which ranks are still there.
void answer_pings() {
  for (;;) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kPingTag, MPI_COMM_WORLD, &flag, &status);
    if (!flag) return;
    int32_t round = 0;
    MPI_Recv(&round, 1, MPI_INT32_T, status.MPI_SOURCE, kPingTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    // One int goes out eagerly: this send does not wait for the pinger.
    MPI_Send(&round, 1, MPI_INT32_T, status.MPI_SOURCE, kPongTag, MPI_COMM_WORLD);
  }
}

// The ranks that have not answered a ping by `deadline`, answering pings meanwhile; stops early
// when the requests complete (whoever was late has caught up: *done is then set). Ranks that all
// answer still get until the deadline to complete the exchange: alive but slow is no reason to
// end the job sooner.
std::vector<int> silent_ranks(std::vector<MPI_Request>& requests, Clock::time_point deadline, int* done) {
  static int32_t round = 0;
  ++round;
  int me = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  std::vector<MPI_Request> pings;
  for (int r = 0; r < n; ++r) {
    if (r == me) continue;
    pings.emplace_back();
    MPI_Isend(&round, 1, MPI_INT32_T, r, kPingTag, MPI_COMM_WORLD, &pings.back());
  }
  std::vector<bool> answered(size_t(n), false);
  answered[size_t(me)] = true;
  while (Clock::now() < deadline && !*done) {
    answer_pings();
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kPongTag, MPI_COMM_WORLD, &flag, &status);
    if (flag) {
      int32_t r = 0;
      MPI_Recv(&r, 1, MPI_INT32_T, status.MPI_SOURCE, kPongTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (r == round) answered[size_t(status.MPI_SOURCE)] = true;  // older rounds' answers are stale
      continue;
    }
    MPI_Testall(int(requests.size()), requests.data(), done, MPI_STATUSES_IGNORE);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (MPI_Request& p : pings) MPI_Request_free(&p);  // a silent rank's ping may never be taken
  std::vector<int> silent;
  for (int r = 0; r < n; ++r)
    if (!answered[size_t(r)]) silent.push_back(r);
  return silent;
}

[[noreturn]] void end_job(const char* what, double waited, const std::vector<int>& silent) {
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  std::string who;
  for (int r : silent) who += (who.empty() ? "" : ", ") + std::to_string(r);
  std::fflush(stdout);
  if (silent.empty())
    std::fprintf(stderr,
                 "error: rank %d: no progress for %.0f s (--rank-timeout %g) waiting for %s, though "
                 "every rank answers\n",
                 me, waited, g_rank_timeout, what);
  else
    std::fprintf(stderr,
                 "error: rank %d: rank%s %s silent for %.0f s (--rank-timeout %g) while waiting for "
                 "%s: stopped, frozen or cut off\n",
                 me, silent.size() > 1 ? "s" : "", who.c_str(), waited, g_rank_timeout, what);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

// Waits until every request has completed, as complete() describes; the ping and timeout logic
// sees the requests as one exchange.
void wait_all(const char* what, std::vector<MPI_Request>& requests, bool idle) {
  int done = 0;
  const Clock::time_point begin = Clock::now();
  // A sync between ranks that keep pace takes well under 2 ms: test without sleeping (yielding to
  // any other runnable thread), so that the common case gains no latency.
  while (!done && seconds_since(begin) < 2e-3) {
    MPI_Testall(int(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
    if (!done) sched_yield();
  }
  // Longer waits sleep between tests: a rank waiting for a slow or lost peer costs no core.
  auto nap = std::chrono::microseconds(50);
  // The ranks are asked whether they are there in the last part of the timeout, not after it: the
  // job ends after about --rank-timeout seconds (it once took the timeout and 5 s more).
  const double grace = std::min(5.0, g_rank_timeout / 2);
  const Clock::time_point deadline =
      begin + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(g_rank_timeout));
  while (!done) {
    answer_pings();
    const double waited = seconds_since(begin);
    if (!idle && waited > g_rank_timeout - grace) {
      const std::vector<int> silent = silent_ranks(requests, deadline, &done);
      if (done) break;
      end_job(what, seconds_since(begin), silent);
    }
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(1000));
    MPI_Testall(int(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
  }
}

}  // namespace

void set_rank_timeout(double seconds) { g_rank_timeout = seconds; }
double rank_timeout() { return g_rank_timeout; }

void complete(const char* what, const std::function<int(MPI_Request*)>& start, bool idle) {
  std::vector<MPI_Request> requests(1);
  start(&requests[0]);
  wait_all(what, requests, idle);
}

void complete_all(const char* what, const std::function<void(std::vector<MPI_Request>&)>& start) {
  std::vector<MPI_Request> requests;
  start(requests);
  wait_all(what, requests, /*idle=*/false);
}

}  // namespace r1pi
