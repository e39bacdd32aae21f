#!/usr/bin/env bash
# Runs a bench script with its ranks on the emulated 4-board (or 8-board) network: brings up
# ../shared/tools/netdelay's switch (`netdelay.sh up4`: pi0..pi3, the Pi 5's 0.226 ms round trip,
# one busy-polling delay process on CPU 0), runs the command on CPU 1 with R1PI_MPIRUN pointing at
# bench/mpi/netns_mpirun.sh (so `--np N` runs go over the namespaces), and tears the switch down.
# Needs root; refuses when the namespaces exist already.
#   bench/mpi/netdelay_run.sh bench/spec_bench.py -m ts656k-1B.gguf --np 4 -t 1 ...
# Env: R1PI_SHARED_TOOLS (default ../shared/tools beside the checkout), NDELAY (where netdelay.sh
# compiles its helper; default /tmp/r1pi-ndelay), R1PI_BOARDS (4 or 8, default 4: pi0..pi<N-1>, one
# delay process for all their links, the same 0.226 ms board-to-board round trip).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tools=${R1PI_SHARED_TOOLS:-$(cd "$root/.." && pwd)/shared/tools}
[ $# -gt 0 ] || { echo "usage: bench/mpi/netdelay_run.sh COMMAND ARGS..." >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "netdelay_run.sh: needs root (network namespaces)" >&2; exit 1; }
[ -x "$tools/netdelay/netdelay.sh" ] || { echo "netdelay_run.sh: no $tools/netdelay/netdelay.sh" >&2; exit 1; }
boards=${R1PI_BOARDS:-4}
[ "$boards" -ge 1 ] && [ "$boards" -le 8 ] || { echo "netdelay_run.sh: R1PI_BOARDS 1..8 (the delay process serves 8 links)" >&2; exit 2; }
if ip netns list | awk '{print $1}' | grep -qE '^(pi[0-7]|pisw|pidly)$'; then
  echo "netdelay_run.sh: namespaces pi0..pi7/pisw/pidly exist already (another netdelay run?)" >&2
  exit 1
fi
export NDELAY=${NDELAY:-/tmp/r1pi-ndelay}
trap 'N=$boards "$tools/netdelay/netdelay.sh" down4 >/dev/null 2>&1 || true' EXIT
N=$boards "$tools/netdelay/netdelay.sh" up4 >/dev/null
export R1PI_MPIRUN="$root/bench/mpi/netns_mpirun.sh"
taskset -c 1 "$@"
