#!/usr/bin/env bash
# per_rank.sh PROGRAM ARGS...: runs PROGRAM ARGS... as this Open MPI rank, with words from
# $R1PI_TEST_RANK<r>_ARGS appended (e.g. a different -m for rank 1) and, when
# $R1PI_TEST_RANK<r>_VMEM_KB is set, that address-space limit (ulimit -v) for this rank only; with
# $R1PI_TEST_RANK<r>_STOP=1 this rank stops itself (SIGSTOP) before the program starts; with
# $R1PI_TEST_RANK<r>_STOP_AT_OPEN=FILE it stops when it opens FILE (the shim $R1PI_TEST_STOP_AT_OPEN_LIB,
# tests/mpi/stop_at_open.cpp, preloaded): for r1pi's model file, inside the load.
# Lets a test give one rank of a job different arguments, less memory or a freeze.
set -euo pipefail
r=${OMPI_COMM_WORLD_RANK:?per_rank.sh must be started by Open MPI}
args_var=R1PI_TEST_RANK${r}_ARGS
vmem_var=R1PI_TEST_RANK${r}_VMEM_KB
stop_var=R1PI_TEST_RANK${r}_STOP
open_var=R1PI_TEST_RANK${r}_STOP_AT_OPEN
[ -z "${!vmem_var:-}" ] || ulimit -v "${!vmem_var}"
[ "${!stop_var:-0}" != 1 ] || kill -STOP $$
if [ -n "${!open_var:-}" ]; then
  export LD_PRELOAD=${R1PI_TEST_STOP_AT_OPEN_LIB:?the shim tests/mpi/stop_at_open.cpp, built} R1PI_TEST_STOP_AT_OPEN=${!open_var}
  # Under ASan the preloaded shim comes before ASan's runtime, which ASan refuses unless told.
  export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
fi
# shellcheck disable=SC2086  # the extra arguments are meant to be split into words
exec "$@" ${!args_var:-}
