#include "runtime/mpi/rank_binding.h"

#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

namespace r1pi {

namespace {

// What mpirun tells its ranks: that it bound them, and the policy when one was given (by
// --bind-to on its command line or by the MCA parameter in the environment or a parameter file).
bool bound_by_mpirun() {
  const char* bound = std::getenv("OMPI_MCA_orte_bound_at_launch");
  return bound && std::string_view(bound) == "1";
}
const char* chosen_policy() { return std::getenv("OMPI_MCA_hwloc_base_binding_policy"); }

int cpus_allowed() {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}

int cpus_online() { return int(sysconf(_SC_NPROCESSORS_ONLN)); }

}  // namespace

std::string widen_default_binding() {
  if (!bound_by_mpirun() || chosen_policy()) return "";
  const int before = cpus_allowed();
  cpu_set_t every;
  CPU_ZERO(&every);
  // The kernel keeps of these the CPUs the process's cgroup allows.
  for (long cpu = 0, n = sysconf(_SC_NPROCESSORS_CONF); cpu < n && cpu < CPU_SETSIZE; ++cpu) CPU_SET(cpu, &every);
  if (before == 0 || sched_setaffinity(0, sizeof every, &every) != 0) return "";
  const int after = cpus_allowed();
  if (after <= before) return "";
  return "mpirun bound this rank to " + std::to_string(before) + " of " + std::to_string(after) +
         " CPUs (Open MPI's default for one or two ranks on a node): r1pi runs it on all " + std::to_string(after) +
         " (mpirun --bind-to none starts it so, as scripts/mpirun does)";
}

std::string binding_error(int threads) {
  const char* policy = chosen_policy();
  if (!policy || std::string_view(policy) == "none" || threads <= 0) return "";
  const int cpus = cpus_allowed();
  if (cpus == 0 || cpus >= cpus_online() || threads <= cpus) return "";
  return "-t " + std::to_string(threads) + " threads on a rank that mpirun --bind-to " + policy + " bound to " +
         std::to_string(cpus) + (cpus == 1 ? " CPU" : " CPUs") +
         ": the threads would share them; start it with --bind-to none (scripts/mpirun does), or give -t " +
         std::to_string(cpus);
}

}  // namespace r1pi
