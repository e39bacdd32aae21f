#!/usr/bin/env bash
# consistency.sh MODEL NP: r1pi on NP ranks is deterministic and its ranks agree.
#   - with --check-ranks every rank holds bit-identical hidden states after every layer of every
#     forward (r1pi compares digests and aborts otherwise; the test asserts its summary line);
#   - the sha256 of the greedy tokens is the same for -t 1, 2 and 3, for --sync auto (the
#     default, which must say what it chose and use it), allgather, allreduce and direct, for
#     --weights-from-root, for another prefill batch size and for a repeated run;
#   - sampled runs (--seed 42; --top-k 40, and --top-k 0: every rank sends all its rows) repeat
#     with other threads, sync, batch size and --weights-from-root.
#   Under a sanitizer (lib.sh's every_configuration) the repeats that cover no new code are left out.
# MODEL is a file name in $R1PI_MPI_MODELS. NP = 1 runs the single-rank path through mpirun.
source "$(dirname "$0")/lib.sh"
model=$R1PI_MPI_MODELS/${1:?usage: consistency.sh MODEL NP}
np=${2:?usage: consistency.sh MODEL NP}
TEST_NAME="mpi consistency $(basename "$model" .gguf) np=$np"
work=$(mktemp -d "${TMPDIR:-/tmp}/r1pi-mpi-consistency.XXXXXX")
trap 'rm -rf "$work"' EXIT
base=(-m "$model" -p "Once upon a time, in a land far away, there lived" -n 24 -c 256 --check-ranks)

# same REF_SHA NAME ARGS...: a run whose sha must equal REF_SHA.
same() {
  local want=$1 name=$2
  shift 2
  run "$name" "$@"
  [ -z "$sha" ] || { [ "$sha" = "$want" ] && pass "$name gives the same sha256" || fail "$name: sha256 $sha != $want"; }
}

run greedy-t1 --temp 0 -t 1
ref=$sha
[ -n "$ref" ] || die "the reference run failed"
grep -q "^run: $np rank" "$work/greedy-t1.log" || fail "the banner does not say $np rank(s)"
same "$ref" greedy-t2 --temp 0 -t 2
every_configuration && same "$ref" greedy-t3 --temp 0 -t 3
same "$ref" greedy-batch3 --temp 0 -t 1 -b 3
every_configuration && same "$ref" greedy-repeat --temp 0 -t 1
if [ "$np" -gt 1 ]; then
  chosen=$(sed -n 's/^sync: auto chose \([a-z]*\) (per sync of [0-9]* values, .* ms)$/\1/p' "$work/greedy-t1.log")
  if [ -n "$chosen" ] && grep -q "^sync: $chosen of Q8_0 partial sums" "$work/greedy-t1.log"; then
    pass "--sync auto chose $chosen and used it"
  else
    fail "--sync auto: no choice, or another method used"
    show "$work/greedy-t1.log"
  fi
  every_configuration && same "$ref" greedy-allgather --temp 0 -t 1 --sync allgather
  every_configuration && same "$ref" greedy-allreduce --temp 0 -t 1 --sync allreduce
  same "$ref" greedy-allreduce-t2 --temp 0 -t 2 --sync allreduce
  same "$ref" greedy-direct --temp 0 -t 1 --sync direct
  same "$ref" greedy-from-root --temp 0 -t 1 --weights-from-root
  grep -q "^rank $((np - 1)): shard [0-9.]* MB, KV cache [0-9.]* MB, peak RSS [0-9.]* MB$" \
    "$work/greedy-from-root.log" && pass "memory report lists rank $((np - 1))" \
    || fail "no memory report line for rank $((np - 1))"
fi
# Sampling: a high temperature, so that even a model with widely spread logits samples.
for sampling in "top-k 40" "top-k 0"; do
  k=${sampling#top-k }
  name=sampled-k$k
  sopts=(--temp 30 --top-k "$k" --top-p 1 --seed 42)
  run "$name" "${sopts[@]}" -t 1
  [ -n "$sha" ] || continue
  sampled=$sha
  [ "$sampled" != "$ref" ] || fail "$name gave the greedy tokens (sampling not in effect?)"
  [ "$k" = 0 ] || every_configuration || continue  # top-k 0's twin sends every row: the larger path
  if [ "$np" -gt 1 ]; then
    same "$sampled" "$name-other" "${sopts[@]}" -t 2 -b 5 --sync allreduce --weights-from-root
  else
    same "$sampled" "$name-other" "${sopts[@]}" -t 2 -b 5
  fi
done
finish
