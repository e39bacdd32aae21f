#!/usr/bin/env bash
# This machine's report: r1pi-bench on each MODEL at np = 1 with 1 and 2 threads and at np = 2 with
# 1 thread per rank (scripts/mpirun), with the load before and after each, into
# ~/r1pi-results/<date>-<host>/machine-<model>.md, outside the checkout ($R1PI_RESULTS_DIR moves the
# base; OUT=DIR names the folder).
#
# Usage: bench/machine_report.sh [-p P] [-n N] [-r R] MODEL...      (defaults -p 64 -n 32 -r 3)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${R1PI_BUILD_DIR:-$root/build}
p=64 n=32 r=3
while getopts "p:n:r:" opt; do
  case $opt in
    p) p=$OPTARG ;; n) n=$OPTARG ;; r) r=$OPTARG ;;
    *) echo "usage: $0 [-p P] [-n N] [-r R] MODEL..." >&2; exit 1 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "error: give at least one MODEL" >&2; exit 1; }
[ -x "$build/r1pi-bench" ] || { echo "error: $build/r1pi-bench is not built (scripts/build)" >&2; exit 1; }
out=${OUT:-${R1PI_RESULTS_DIR:-$HOME/r1pi-results}/$(date -u +%F)-$(hostname)}
mkdir -p "$out"
load() { cut -d' ' -f1-3 /proc/loadavg; }

for model in "$@"; do
  report=$out/machine-$(basename "$model" .gguf).md
  {
    echo "# r1pi-bench: $(basename "$model")"
    echo
    echo "$(date -u '+%F %H:%M') UTC, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores," \
         "$(uname -r), commit $(git -C "$root" describe --always --dirty --abbrev=12)."
    echo "One warm-up and $r timed runs per test; the load average (1, 5, 15 min) before and after each command."
  } >"$report"
  for config in "1 1,2" "2 1"; do
    read -r np threads <<<"$config"
    cmd=("$build/r1pi-bench" -m "$model" -p "$p" -n "$n" -t "$threads" -r "$r")
    [ "$np" -gt 1 ] && cmd=("$root/scripts/mpirun" -np "$np" -- "${cmd[@]}")
    echo "== $(basename "$model") np $np -t $threads (load $(load))" >&2
    before=$(load)
    table=$("${cmd[@]}")
    { echo; echo "\`${cmd[*]#"$root/"}\` (load $before before, $(load) after)"; echo; echo "$table"; } >>"$report"
  done
  echo "wrote $report" >&2
done
