#!/usr/bin/env bash
# shard_weights.sh MODEL NP WEIGHTS: a weighted shard plan (--shard-weights, mixed boards) on NP ranks.
#   - rank 0 prints the weights and the plan; with --check-ranks every rank holds the same hidden
#     states after every layer; the plan's sha256 is the same for -t 1 and 2, another batch size,
#     --weights-from-root and a repeated run (it is the plan's: the docs say so);
#   - auto: each rank's read bandwidth as the weights, printed, ranks identical; weights far apart
#     (1000 to 1) still leave every rank a KV head;
#   - refused, naming the problem: a weight of 0, a count other than NP.
source "$(dirname "$0")/lib.sh"
model=$R1PI_MPI_MODELS/${1:?usage: shard_weights.sh MODEL NP WEIGHTS}
np=${2:?usage: shard_weights.sh MODEL NP WEIGHTS}
weights=${3:?usage: shard_weights.sh MODEL NP WEIGHTS}
TEST_NAME="mpi shard weights $(basename "$model" .gguf) np=$np $weights"
work=$(mktemp -d "${TMPDIR:-/tmp}/r1pi-mpi-weights.XXXXXX")
trap 'rm -rf "$work"' EXIT
base=(-m "$model" -p "Once upon a time, in a land far away, there lived" -n 24 -c 256 --check-ranks --temp 0)

run weighted --shard-weights "$weights" -t 1
ref=$sha
[ -n "$ref" ] || die "the weighted run failed"
grep -q "^shard weights: $weights$" "$work/weighted.log" && pass "the weights are printed" || fail "no 'shard weights: $weights' line"
grep -q "^plan: rank 0: KV heads .*; rank $((np - 1)): KV heads " "$work/weighted.log" && pass "the plan is printed" ||
  fail "no plan line for $np ranks"
for variant in "-t 2" "-t 1 -b 3" "-t 1 --weights-from-root" "-t 1"; do
  read -ra extra <<<"$variant"
  run "weighted${variant// /}" --shard-weights "$weights" "${extra[@]}"
  [ -z "$sha" ] || { [ "$sha" = "$ref" ] && pass "$variant: the plan's sha256" || fail "$variant: sha256 $sha != $ref"; }
done
run lopsided --shard-weights "1000$(printf ',1%.0s' $(seq 2 "$np"))" -t 1
[ -n "$sha" ] && pass "weights 1000 to 1: every rank still holds a part" || fail "weights 1000 to 1 failed"
every_configuration && {
  run auto --shard-weights auto -t 1
  grep -Eq '^shard weights: [0-9.]+(,[0-9.]+)+ \(each rank' "$work/auto.log" && pass "auto: the measured weights are printed" ||
    fail "auto: no measured weights line"
}

# refused WHAT MESSAGE WEIGHTS: the job fails, rank 0's message names the problem.
refused() {
  job "$np" "$work/refused.log" "$R1PI" "${base[@]}" -t 1 --shard-weights "$3"
  [ "$rc" -ne 0 ] && grep -q -- "$2" "$work/refused.log" && pass "$1 refused" ||
    { show "$work/refused.log"; fail "$1: status $rc, no '$2'"; }
}
refused "a weight of 0" "'0' is not a positive number" "0$(printf ',1%.0s' $(seq 2 "$np"))"
refused "$((np + 1)) weights" "$((np + 1)) weights for $np ranks" "1$(printf ',1%.0s' $(seq 1 "$np"))"
finish
