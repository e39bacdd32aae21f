#include "runtime/stop_signals.h"

#include <csignal>

namespace r1pi {

namespace {

volatile std::sig_atomic_t g_caught = 0;
struct sigaction g_old_int {}, g_old_term {};

void on_signal(int signal) { g_caught = signal; }

}  // namespace

StopSignals::StopSignals() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  action.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &action, &g_old_int);
  sigaction(SIGTERM, &action, &g_old_term);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

int StopSignals::caught() { return g_caught; }

int exit_status_after_signals() { return g_caught ? 128 + g_caught : 0; }

}  // namespace r1pi
