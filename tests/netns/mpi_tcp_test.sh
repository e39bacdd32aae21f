#!/usr/bin/env bash
# r1pi with 4 ranks, one per network namespace, over TCP (the way 4 boards on a switch run it),
# must generate exactly what the same job generates over shared memory.
#
#   mpi_tcp_test.sh R1PI R1PI_MODEL_TOOL
#
# Needs root, `ip netns` and Open MPI; otherwise exits 77 (ctest's SKIP_RETURN_CODE).
# Builds its own namespaces (r1pi-nt-<pid>-0..3 + r1pi-nt-<pid>-sw, see netns.sh), always removed
# on exit; leftovers of an earlier run that died are removed first. Every MPI job has a timeout.
set -euo pipefail
export PATH=$PATH:/usr/sbin:/sbin   # ip, slurmd, slurmctld, munged live there
here=$(cd "$(dirname "$0")" && pwd)
r1pi=$(realpath "${1:?usage: $0 R1PI R1PI_MODEL_TOOL}")
model_tool=$(realpath "${2:?usage: $0 R1PI R1PI_MODEL_TOOL}")
job_timeout=${R1PI_NETNS_JOB_TIMEOUT:-120}
n=4

skip() { echo "SKIPPED: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces)"
command -v ip >/dev/null && ip netns list >/dev/null 2>&1 || skip "'ip netns' is not available"
"$here/netns.sh" probe || skip "cannot create network namespaces here"
command -v unshare >/dev/null || skip "unshare (util-linux) is missing"
command -v mpirun >/dev/null || skip "mpirun is missing"
command -v timeout >/dev/null || skip "timeout (coreutils) is missing"

"$here/netns.sh" clean-stale
prefix="r1pi-nt-$$-"
work=$(mktemp -d /tmp/r1pi-netns.XXXXXX)
cleanup() {
  "$here/netns.sh" down "$prefix" || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI's session directories go to our folder, not /tmp/ompi.<host>.0
export OMPI_MCA_orte_tmpdir_base=$work/ompi
mkdir -p "$work/ompi"
start=$SECONDS

"$model_tool" make --preset tiny -o "$work/tiny.gguf" >/dev/null
run_args=(-m "$work/tiny.gguf" -p "Once upon a time" -n 32 --temp 0 -t 1)

sha_of() { sed -n 's/^sha256: \([0-9a-f]\{64\}\)$/\1/p' "$1"; }

# ---- the reference: 4 ranks over shared memory ----
timeout -k 5 "$job_timeout" mpirun -np $n --oversubscribe --mca mpi_yield_when_idle 1 \
  "$r1pi" "${run_args[@]}" >"$work/shm.out" 2>"$work/shm.err" || {
  echo "FAIL: shared-memory run (status $?)"; cat "$work/shm.err"; exit 1; }
shm_sha=$(sha_of "$work/shm.err")
[ -n "$shm_sha" ] || { echo "FAIL: no sha256 line in the shared-memory run"; cat "$work/shm.err"; exit 1; }
echo "shared memory: sha256 $shm_sha ($((SECONDS - start)) s)"

# ---- 4 namespaces on a bridge; mpirun runs inside the first, the agent reaches the others ----
"$here/netns.sh" up "$prefix" $n
hosts=""
: >"$work/hostfile"
for i in $(seq 0 $((n - 1))); do
  addr=$("$here/netns.sh" addr "$i")
  echo "$addr slots=1" >>"$work/hostfile"
  hosts="$hosts $addr:$prefix$i:r1n$i"
done
export R1PI_NETNS_HOSTS=$hosts

mpirun_tcp() {
  timeout -k 5 "$job_timeout" ip netns exec "${prefix}0" unshare --uts /bin/sh -c 'hostname r1n0 && exec "$@"' sh \
    mpirun -np $n --hostfile "$work/hostfile" \
    --mca plm_rsh_agent "$here/rsh_agent.sh" --mca plm_rsh_no_tree_spawn 1 \
    --mca btl tcp,self --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 \
    --mca mpi_yield_when_idle 1 "$@"
}

# one rank per namespace
mpirun_tcp hostname >"$work/hosts.out" 2>"$work/hosts.err" || {
  echo "FAIL: mpirun over the namespaces"; cat "$work/hosts.out" "$work/hosts.err"; exit 1; }
if [ "$(sort "$work/hosts.out" | tr '\n' ' ')" != "r1n0 r1n1 r1n2 r1n3 " ]; then
  echo "FAIL: expected one rank on each of r1n0..r1n3, got:"; cat "$work/hosts.out"; exit 1
fi
echo "namespaces: one rank on each of r1n0..r1n3 ($((SECONDS - start)) s)"

status=0
for sync in allgather allreduce direct; do
  extra=()
  [ $sync = allreduce ] && extra=(--check-ranks)
  if ! mpirun_tcp "$r1pi" "${run_args[@]}" --sync $sync "${extra[@]}" >"$work/tcp.out" 2>"$work/tcp.err"; then
    echo "FAIL: TCP run --sync $sync"; cat "$work/tcp.err"; status=1; continue
  fi
  tcp_sha=$(sha_of "$work/tcp.err")
  grep -q '^rank 3: shard' "$work/tcp.err" || { echo "FAIL: no 4-rank report"; cat "$work/tcp.err"; status=1; }
  if [ "$tcp_sha" != "$shm_sha" ]; then
    echo "FAIL: TCP --sync $sync sha256 '$tcp_sha' != shared memory '$shm_sha'"; cat "$work/tcp.err"; status=1
  else
    echo "TCP --sync $sync: sha256 $tcp_sha, $(grep '^decode:' "$work/tcp.err") ($((SECONDS - start)) s)"
  fi
  cmp -s "$work/shm.out" "$work/tcp.out" || { echo "FAIL: TCP --sync $sync text differs"; status=1; }
done
[ $status -eq 0 ] && echo "PASS ($((SECONDS - start)) s)"
exit $status
