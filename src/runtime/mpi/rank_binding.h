// The CPUs mpirun leaves a rank. Open MPI binds each rank to one core by default when it starts one
// or two ranks on a node, so a board's threads would share one core of four, silently: the 1B
// preset decoded at 10.8 tok/s under `mpirun -np 1 r1pi -t 2` against 58 with `--bind-to none`.
// A binding Open MPI chose by itself is widened to every CPU the process may use; one the user
// chose (`--bind-to`, or the MCA parameter hwloc_base_binding_policy) is kept, and asking for more
// threads than it leaves is an error.
#pragma once
#include <string>

namespace r1pi {

// Widens this process's CPUs where Open MPI bound it by its default policy. Call on the main
// thread before any other thread starts (threads inherit their creator's CPUs). Returns what it
// did, for rank 0 to say ("" when it changed nothing).
std::string widen_default_binding();

// "" when `threads` threads (0: one per CPU the process may use) fit the CPUs a binding the user
// chose leaves this rank; otherwise the error, naming --bind-to none and scripts/mpirun.
std::string binding_error(int threads);

}  // namespace r1pi
