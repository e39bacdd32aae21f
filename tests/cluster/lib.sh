# Sourced by the cluster tests (after setting TEST_NAME): PASS/FAIL lines, a scratch folder
# $work removed at exit, and fake boards, a proc/ and sys/ that r1pi-cluster reads with --root.
set -euo pipefail
failures=0
pass() { echo "PASS: $TEST_NAME: $*"; }
fail() { echo "FAIL: $TEST_NAME: $*"; failures=$((failures + 1)); }
finish() {
  if [ "$failures" -eq 0 ]; then echo "PASS: $TEST_NAME (all checks)"; exit 0; fi
  echo "FAIL: $TEST_NAME: $failures check(s) failed"
  exit 1
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# bad WHAT PATTERN ARGS...: $bin/r1pi-cluster ARGS must fail, saying PATTERN.
bad() {
  local what=$1 pattern=$2
  shift 2
  rc=0
  out=$("$bin/r1pi-cluster" "$@" 2>&1) || rc=$?
  if [ "$rc" -ne 0 ] && echo "$out" | grep -q -E -- "$pattern"; then pass "$what: exit $rc, '$pattern'"; else
    fail "$what: exit $rc"; echo "$out" | sed 's/^/    | /'; fi
}

# board NAME KEY=VALUE...: a fake Raspberry Pi 5 under $work/NAME (governor, temp in millidegrees,
# avail and swap_total / swap_free in kB, throttled as vcgencmd prints it), healthy unless told.
board() {
  local name=$1 governor=performance temp=45000 avail=8000000 swap_total=0 swap_free=0 throttled=0x0
  shift
  local kv
  for kv in "$@"; do local "${kv?}"; done
  local root=$work/$name
  mkdir -p "$root/proc" "$root/sys/devices/system/cpu/cpu0/cpufreq" "$root/sys/class/thermal/thermal_zone0" "$root/bin"
  printf 'processor\t: 0\nCPU part\t: 0xd0b\n\nModel\t\t: Raspberry Pi 5 Model B Rev 1.0\n' >"$root/proc/cpuinfo"
  printf 'MemTotal: 8245000 kB\nMemAvailable: %s kB\nSwapTotal: %s kB\nSwapFree: %s kB\n' \
    "$avail" "$swap_total" "$swap_free" >"$root/proc/meminfo"
  echo 0-3 >"$root/sys/devices/system/cpu/online"
  echo "$governor" >"$root/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"
  echo 2400000 >"$root/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq"
  echo 2400000 >"$root/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"
  echo "$temp" >"$root/sys/class/thermal/thermal_zone0/temp"
  printf '#!/bin/sh\necho throttled=%s\n' "$throttled" >"$root/bin/vcgencmd"
  chmod +x "$root/bin/vcgencmd"
}

# make_fake_ssh: $work/fake-ssh HOST COMMAND, a stand-in for ssh that runs COMMAND here on board
# HOST's files: its bin/ for the folder every board shares ($bin), its model.gguf for the shared
# model path ($model), and for r1pi-cluster's check its proc/ and sys/ (--root); paths are
# rewritten on the way in and back on the way out. "down" cannot be reached, nor a board without
# a folder.
make_fake_ssh() {
  cat >"$work/fake-ssh" <<SSH
#!/bin/bash
host=\$1 command=\$2 board=$work/\$1
[ "\$host" != down ] || { echo "ssh: connect to host down port 22: No route to host" >&2; exit 255; }
[ -d "\$board" ] || { echo "ssh: Could not resolve hostname \$host" >&2; exit 255; }
case "\$command" in *"r1pi-cluster' check"*) command="\$command --root \$board" ;; esac
command=\${command//"$bin"/\$board/bin}
command=\${command//"$model"/\$board/model.gguf}
back() { sed -e "s|\$board/bin|$bin|g" -e "s|\$board/model.gguf|$model|g"; }
err=\$(mktemp)
PATH=\$board/bin:\$PATH bash -c "\$command" 2>"\$err" | back
status=\${PIPESTATUS[0]}
back <"\$err" >&2
rm -f "\$err"
exit "\$status"
SSH
  chmod +x "$work/fake-ssh"
}
