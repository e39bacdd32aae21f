#!/usr/bin/env bash
# check_hostfile.sh BIN_DIR: r1pi-cluster check --hostfile over fake boards. Its --ssh is a stand-in
# that runs the board's command here, on the board's own files: its fake proc/ and sys/ (--root),
# its copies of r1pi and r1pi-cluster in the folder every board shares (BIN_DIR), its model at the
# shared model path (the paths are rewritten on the way in and back on the way out), and "down"
# cannot be reached. Each fault is found on its board, named, and its fix printed: a different
# r1pi, no model, another model of the same size, the governor, an unreachable board, no
# r1pi-cluster; a clean cluster of four passes and gets a decode bound; bad input is a clear error.
bin=$(cd "${1:?usage: check_hostfile.sh BIN_DIR}" && pwd)
TEST_NAME=cluster_check_hostfile
source "$(dirname "$0")/lib.sh"
model=$work/shared/model.gguf  # the path every board has its model at
mkdir -p "$work/shared"
"$bin/r1pi-model" make --no-progress --preset tiny --seed 3 -o "$model" >/dev/null
"$bin/r1pi-model" make --no-progress --preset tiny --seed 8 -o "$work/other.gguf" >/dev/null
[ "$(stat -c %s "$model")" = "$(stat -c %s "$work/other.gguf")" ] || { echo "FAIL: $TEST_NAME: the two models differ in size"; exit 1; }

# pi NAME [KEY=VALUE...]: a board with rank 0's r1pi, r1pi-cluster and model (board's options apply).
pi() {
  board "$@"
  cp "$bin/r1pi" "$bin/r1pi-cluster" "$work/$1/bin/"
  cp "$model" "$work/$1/model.gguf"
}
make_fake_ssh

cluster() {  # cluster HOSTFILE ARGS...: the check (of $model unless ARGS give -m); $out, $rc, $secs
  local start=$SECONDS m=(-m "$model")
  [[ " ${*:2} " != *" -m "* ]] || m=()
  rc=0
  out=$("$bin/r1pi-cluster" check --hostfile "$1" "${m[@]}" --ssh "$work/fake-ssh" "${@:2}" 2>&1) || rc=$?
  secs=$((SECONDS - start))
}
found() {  # found WHAT PATTERN: the last output has a line matching PATTERN
  if echo "$out" | grep -q -E -- "$2"; then pass "$1"; else fail "$1: no line like '$2'"; echo "$out" | sed 's/^/    | /'; fi
}

pi pi0
pi pi1
printf 'x' >>"$work/pi1/bin/r1pi"  # another build
pi pi2
rm "$work/pi2/model.gguf"          # no model
pi pi3
cp "$work/other.gguf" "$work/pi3/model.gguf"  # another model of the same size
pi pi4 governor=ondemand
pi pi5
rm "$work/pi5/bin/r1pi-cluster"    # no r1pi-cluster
printf 'pi0 slots=1\npi1 slots=1\npi2 slots=1\n# a comment\n\npi3\npi4 slots=1\ndown slots=1\npi5 slots=1\n' >"$work/faults"
cluster "$work/faults"
[ "$rc" -eq 1 ] && pass "faults: exit 1" || fail "faults: exit $rc"
found "pi0 is clean" "^pi0 +ok( +ok)+ *$"
found "pi1: another r1pi, with the copy to make" "^pi1 same r1pi fail: sha256 [0-9a-f]{12}, pi0's [0-9a-f]{12}"
found "pi1: the fix" "fix: rsync -a $bin/r1pi pi1:$bin/"
found "pi2: no model, named with its fix" "^pi2 check fail: .*$model"
found "pi2: the fix" "fix: the model at the same path on every board: rsync -a $model pi2:$model"
found "pi3: another model of the same size" "^pi3 same model fail: another file at $model than pi0's \\(fingerprint"
found "pi4: the governor" "^pi4 governor warn: ondemand"
found "down: unreachable, with ssh-copy-id" "^down reachable fail: ssh could not reach it or log in: ssh: connect to host down"
found "down: the fix" "fix: ssh-keygen .*ssh-copy-id down, then .ssh down true"
found "pi5: no r1pi-cluster" "^pi5 check fail: no r1pi-cluster at $bin there"
found "no bound with boards unchecked" "^no decode bound: not every board was checked"
found "the count" "^7 boards, [0-9]+ warnings?, [0-9]+ failures"
cluster "$work/faults" --json
if echo "$out" | python3 -c '
import json, sys
r = json.load(sys.stdin)
boards = {b["board"]: b for b in r["boards"]}
status = lambda b, c: next(x["status"] for x in boards[b]["checks"] if x["check"] == c)
assert status("pi1", "same r1pi") == "fail" and status("pi3", "same model") == "fail", r
assert status("down", "reachable") == "fail" and boards["down"]["reachable"] is False
assert "error" in boards["pi2"] and r["prediction"] is None
'; then pass "--json: the same findings"; else fail "--json"; echo "$out" | sed 's/^/    | /'; fi

for n in 0 1 2 3; do pi "c$n"; done
printf 'c0 slots=1\nc1 slots=1\nc2 slots=1\nc3 slots=1\n' >"$work/clean"
cluster "$work/clean"
if [ "$rc" -eq 0 ] && [ "$(echo "$out" | grep -c -E '^c[0-3] +ok( +ok)+ *$')" -eq 4 ]; then
  pass "a clean cluster of 4: exit 0, every check ok ($secs s)"
else
  fail "a clean cluster: exit $rc"
  echo "$out" | sed 's/^/    | /'
fi
found "the decode bound and the slowest board" "^decode at most [0-9.]+ tok/s on 4 boards with even shares \\(c[0-3], the slowest reader, holds the others back\\), [0-9.]+ with --shard-weights auto"

printf 'pi0 slots=x\n' >"$work/unparsed"
bad "a hostfile that does not parse" "error: .*unparsed:1: 'slots=x' is not a hostfile option" check --hostfile "$work/unparsed" -m "$model"
printf 'pi0\npi1\npi0 slots=1\n' >"$work/twice"
bad "a board listed twice" "error: .*twice:3: pi0 is listed twice" check --hostfile "$work/twice" -m "$model"
bad "no ssh client" "error: no ssh client: '$work/no-ssh' is not on PATH" check --hostfile "$work/clean" -m "$model" --ssh "$work/no-ssh"
bad "--local and --hostfile" "give --local .* or --hostfile" check --local --hostfile "$work/clean" -m "$model"
bad "--compare with --hostfile" "--compare goes with --local" check --hostfile "$work/clean" -m "$model" --compare "$work/clean"
cluster "$work/clean" -m "$work"
found "a model path that is a folder: each board says so" "^c0 check fail: error: $work: is a folder, not a GGUF file"

finish
