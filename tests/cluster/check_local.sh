#!/usr/bin/env bash
# check_local.sh BIN_DIR: r1pi-cluster check --local on fake boards (--root: a proc/ and sys/ of
# the test's making, and a vcgencmd on PATH) and on this machine. A clean Raspberry Pi 5 passes;
# each fault (governor, throttling now and since boot, heat, memory for the weights or for -c,
# swap) is found, named, and its fix printed; warnings pass only with --warn-ok; --json says the
# same; --compare sets a real run's decode beside the bound; bad input is a clear error.
bin=${1:?usage: check_local.sh BIN_DIR}
TEST_NAME=cluster_check_local
source "$(dirname "$0")/lib.sh"
"$bin/r1pi-model" make --no-progress --preset tiny --seed 3 -o "$work/tiny.gguf" >/dev/null


# check NAME ARGS...: r1pi-cluster check --local on the fake board NAME; output in $out, status in $rc.
check() {
  local name=$1
  shift
  rc=0
  out=$(PATH="$work/$name/bin:$PATH" "$bin/r1pi-cluster" check --local --root "$work/$name" -m "$work/tiny.gguf" "$@" 2>&1) || rc=$?
}

# expect NAME ROW STATUS PATTERN: the last check's row ROW has STATUS and PATTERN in it (or its fix).
expect() {
  local what=$1 row=$2 status=$3 pattern=$4
  if echo "$out" | grep -A1 -E "^$row +$status " | grep -q -E -- "$pattern"; then
    pass "$what: $row $status ($pattern)"
  else
    fail "$what: no '$row $status' row with '$pattern'"
    echo "$out" | sed 's/^/    | /'
  fi
}

board clean
check clean
if [ "$rc" -eq 0 ] && [ "$(echo "$out" | grep -c -E '^[a-z ]+ +ok ')" -eq 11 ]; then
  pass "a healthy Pi 5: 11 ok, exit 0"
else
  fail "a healthy Pi 5: exit $rc"
  echo "$out" | sed 's/^/    | /'
fi
expect clean cpu ok "Raspberry Pi 5 Model B Rev 1.0, 4 CPUs online"
expect clean clock ok "2400 of 2400 MHz"
expect clean decode ok "at most [0-9.]+ tok/s: [0-9.]+ MB read per token at [0-9.]+ GB/s"

board ondemand governor=ondemand
check ondemand
expect ondemand governor warn "echo performance \| sudo tee /sys/devices/system/cpu/cpu\*/cpufreq/scaling_governor"
[ "$rc" -eq 1 ] && pass "a warning: exit 1" || fail "a warning: exit $rc"
check ondemand --warn-ok
[ "$rc" -eq 0 ] && pass "a warning with --warn-ok: exit 0" || fail "a warning with --warn-ok: exit $rc"

board undervolted throttled=0x50005
check undervolted --warn-ok
expect undervolted throttling fail "0x50005: under-voltage or throttling now"
expect undervolted throttling fail "27 W"
[ "$rc" -eq 1 ] && pass "a failure with --warn-ok: exit 1" || fail "a failure with --warn-ok: exit $rc"
board since-boot throttled=0x50000
check since-boot
expect since-boot throttling warn "since boot"

board hot temp=86500
check hot
expect hot temperature fail "86.5 C: the CPU throttles"
expect hot temperature fail "Active Cooler"
board warm temp=81000
check warm
expect warm temperature warn "81.0 C"

board small avail=300000
check small
expect small memory fail "needed .*, 307 MB available"
expect small memory fail "a smaller -c"
check clean -c 10000000
expect "clean, -c 10000000" memory fail "KV cache [0-9]+ at -c 10000000"

board swapping swap_total=1048576 swap_free=524288
check swapping
expect swapping swap warn "537 MB in use"
expect swapping swap warn "swapoff"

# --json: the same rows.
check undervolted --json
if echo "$out" | python3 -c '
import json, sys
r = json.load(sys.stdin)
status = {c["check"]: c["status"] for c in r["checks"]}
assert status["throttling"] == "fail" and status["governor"] == "ok", status
assert len(r["checks"]) == 11 and r["predicted_tok_s"] > 0, r
assert "27 W" in next(c["fix"] for c in r["checks"] if c["check"] == "throttling")
'; then
  pass "--json: the rows, statuses, fixes and the prediction"
else
  fail "--json"
  echo "$out" | sed 's/^/    | /'
fi

# --compare: a real run's decode forwards (r1pi --timings) beside the bound.
"$bin/r1pi" -m "$work/tiny.gguf" -p "Once upon a time" -n 24 --ignore-eos --temp 0 -t 1 --timings "$work/run.csv" >/dev/null 2>&1
check clean --compare "$work/run.csv"
expect "--compare" measured ok "^.*measured +ok +2[0-9] decode forwards: Pred [0-9.]+ \+ Sync 0.00 ms per token \([0-9.]+ tok/s\), the read rate's bound [0-9.]+ ms \([0-9]+% of Pred\): held by (memory|compute)"
[ "$rc" -eq 0 ] && pass "--compare: exit 0" || fail "--compare: exit $rc"
head -n 1 "$work/run.csv" >"$work/header.csv"

# Bad input.
bad "a model that is a folder" "error: .*: is a folder, not a GGUF file" check --local -m "$work"
echo "not a model" >"$work/text.gguf"
bad "a file that is not GGUF" "error: .*text.gguf" check --local -m "$work/text.gguf"
bad "no model" "model is required" check --local
bad "boards over ssh" "give --local" check -m "$work/tiny.gguf"
bad "a root that is no folder" "root" check --local --root "$work/none" -m "$work/tiny.gguf"
bad "--compare with a file that is no CSV" "error: .*text.gguf: not a --timings CSV" check --local -m "$work/tiny.gguf" --compare "$work/text.gguf"
bad "--compare without a decode forward" "error: .*header.csv: no decode forward" check --local -m "$work/tiny.gguf" --compare "$work/header.csv"

# This machine: every row there, whatever its verdicts.
rc=0
out=$("$bin/r1pi-cluster" check --local -m "$work/tiny.gguf" 2>&1) || rc=$?
if [ "$(echo "$out" | grep -c -E '^[a-z ]+ +(ok|warn|fail) ')" -eq 11 ] && echo "$out" | grep -q "^decode .*tok/s"; then
  pass "this machine: 11 rows (exit $rc)"
else
  fail "this machine: exit $rc"
  echo "$out" | sed 's/^/    | /'
fi

finish
