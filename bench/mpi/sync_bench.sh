#!/usr/bin/env bash
# Runs sync_bench over
#   shm      shared memory (plain mpirun, vader), np 2, 4, 8
#   bridge   TCP between network namespaces on a plain bridge (tests/netns/netns.sh), no delay, np 2, 4
#   delay    TCP over the emulated 4-board Gigabit switch with the Pi 5's 0.226 ms round trip
#            (../shared/tools/netdelay/netdelay.sh up4: one busy-polling delay process on CPU 0),
#            np 2, 4 (a rank per board) and 8 (two per board, talking TCP to each other without delay)
#   delay8   the same switch with 8 boards (N=8 netdelay.sh up4: pi0..pi7, one delay process for
#            all 8 links), np 2, 4, 8, a rank per board
#   delay1g  `delay` plus 1 Gbit/s tbf shaping on every link (netdelay.sh shape4 1gbit); not in
#            the default list
# In the TCP set-ups every rank and mpirun run on CPU 1 (taskset, --bind-to none), as the
# netdelay README requires, so bridge and delay differ only by the delay; at np 8 that one core
# runs 8 ranks in turn (see bench/README.md). Namespaces are torn down on exit. Needs root.
#
#   bench/mpi/sync_bench.sh [BUILD_DIR] [ITERS]      (defaults: build, 300)
# Env: R1PI_SHARED_TOOLS (default ../shared/tools beside the checkout), R1PI_SYNC_BENCH_SETUPS
#      ("shm bridge delay"; add delay1g), NDELAY (where netdelay.sh compiles its helper; default BUILD_DIR/ndelay),
#      R1PI_BENCH_NICE (e.g. -10: run the ranks and the delay process at that nice level, for a shared,
#      busy machine)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "${1:-$root/build}")
iters=${2:-300}
bench=$build/bench/mpi/sync_bench
tools=${R1PI_SHARED_TOOLS:-$(cd "$root/.." && pwd)/shared/tools}
setups=${R1PI_SYNC_BENCH_SETUPS:-shm bridge delay delay8}
[ -x "$bench" ] || { echo "no $bench: build with R1PI_WITH_MPI and R1PI_BUILD_BENCH" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export NDELAY=${NDELAY:-$build/ndelay}
prio=()
[ -n "${R1PI_BENCH_NICE:-}" ] && prio=(nice -n "$R1PI_BENCH_NICE")

work=$(mktemp -d /tmp/r1pi-syncbench.XXXXXX)
export OMPI_MCA_orte_tmpdir_base=$work
bridge_prefix="r1pi-sb-$$-"
cleanup() {
  "$root/tests/netns/netns.sh" down "$bridge_prefix" >/dev/null 2>&1 || true
  if [ -e "$work/delay_up" ]; then
    N=$(cat "$work/delay_up") "$tools/netdelay/netdelay.sh" down4 >"$work/down4.log" 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM


# mpirun inside the first namespace, ranks reached through tests/netns/rsh_agent.sh, SLOTS ranks
# per namespace (filled in order)
# usage: mpirun_ns NP SLOTS "ADDR:NS:HOST ..." PROGRAM ARGS...
mpirun_ns() {
  local np=$1 slots=$2 hosts=$3 first
  shift 3
  : >"$work/hostfile"
  for e in $hosts; do echo "${e%%:*} slots=$slots" >>"$work/hostfile"; done
  first=${hosts%% *}
  local ns=${first#*:}; ns=${ns%%:*}
  local name=${first##*:}
  R1PI_NETNS_HOSTS=$hosts timeout -k 5 600 "${prio[@]}" taskset -c 1 ip netns exec "$ns" unshare --uts \
    /bin/sh -c 'hostname "$0" && shift && exec "$@"' "$name" -- \
    mpirun -np "$np" --hostfile "$work/hostfile" --bind-to none --map-by slot \
    --mca plm_rsh_agent "$root/tests/netns/rsh_agent.sh" --mca plm_rsh_no_tree_spawn 1 \
    --mca btl tcp,self --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 \
    --mca mpi_yield_when_idle 1 "$@" 2> >(grep -v 'setpgid' >&2)
}

run_all() {
for setup in $setups; do
  case $setup in
    shm)
      for np in 2 4 8; do
        timeout -k 5 600 "${prio[@]}" mpirun -np $np --oversubscribe --mca mpi_yield_when_idle 1 \
          "$bench" --iters "$iters" --label shm | grep -v '^#'
      done ;;
    bridge)
      "$root/tests/netns/netns.sh" up "$bridge_prefix" 4
      hosts=""
      for i in 0 1 2 3; do hosts="$hosts $("$root/tests/netns/netns.sh" addr $i):$bridge_prefix$i:r1n$i"; done
      hosts=${hosts# }
      for np in 2 4; do
        mpirun_ns $np 1 "$(echo "$hosts" | cut -d' ' -f1-$np)" "$bench" --iters "$iters" --iface eth0 \
          --label bridge | grep -v '^#'
      done
      "$root/tests/netns/netns.sh" down "$bridge_prefix" ;;
    delay|delay1g|delay8)
      boards=4
      [ $setup = delay8 ] && boards=8
      # netdelay's fixed names (pi0..pi7, pisw, pidly): refuse rather than touch someone else's set
      if ip netns list | awk '{print $1}' | grep -qE '^(pi[0-7]|pisw|pidly)$'; then
        echo "sync_bench.sh: namespaces pi0..pi7/pisw/pidly already exist (someone else's netdelay run?)" >&2
        exit 1
      fi
      echo $boards >"$work/delay_up"  # a file: run_all runs in a subshell (pipe)
      N=$boards "$tools/netdelay/netdelay.sh" up4 >"$work/up4.log"
      # delay1g: also 1 Gbit/s tbf on every board NIC and switch port (serialisation, as on the Pi)
      [ $setup = delay1g ] && "$tools/netdelay/netdelay.sh" shape4 1gbit
      [ -n "${R1PI_BENCH_NICE:-}" ] && renice -n "$R1PI_BENCH_NICE" -p "$(cat /run/netdelay-ndelay4.pid)" >/dev/null
      hosts=""
      for ((i = 0; i < boards; ++i)); do hosts="$hosts 10.77.0.1$i:pi$i:pi$i"; done
      hosts=${hosts# }
      for np in 2 4 8; do
        used=$((np < boards ? np : boards))
        mpirun_ns $np $((np / used)) "$(echo "$hosts" | cut -d' ' -f1-$used)" "$bench" --iters "$iters" \
          --iface eth0 --label $setup | grep -v '^#'
      done
      N=$boards "$tools/netdelay/netdelay.sh" down4 >"$work/down4.log" 2>&1
      rm -f "$work/delay_up" ;;
    *) echo "unknown setup $setup (shm bridge delay delay8 delay1g)" >&2; exit 2 ;;
  esac
done
}
# one table: the header once
run_all | awk '!/^label/ || !seen++'
