#!/usr/bin/env bash
# bench.sh: r1pi-bench and `r1pi --timings FILE.csv` on 2 ranks of the tiny preset.
#   - r1pi-bench reports every test without error, with rank 0's Pred and Sync columns, and the
#     ids of a test do not depend on the thread count;
#   - a bad list fails the whole job with error: (the first collective), no hang;
#   - r1pi's timings file has one row per forward, and every decode row moved the same non-zero
#     bytes (the Q8_0 partial sums of one token: a size, not a time).
source "$(dirname "$0")/lib.sh"
model=$R1PI_MPI_MODELS/tiny.gguf
BENCH=$R1PI_BIN_DIR/r1pi-bench
work=$(mktemp -d "${TMPDIR:-/tmp}/r1pi-mpi-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

job 2 "$work/md.log" "$BENCH" -m "$model" -p 16 -n 8 -t 1 -r 2
if [ "$rc" -eq 0 ] && grep -q '| Pred ms/tok | Sync ms/tok | GB/s/rank |' "$work/md.log" &&
   grep -Eq '^\| llama .* \| 2 \| 1 \| 64 \| tg8 \| [0-9.]+ ± [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|$' "$work/md.log"; then
  pass "np 2 table with Pred and Sync columns"
else
  fail "np 2 table (exit $rc)"; show "$work/md.log"
fi

"$MPIRUN_WRAPPER" -np 2 -- "$BENCH" -m "$model" -p 16 -n 8 -pg 8,4 -t 1,2 -r 2 -o jsonl >"$work/out.jsonl" 2>"$work/jsonl.log" || rc=$?
rows=$(wc -l <"$work/out.jsonl")
errors=$(grep -vc '"error":""' "$work/out.jsonl" || true)
distinct=$(sed -n 's/.*"test":"\([^"]*\)".*"sha256":"\([0-9a-f]*\)".*/\1 \2/p' "$work/out.jsonl" | sort -u | wc -l)
if [ "$rows" -eq 6 ] && [ "$errors" -eq 0 ] && [ "$distinct" -eq 3 ] && grep -q '"n_ranks":2' "$work/out.jsonl"; then
  pass "np 2 jsonl: 6 tests, no error, one sha256 per test for -t 1 and 2"
else
  fail "np 2 jsonl: $rows rows, $errors with an error, $distinct test/sha pairs"; show "$work/out.jsonl"; show "$work/jsonl.log"
fi

job 2 "$work/bad.log" "$BENCH" -m "$model" -t 0
if [ "$rc" -eq 1 ] && grep -q '^error: rank 0: -t' "$work/bad.log"; then
  pass "a bad list ends the job with error:"
else
  fail "bad list: exit $rc"; show "$work/bad.log"
fi

job 2 "$work/timings.log" "$R1PI" -m "$model" -p "Once upon a time" -n 6 --temp 0 -t 1 --ignore-eos --timings "$work/t.csv"
decode_bytes=$(awk -F, 'NR > 2 && $2 == 1 {print $5 "/" $6}' "$work/t.csv" | sort -u)
if [ "$rc" -eq 0 ] && [ "$(head -1 "$work/t.csv")" = "pos,tokens,pred_ms,sync_ms,sent_bytes,recv_bytes,accepted" ] &&
   [ "$(awk 'END {print NR}' "$work/t.csv")" -eq 7 ] && [ "$(echo "$decode_bytes" | wc -l)" -eq 1 ] &&
   [ "${decode_bytes%%/*}" -gt 0 ]; then
  pass "np 2 --timings FILE.csv: 6 forwards, each decode token sent and received $decode_bytes bytes"
else
  fail "np 2 --timings FILE.csv (exit $rc, decode bytes '$decode_bytes')"; show "$work/t.csv"; show "$work/timings.log"
fi
finish
