#!/usr/bin/env bash
# init.sh BIN_DIR: r1pi-cluster init over fake boards (lib.sh's stand-in for ssh runs each board's
# commands on its own bin/, the folder every board shares). Boards without r1pi, or with another
# build, get copies (the same sha256 afterwards); the same build is left as it is; another Open
# MPI, no Open MPI and an unreachable board each fail with their fix, and then no hostfile is
# written; a ready set writes it, rank 0 first, slots=1. Bad input is a clear error.
bin=$(cd "${1:?usage: init.sh BIN_DIR}" && pwd)
TEST_NAME=cluster_init
source "$(dirname "$0")/lib.sh"
model=$work/unused.gguf
make_fake_ssh
init() {  # init ARGS...: output in $out, status in $rc
  rc=0
  out=$("$bin/r1pi-cluster" init --ssh "$work/fake-ssh" "$@" 2>&1) || rc=$?
}
found() {
  if echo "$out" | grep -q -E -- "$2"; then pass "$1"; else fail "$1: no line like '$2'"; echo "$out" | sed 's/^/    | /'; fi
}
same_build() {  # same_build BOARD: its r1pi and r1pi-cluster are this build's
  cmp -s "$bin/r1pi" "$work/$1/bin/r1pi" && cmp -s "$bin/r1pi-cluster" "$work/$1/bin/r1pi-cluster"
}

mkdir -p "$work"/{i0,i1,i2,i3,i4}/bin
cp "$bin/r1pi" "$bin/r1pi-cluster" "$work/i0/bin/"    # ready
cp "$bin/r1pi" "$bin/r1pi-cluster" "$work/i2/bin/"
printf 'x' >>"$work/i2/bin/r1pi"                       # another build; i1 has none
printf '#!/bin/sh\necho "mpirun (Open MPI) 3.1.0"\n' >"$work/i3/bin/mpirun"   # another Open MPI
printf '#!/bin/sh\necho "mpirun: command not found" >&2\nexit 127\n' >"$work/i4/bin/mpirun"  # none
chmod +x "$work/i3/bin/mpirun" "$work/i4/bin/mpirun"
here=$(mpirun --version | head -n 1 | sed 's/[][().*^$+?{}|\\]/\\&/g')  # as a regular expression

init i0 i1 i2 i3 i4 down -o "$work/pis"
[ "$rc" -eq 1 ] && pass "not ready: exit 1" || fail "not ready: exit $rc"
found "i0: left as it is" "^i0: reachable, $here, r1pi the same, r1pi-cluster the same$"
found "i1: both copied" "^i1: reachable, $here, r1pi copied, r1pi-cluster copied$"
found "i2: r1pi copied" "^i2: reachable, $here, r1pi copied, r1pi-cluster the same$"
for b in i0 i1 i2; do same_build "$b" && pass "$b holds this build" || fail "$b does not hold this build"; done
[ -z "$(find "$work"/i1/bin "$work"/i2/bin -name '.*copy')" ] && pass "no temporary copies left" || fail "temporary copies left"
found "i3: another Open MPI" "fail: 'mpirun \\(Open MPI\\) 3.1.0' there, '$here' here"
found "i4: no Open MPI" "fail: no Open MPI there .*command not found"
found "i4: the fix" "fix: sudo apt install openmpi-bin on i4"
found "down: not reachable" "^down: not reachable$"
found "down: why" "fail: ssh: ssh: connect to host down port 22: No route to host"
found "down: the fix" "fix: ssh-keygen -t ed25519 .*ssh-copy-id down, then .ssh down true"
found "no hostfile" "pis not written"
[ ! -e "$work/pis" ] && pass "no hostfile written" || fail "a hostfile was written"

init i0 i1 i2 -o "$work/pis"
if [ "$rc" -eq 0 ] && [ "$(cat "$work/pis")" = "$(printf '# written by r1pi-cluster init: rank 0 first, one rank per board\ni0 slots=1\ni1 slots=1\ni2 slots=1')" ]; then
  pass "ready: exit 0, the hostfile"
else
  fail "ready: exit $rc"
  echo "$out" | sed 's/^/    | /'
fi
found "ready: all the same now" "^i1: reachable, $here, r1pi the same, r1pi-cluster the same$"

bad "a board given twice" "error: init: i0 is given twice" init i0 i1 i0
bad "no ssh client" "error: no ssh client" init i0 --ssh "$work/no-ssh"
bad "no board" "BOARDS is required" init
finish
