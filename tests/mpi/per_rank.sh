#!/usr/bin/env bash
# per_rank.sh PROGRAM ARGS...: runs PROGRAM ARGS... as this Open MPI rank, with words from
# $R1PI_TEST_RANK<r>_ARGS appended (e.g. a different -m for rank 1) and, when
# $R1PI_TEST_RANK<r>_VMEM_KB is set, that address-space limit (ulimit -v) for this rank only; with
# $R1PI_TEST_RANK<r>_STOP=1 this rank stops itself (SIGSTOP) before the program starts.
# Lets a test give one rank of a job different arguments, less memory or a freeze.
set -euo pipefail
r=${OMPI_COMM_WORLD_RANK:?per_rank.sh must be started by Open MPI}
args_var=R1PI_TEST_RANK${r}_ARGS
vmem_var=R1PI_TEST_RANK${r}_VMEM_KB
stop_var=R1PI_TEST_RANK${r}_STOP
[ -z "${!vmem_var:-}" ] || ulimit -v "${!vmem_var}"
[ "${!stop_var:-0}" != 1 ] || kill -STOP $$
# shellcheck disable=SC2086  # the extra arguments are meant to be split into words
exec "$@" ${!args_var:-}
