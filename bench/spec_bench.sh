#!/usr/bin/env bash
# spec_bench.sh MODEL [NP...]: speculative decoding against plain decoding on MODEL, back to back
# with the same arguments, at each rank count (default 1 2), for three kinds of text:
#   repetitive  greedy output that loops ("The sun was hot": TinyStories-656K loops on it)
#   quoting     the prompt holds a story and the output copies it: the model's own greedy
#               continuation of "Once upon a time", then "Once upon a time" again
#   sampled     --temp 1.5 --top-k 40: text that does not repeat
# Prints one row per (np, kind): plain and speculative decode tok/s, the speedup, the speedup the
# cost curve predicts for the steps taken (sum of c(B) over the forwards against one forward per
# token: free of the machine's noise), acceptance, tokens per step, whether the sha256 matched,
# and the cost curve used (measured at the first
# speculative run for that rank count and cached in $R1PI_CACHE_DIR, default bench-spec-cache/).
# Environment: N (tokens, 96), THREADS (per rank, 1), R1PI_BIN (build), EXTRA (more r1pi flags).
# A benchmark, not a test: the speedups vary with the machine's load; the sha256 may not.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
model=${1:?usage: spec_bench.sh MODEL [NP...]}
shift
nps=("$@")
[ ${#nps[@]} -gt 0 ] || nps=(1 2)
bin=${R1PI_BIN:-$root/build}
n=${N:-96}
threads=${THREADS:-1}
export R1PI_CACHE_DIR=${R1PI_CACHE_DIR:-$PWD/bench-spec-cache}
work=$(mktemp -d "${TMPDIR:-/tmp}/r1pi-spec-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# r1pi_run NP LOG ARGS...: one run (through scripts/mpirun for NP > 1).
r1pi_run() {
  local np=$1 log=$2
  shift 2
  if [ "$np" -eq 1 ]; then
    "$bin/r1pi" -m "$model" -t "$threads" ${EXTRA:-} "$@" >"$log.out" 2>"$log"
  else
    "$root/scripts/mpirun" -np "$np" -- "$bin/r1pi" -m "$model" -t "$threads" ${EXTRA:-} "$@" \
      >"$log.out" 2>"$log"
  fi
}
field() { sed -n "s/^$1: \([0-9]*\) tokens, \([0-9.]*\) tok\/s$/\2/p" "$2" | tail -n 1; }
sha() { sed -n 's/^sha256: //p' "$1" | tail -n 1; }

# The quoting prompt: the story, as the model itself tells it, then its start again.
r1pi_run 1 "$work/story" -p "Once upon a time" -n 80 --temp 0 --no-spec
story=$(cat "$work/story.out")
quote_prompt="Once upon a time${story}
Once upon a time"

printf '%-3s %-10s %9s %9s %7s %7s %7s %6s %5s  %s\n' np text plain spec speedup 'by-c(B)' accept tok/st sha "cost curve"
for np in "${nps[@]}"; do
  for kind in repetitive quoting sampled; do
    case $kind in
      repetitive) args=(-p "The sun was hot" --temp 0) ;;
      quoting) args=(-p "$quote_prompt" --temp 0) ;;
      sampled) args=(-p "Once upon a time" --temp 1.5 --top-k 40 --seed 7) ;;
    esac
    r1pi_run "$np" "$work/plain" "${args[@]}" -n "$n" --no-spec
    r1pi_run "$np" "$work/spec" "${args[@]}" -n "$n" --spec
    plain=$(field decode "$work/plain") spec=$(field decode "$work/spec")
    line=$(grep '^spec: ' "$work/spec")
    accept=$(echo "$line" | sed -n 's/.*(\([0-9.]*%\)).*/\1/p')
    per_step=$(echo "$line" | sed -n 's/.* \([0-9.]*\) tokens\/step.*/\1/p')
    model_x=$(echo "$line" | sed -n 's/.* \([0-9.]*\)x by the cost curve.*/\1/p')
    curve=$(echo "$line" | sed -n 's/.*by the cost curve, cost \(.*\) (.*/\1/p')
    same=no
    [ "$(sha "$work/plain")" = "$(sha "$work/spec")" ] && same=yes
    printf '%-3s %-10s %9s %9s %6.2fx %6sx %7s %6s %5s  %s\n' "$np" "$kind" "$plain" "$spec" \
      "$(echo "$spec / $plain" | bc -l)" "$model_x" "$accept" "$per_step" "$same" "$curve"
  done
done
