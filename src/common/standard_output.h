// The last thing every program does: make sure what it printed reached stdout. A write that failed
// (a full disk, /dev/full, a closed pipe when SIGPIPE is ignored) must not end in exit status 0
// after the output was lost: it ends in status 1 with "error: writing to standard output: REASON".
//
//   int main(int argc, char** argv) { return r1pi::exit_status_after_stdout(run(argc, argv)); }
#pragma once

namespace r1pi {

// Flushes stdout. Returns `status` when everything written to it arrived; otherwise prints the
// error on stderr and returns `status`, or 1 when `status` was 0.
int exit_status_after_stdout(int status);

}  // namespace r1pi
