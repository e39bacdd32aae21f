// Ctrl-C in a plain run: the generation ends after the token in hand and the summary (with its
// sha256 of what was generated) is printed, as llama-cli prints its timings; the exit status is
// 128 + the signal, as a shell reports a process the signal ended. SIGTERM too: mpirun passes a
// Ctrl-C on to the ranks as SIGTERM. A second signal ends the process at once (SA_RESETHAND), for a
// run that does not reach its next token soon (loading, a stalled rank).
#pragma once

namespace r1pi {

class StopSignals {
 public:
  StopSignals();   // catches SIGINT and SIGTERM until destroyed
  ~StopSignals();  // restores the handlers it replaced
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  static int caught();  // the signal caught, 0 while none
};

// 0, or 128 + the signal that stopped the generation.
int exit_status_after_signals();

}  // namespace r1pi
