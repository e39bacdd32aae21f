#!/usr/bin/env bash
# Emulated cluster of N boards in network namespaces, joined by a bridge ("switch") in one more
# namespace. The test subnet exists only inside these namespaces; the root namespace is untouched.
#
#   netns.sh up PREFIX N      namespaces PREFIX0..PREFIX{N-1} (eth0 = 10.79.0.1i/24) and PREFIXsw
#                             (bridge br0 = 10.79.0.1/24, ports p0..p{N-1})
#   netns.sh down PREFIX      ends the processes left inside them (by PID), deletes the namespaces
#   netns.sh clean-stale      the same for every r1pi-<kind>-<pid>- set whose creator PID is gone
#   netns.sh probe            exits 0 when namespaces and veths can be made here
#   netns.sh addr I|sw        prints node I's address (10.79.0.1i), or the bridge's (10.79.0.1)
# Callers name their sets r1pi-<kind>-$$- (their own PID) so that clean-stale can tell live from dead.
#
# Deleting a namespace removes its veths and the bridge. Requires root and iproute2.
set -euo pipefail
export PATH=$PATH:/usr/sbin:/sbin   # ip, slurmd, slurmctld, munged live there

SUBNET=${R1PI_NETNS_SUBNET:-10.79.0}

node_addr() { if [ "$1" = sw ]; then echo "$SUBNET.1"; else echo "$SUBNET.$((10 + $1))"; fi; }

ns_exists() { ip netns list | awk '{print $1}' | grep -qx -- "$1"; }

# Ends the processes still running inside namespace $1 (ours: only our namespaces reach here).
kill_inside() {
  local ns=$1 pids
  pids=$(ip netns pids "$ns" 2>/dev/null || true)
  [ -z "$pids" ] && return 0
  kill -TERM $pids 2>/dev/null || true
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -z "$pids" ] && return 0
    sleep 0.2
  done
  kill -KILL $pids 2>/dev/null || true
}

down() {
  local prefix=$1 ns
  for ns in $(ip netns list | awk '{print $1}' | grep -E "^${prefix}([0-9]+|sw)$" || true); do
    kill_inside "$ns"
    ip netns del "$ns" 2>/dev/null || true
  done
}

up() {
  local prefix=$1 n=$2 i ns sw=${1}sw
  down "$prefix"
  ip netns add "$sw"
  ip netns exec "$sw" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
  ip -n "$sw" link set lo up
  ip -n "$sw" link add br0 type bridge
  ip -n "$sw" addr add "$SUBNET.1/24" dev br0
  ip -n "$sw" link set br0 up
  for i in $(seq 0 $((n - 1))); do
    ns=$prefix$i
    ip netns add "$ns"
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip -n "$sw" link add "p$i" type veth peer name eth0 netns "$ns"
    ip -n "$sw" link set "p$i" master br0
    ip -n "$sw" link set "p$i" up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$(node_addr "$i")/24" dev eth0
    ip -n "$ns" link set eth0 up
  done
}

# True when PID runs (a zombie, never reaped, counts as gone).
alive() { kill -0 "$1" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }

clean_stale() {
  local prefix pid
  for prefix in $(ip netns list | awk '{print $1}' | sed -nE 's/^(r1pi-[a-z]+-([0-9]+)-)([0-9]+|sw)$/\1/p' | sort -u); do
    pid=$(echo "$prefix" | sed -E 's/^r1pi-[a-z]+-([0-9]+)-$/\1/')
    if ! alive "$pid"; then
      echo "netns.sh: removing leftover namespaces ${prefix}* (creator $pid is gone)" >&2
      down "$prefix"
    fi
  done
}

# Can this process create a namespace with a veth pair? (root in a container may not.)
probe() {
  local ns="r1pi-probe-$$"
  ip netns add "$ns" 2>/dev/null || return 1
  local ok=0
  ip -n "$ns" link add p0 type veth peer name p1 2>/dev/null || ok=1
  ip netns del "$ns" 2>/dev/null || true
  return $ok
}

case "${1:-}" in
  up) up "$2" "$3" ;;
  down) down "$2" ;;
  clean-stale) clean_stale ;;
  addr) node_addr "$2" ;;
  probe) probe ;;
  *) echo "usage: $0 up PREFIX N | down PREFIX | clean-stale | probe | addr I|sw" >&2; exit 2 ;;
esac
