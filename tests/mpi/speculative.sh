#!/usr/bin/env bash
# speculative.sh MODEL NP: speculative decoding on NP ranks gives plain decoding's sha256.
#   - greedy: --no-spec against --spec with a flat cost curve (every continuation the history offers
#     is drafted and verified), also with -t 2 and another batch size, and with the curve measured
#     at start-up (the default);
#   - sampled (--temp 1.5, --seed 42, --top-k 40 and --top-k 0): --no-spec against --spec, flat;
#   - with the repetition penalties, greedy and sampled: --no-spec against --spec, flat;
#   - the runs that speculate print a spec: line with drafts (and with --timings a line per step
#     whose drafts add up to it), and with --check-ranks every rank
#     held the same hidden states after every layer of every forward, verifications included.
#   Under a sanitizer (lib.sh's every_configuration) the sampled runs take top-k 0 only, and the
#   penalised ones are sampled only.
# MODEL: a file in $R1PI_MPI_MODELS, or a path.
source "$(dirname "$0")/lib.sh"
model=${1:?usage: speculative.sh MODEL NP}
[[ $model == /* ]] || model=$R1PI_MPI_MODELS/$model
np=${2:?usage: speculative.sh MODEL NP}
TEST_NAME="mpi speculative $(basename "$model" .gguf) np=$np"
work=$(mktemp -d "${TMPDIR:-/tmp}/r1pi-mpi-spec.XXXXXX")
trap 'rm -rf "$work"' EXIT
printf '1 1\n16 1\n' >"$work/flat.txt"
base=(-m "$model" -p "Once upon a time" -n 150 -c 256 --check-ranks)
flat=(--spec --spec-cost "$work/flat.txt" --spec-max 6)

# same REF NAME ARGS...: a speculating run whose sha must equal REF, and which drafted.
same() {
  local want=$1 name=$2
  shift 2
  run "$name" "$@"
  [ -n "$sha" ] || return 0
  [ "$sha" = "$want" ] && pass "$name gives plain decoding's sha256" || fail "$name: sha256 $sha != $want"
  grep -Eq '^spec: drafted [1-9][0-9]*, accepted [0-9]+' "$work/$name.log" ||
    fail "$name: no spec: line with drafts"
}

run greedy-plain --temp 0 --no-spec -t 1
ref=$sha
[ -n "$ref" ] || die "the plain greedy run failed"
grep -q '^spec: ' "$work/greedy-plain.log" && fail "--no-spec printed a spec: line"
same "$ref" greedy-spec --temp 0 "${flat[@]}" -t 1 --timings
# --timings: a line per step with a draft, as many as the summary's drafts add up to.
# (grep -a: a random model's text may hold any byte; -o: stdout's text may share the line.)
drafted=$(grep -ao 'spec step: drafted [0-9]*' "$work/greedy-spec.log" | awk '{ s += $4 } END { print s + 0 }')
total=$(grep -a '^spec: drafted ' "$work/greedy-spec.log" | sed -n 's/^spec: drafted \([0-9]*\),.*/\1/p')
[ -n "$total" ] && [ "${drafted:-0}" = "$total" ] && pass "--timings shows every step's draft ($total tokens)" ||
  fail "--timings: the spec step lines add up to ${drafted:-0} drafted tokens, the summary says '$total'"
same "$ref" greedy-spec-t2-b3 --temp 0 "${flat[@]}" -t 2 -b 3
run greedy-spec-measured --temp 0 -t 1
[ -z "$sha" ] || { [ "$sha" = "$ref" ] && pass "greedy with the measured cost curve: same sha256" ||
  fail "greedy with the measured cost curve: sha256 $sha != $ref"; }
ks=(40 0)
every_configuration || ks=(0)  # under a sanitizer: top-k 0, the path with every row
for k in "${ks[@]}"; do
  sopts=(--temp 1.5 --top-k "$k" --top-p 1 --seed 42)
  run "sampled-k$k-plain" "${sopts[@]}" --no-spec -t 1
  [ -n "$sha" ] || continue
  [ "$sha" != "$ref" ] || fail "sampled-k$k gave the greedy tokens (sampling not in effect?)"
  same "$sha" "sampled-k$k-spec" "${sopts[@]}" "${flat[@]}" -b 5 -t 1
done
# The repetition penalties: each rank penalises its own vocabulary rows by the row's history
# (verification rows too), greedy and sampled, so --spec still gives plain decoding's tokens.
penalties=(--repeat-penalty 1.5 --repeat-last-n 16 --frequency-penalty 0.5 --presence-penalty 0.25)
kinds=(greedy sampled)
every_configuration || kinds=(sampled)  # under a sanitizer: the gathered candidates' path
for kind in "${kinds[@]}"; do
  sopts=(--temp 0)
  [ "$kind" = greedy ] || sopts=(--temp 1.5 --top-k 40 --top-p 1 --seed 42)
  run "penalised-$kind-plain" "${sopts[@]}" "${penalties[@]}" --no-spec -t 1
  [ -n "$sha" ] || continue
  [ "$kind" != greedy ] || [ "$sha" != "$ref" ] || fail "the penalties did not change the greedy tokens"
  same "$sha" "penalised-$kind-spec" "${sopts[@]}" "${penalties[@]}" "${flat[@]}" -b 5 -t 2
done
finish
