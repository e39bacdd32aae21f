#!/usr/bin/env bash
# scripts/mpirun's command line (-np N -- PROGRAM ARGS...) over the emulated 4- or 8-board network
# of ../shared/tools/netdelay (`netdelay.sh up4`, `N=8 netdelay.sh up4`: namespaces pi0..pi3 or
# pi0..pi7 on a switch with the Pi 5's 0.226 ms round trip): mpirun inside pi0, rank i in pi<i> through tests/netns/rsh_agent.sh (in
# place of ssh), TCP on eth0, everything on CPU 1 (the delay process owns CPU 0). The bench scripts
# use it through R1PI_MPIRUN (bench/r1pibench/runs.py); bench/mpi/netdelay_run.sh sets that up.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
np=""
while [ $# -gt 0 ]; do
  case $1 in
    -np) np=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "netns_mpirun.sh: unknown option $1 (-np N -- PROGRAM ARGS)" >&2; exit 2 ;;
  esac
done
boards=$(ip netns list | awk '{print $1}' | grep -cE '^pi[0-7]$' || true)
[ "$boards" -gt 0 ] || { echo "netns_mpirun.sh: no namespace pi0 (netdelay.sh up4)" >&2; exit 1; }
[ -n "$np" ] && [ "$np" -ge 1 ] && [ "$np" -le "$boards" ] || { echo "netns_mpirun.sh: -np 1..$boards (a rank per board)" >&2; exit 2; }
[ $# -gt 0 ] || { echo "netns_mpirun.sh: no program" >&2; exit 2; }
hostfile=$(mktemp /tmp/r1pi-netns-hosts.XXXXXX)
trap 'rm -f "$hostfile"' EXIT
hosts=""
for ((i = 0; i < np; ++i)); do
  echo "10.77.0.1$i slots=1" >>"$hostfile"
  hosts="$hosts 10.77.0.1$i:pi$i:pi$i"
done
export R1PI_NETNS_HOSTS=${hosts# } OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
xs=()
for v in $(env | sed -n 's/^\(R1PI_[A-Z0-9_]*\)=.*/\1/p'); do xs+=(-x "$v"); done
taskset -c 1 ip netns exec pi0 unshare --uts /bin/sh -c 'hostname pi0 && exec "$@"' sh \
  mpirun -np "$np" --hostfile "$hostfile" --bind-to none "${xs[@]}" \
  --mca plm_rsh_agent "$root/tests/netns/rsh_agent.sh" --mca plm_rsh_no_tree_spawn 1 \
  --mca btl tcp,self --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 \
  --mca mpi_yield_when_idle 1 "$@"
