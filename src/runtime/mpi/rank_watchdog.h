// Waiting for the other ranks without spinning a core, and never forever. Every exchange of a
// multi-rank job is started non-blocking and finished by complete(): it tests the request, first
// in a short yielding loop (most syncs finish within it), then between ever longer naps of at most
// a millisecond. When nothing has arrived by the last part of the rank timeout (--rank-timeout: its
// second half, at most 5 s), it asks every rank whether it is still there (a ping that ranks answer
// while they wait), and at the timeout ends the job with a message naming the ranks that did not
// answer: a stopped process, a frozen board, a cut cable.
#pragma once
#include <mpi.h>

#include <functional>
#include <vector>

#include "runtime/run_options.h"

namespace r1pi {

// Seconds a rank waits for the others before it ends the job; process-wide, like MPI itself.
void set_rank_timeout(double seconds);
double rank_timeout();

// Starts a non-blocking MPI call (start gets the request to fill) and waits for it to complete;
// after the rank timeout ends the job (status 1) with a message saying what was awaited (`what`)
// and which ranks went silent. idle: a wait that may rightly last for ever (a worker waiting for the
// next request of a chat or server session, while people type): no limit, pings still answered.
void complete(const char* what, const std::function<int(MPI_Request*)>& start, bool idle = false);

// The same for several requests that together make one exchange (point-to-point sends and
// receives to every peer): start appends them; returns when all have completed.
void complete_all(const char* what, const std::function<void(std::vector<MPI_Request>&)>& start);

}  // namespace r1pi
