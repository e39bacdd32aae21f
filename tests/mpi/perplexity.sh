#!/usr/bin/env bash
# perplexity.sh NP STORIES260K: r1pi-perplexity on NP ranks (rank 0 gathers the ranks' parts of every kept row).
#   - stories260K over tests/data/story.txt in chunks of 64: a perplexity line, the saved rows'
#     size, with every rank's hidden states compared after every forward (--check-ranks ends the
#     job when they differ);
#   - the same job with other batches and threads, and with --weights-from-root, saves the same
#     bytes (KL 0, top-1 agreement 100%);
#   - one rank's rows against NP ranks': close (the Q8_0 exchange rounds), mean KL below 1e-3 and
#     top-1 agreement of 95% or more;
#   - --all-logits --tokens on the uneven preset (vocabulary 515: slices of 129/129/129/128 at NP 4)
#     keeps every position's row, the same bytes with batches of 100 and of 7.
source "$(dirname "$0")/lib.sh"
np=${1:?usage: perplexity.sh NP STORIES260K.gguf}
model=${2:?usage: perplexity.sh NP STORIES260K.gguf}
PPL=$R1PI_BIN_DIR/r1pi-perplexity
story=$R1PI_SOURCE_DIR/tests/data/story.txt
work=$(mktemp -d "${TMPDIR:-/tmp}/r1pi-mpi-perplexity.XXXXXX")
trap 'rm -rf "$work"' EXIT

# same_as ROWS LOG WHAT: the job compared its rows with ROWS and found them equal.
same_as() {
  if [ "$rc" -eq 0 ] && grep -q '^kl-divergence: mean 0, max 0 over ' "$2" && grep -q '^top-1 agreement: 100.00%$' "$2"; then
    pass "$3: the same rows"
  else
    fail "$3 (exit $rc)"; show "$2"
  fi
}

job "$np" "$work/base.log" "$PPL" -m "$model" -f "$story" -c 64 -b 64 -t 1 --check-ranks --save-logits "$work/base.f32"
rows=$(sed -n 's/^saved \([0-9]*\) rows of 512 logits to .*/\1/p' "$work/base.log")
if [ "$rc" -eq 0 ] && grep -Eq '^perplexity: [0-9.]+ \+/- [0-9.]+ \([0-9]+ tokens scored\)$' "$work/base.log" &&
   [ -n "$rows" ] && [ "$(stat -c %s "$work/base.f32")" -eq $((rows * 512 * 4)) ]; then
  pass "np $np: $(grep -E '^perplexity: [0-9]' "$work/base.log"), $rows rows saved"
else
  fail "np $np base run (exit $rc)"; show "$work/base.log"
fi

# Under a sanitizer (lib.sh) the reruns that check bytes, not memory, are left out.
if every_configuration; then
job "$np" "$work/batch.log" "$PPL" -m "$model" -f "$story" -c 64 -b 7 -t 2 --kl-divergence "$work/base.f32"
same_as "$work/base.f32" "$work/batch.log" "np $np, -b 7 -t 2"
fi
if [ "$np" -gt 1 ] && every_configuration; then
  job "$np" "$work/root.log" "$PPL" -m "$model" -f "$story" -c 64 --weights-from-root --kl-divergence "$work/base.f32"
  same_as "$work/base.f32" "$work/root.log" "np $np, --weights-from-root"
  job 1 "$work/one.log" "$PPL" -m "$model" -f "$story" -c 64 --kl-divergence "$work/base.f32"
  kl=$(sed -n 's/^kl-divergence: mean \([^,]*\),.*/\1/p' "$work/one.log")
  top=$(sed -n 's/^top-1 agreement: \([0-9.]*\)%$/\1/p' "$work/one.log")
  if [ "$rc" -eq 0 ] && [ -n "$kl" ] && awk -v k="$kl" -v t="$top" 'BEGIN { exit !(k < 1e-3 && t >= 95) }'; then
    pass "one rank against np $np: mean KL $kl, top-1 $top%"
  else
    fail "one rank against np $np: exit $rc, mean KL '$kl', top-1 '$top'"; show "$work/one.log"
  fi
fi

seq 1 100 | awk '{ printf "%d ", ($1 * 37) % 515 }' >"$work/ids.txt"
uneven=$R1PI_MPI_MODELS/uneven.gguf
job "$np" "$work/all.log" "$PPL" -m "$uneven" --tokens "$work/ids.txt" --all-logits -c 128 -b 100 --save-logits "$work/all.f32"
if [ "$rc" -eq 0 ] && grep -q '^saved 100 rows of 515 logits' "$work/all.log" && [ "$(stat -c %s "$work/all.f32")" -eq $((100 * 515 * 4)) ]; then
  pass "np $np --all-logits: 100 rows of 515"
else
  fail "np $np --all-logits (exit $rc)"; show "$work/all.log"
fi
if every_configuration; then
  job "$np" "$work/all7.log" "$PPL" -m "$uneven" --tokens "$work/ids.txt" --all-logits -c 128 -b 7 --save-logits "$work/all7.f32"
  if [ "$rc" -eq 0 ] && cmp -s "$work/all.f32" "$work/all7.f32"; then
    pass "np $np --all-logits: the same bytes with -b 7"
  else
    fail "np $np --all-logits -b 7 (exit $rc): other bytes"; show "$work/all7.log"
  fi
fi
finish
