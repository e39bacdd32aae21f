#!/usr/bin/env bash
# scripts/slurm/r1pi.sbatch on a private 4-node SLURM cluster must generate what mpirun does.
#
#   sbatch_test.sh R1PI R1PI_MODEL_TOOL
#
# The cluster: 4 network namespaces on a bridge (tests/netns/netns.sh), one slurmd per namespace
# (own host name, own /tmp for PMIx), slurmctld and a private munged in the bridge's namespace,
# all with private config, ports, state and logs under one work folder. The job runs over TCP.
# Every daemon is stopped by its PID on exit (and whatever is left inside the namespaces ends with
# them); leftovers of an earlier run that died are removed first. Every wait is bounded.
# Needs root, Slurm (slurmctld, slurmd, sbatch), munged, mpirun and `ip netns`; otherwise exits 77.
set -euo pipefail
export PATH=$PATH:/usr/sbin:/sbin   # ip, slurmd, slurmctld, munged live there
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
r1pi=$(realpath "${1:?usage: $0 R1PI R1PI_MODEL_TOOL}")
model_tool=$(realpath "${2:?usage: $0 R1PI R1PI_MODEL_TOOL}")
netns=$root/tests/netns/netns.sh
n=4

skip() { echo "SKIPPED: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (private munged/slurmd, network namespaces)"
for tool in slurmctld slurmd sbatch squeue sinfo scontrol munged mpirun nsenter unshare runuser timeout; do
  command -v $tool >/dev/null || skip "$tool is missing (scripts/setup installs Slurm, munge, Open MPI)"
done
command -v ip >/dev/null && ip netns list >/dev/null 2>&1 || skip "'ip netns' is not available"
"$netns" probe || skip "cannot create network namespaces here"
id munge >/dev/null 2>&1 || skip "no munge user"
# srun --mpi=pmix needs Slurm's PMIx plugin
compgen -G "/usr/lib/*/slurm*/mpi_pmix*.so" >/dev/null || compgen -G "/usr/lib*/slurm*/mpi_pmix*.so" >/dev/null || skip "Slurm's mpi_pmix plugin is missing"

# ---- leftovers of runs that died (namespaces and their processes; work folders) ----
"$netns" clean-stale
for d in /var/tmp/r1pi-sl-*; do
  [ -d "$d" ] || continue
  pid=${d#/var/tmp/r1pi-sl-}; pid=${pid%%.*}
  if ! kill -0 "$pid" 2>/dev/null || [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = Z ]; then rm -rf "$d"; fi
done

prefix="r1pi-sl-$$-"
sw=${prefix}sw
# Not under /tmp: every slurmd gets its own tmpfs there.
work=$(mktemp -d "/var/tmp/r1pi-sl-$$.XXXXXX")
chmod 755 "$work"
# The nodes see a private /tmp, so a build tree under /tmp is invisible to them: run a copy.
cp "$r1pi" "$work/r1pi"
r1pi="$work/r1pi"
job=""
stop_daemons() {  # TERM every daemon named in a pid file at once, then wait (bounded), then KILL
  local f pids="" pid
  for f in "$@"; do [ -s "$f" ] && pids="$pids $(cat "$f")"; done
  [ -n "$pids" ] || return 0
  kill -TERM $pids 2>/dev/null || true
  for _ in $(seq 1 50); do
    local alive=""
    for pid in $pids; do kill -0 "$pid" 2>/dev/null && alive="$alive $pid"; done
    [ -z "$alive" ] && return 0
    sleep 0.2
  done
  kill -KILL $alive 2>/dev/null || true
}
cleanup() {
  local status=$?
  trap - EXIT
  if [ -n "$job" ]; then slurm scancel "$job" >/dev/null 2>&1 || true; fi
  if [ $status -ne 0 ] && [ $status -ne 77 ] && [ -d "$work/log" ]; then
    echo "---- logs ----"; tail -n 15 "$work"/log/* "$work"/munge/munged.log 2>/dev/null || true
  fi
  stop_daemons "$work"/run/slurmd.*.pid "$work/run/slurmctld.pid" "$work/munge/munged.pid"
  "$netns" down "$prefix" || true
  rm -rf "$work"
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM
start=$SECONDS

# ---- the reference: mpirun, 4 ranks over shared memory ----
"$model_tool" make --preset tiny -o "$work/tiny.gguf" >/dev/null
prompt="Once upon a time"
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_orte_tmpdir_base=$work \
  timeout -k 5 120 mpirun -np $n --oversubscribe --mca mpi_yield_when_idle 1 \
  "$r1pi" -m "$work/tiny.gguf" -p "$prompt" -n 32 --temp 0 -t 1 >"$work/mpirun.out" 2>"$work/mpirun.err" || {
  echo "FAIL: mpirun reference run"; cat "$work/mpirun.err"; exit 1; }
ref_sha=$(sed -n 's/^sha256: \([0-9a-f]\{64\}\)$/\1/p' "$work/mpirun.err")
[ -n "$ref_sha" ] || { echo "FAIL: no sha256 in the mpirun run"; cat "$work/mpirun.err"; exit 1; }
echo "mpirun: sha256 $ref_sha ($((SECONDS - start)) s)"

# ---- network: 4 nodes + the switch namespace (controller side) ----
"$netns" up "$prefix" $n
ctl_addr=$("$netns" addr sw)
nodes_addr="$("$netns" addr 0)"
for i in $(seq 1 $((n - 1))); do nodes_addr="$nodes_addr,$("$netns" addr "$i")"; done

# ---- munged (own key, socket, pid, log), in the switch namespace so that stale clean-up finds it ----
mkdir -p "$work/munge" "$work/etc" "$work/state" "$work/run" "$work/log"
for i in $(seq 0 $((n - 1))); do mkdir -p "$work/spool/r1n$i"; done
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chown -R munge:munge "$work/munge"
chmod 711 "$work/munge"   # munged: the socket's folder must be searchable by all
chmod 600 "$work/munge/munge.key"
nsenter --net="/run/netns/$sw" runuser -u munge -- munged --socket="$work/munge/munge.sock" \
  --key-file="$work/munge/munge.key" --pid-file="$work/munge/munged.pid" \
  --log-file="$work/munge/munged.log" --seed-file="$work/munge/munged.seed"

conf=$work/etc/slurm.conf
cat >"$conf" <<EOF
ClusterName=r1pitest
SlurmctldHost=r1ctl($ctl_addr)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool/%n
SlurmctldPidFile=$work/run/slurmctld.pid
SlurmdPidFile=$work/run/slurmd.%n.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
MpiDefault=none
SchedulerType=sched/builtin
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=300
NodeName=r1n[0-$((n - 1))] NodeAddr=$nodes_addr CPUs=4 State=UNKNOWN
PartitionName=r1pi Nodes=r1n[0-$((n - 1))] Default=YES MaxTime=10 State=UP
EOF
export SLURM_CONF=$conf
# Clients run in the switch namespace: the only place with a route to the controller.
slurm() { timeout -k 2 20 ip netns exec "$sw" "$@"; }

# slurmctld: in the switch namespace, host name = the SlurmctldHost name. It daemonises.
nsenter --net="/run/netns/$sw" unshare --uts /bin/sh -c "hostname r1ctl && exec slurmctld -c -f '$conf'"
# slurmd per node: nsenter (ip netns exec would hide /sys/fs/cgroup), own host name, own /tmp.
for i in $(seq 0 $((n - 1))); do
  nsenter --net="/run/netns/$prefix$i" unshare --uts --mount /bin/sh -c \
    "hostname r1n$i && mount -t tmpfs tmpfs /tmp && exec slurmd -f '$conf' -N r1n$i"
done

# ---- all nodes idle (bounded) ----
idle=0
for _ in $(seq 1 150); do
  idle=$(slurm sinfo -h -N -o '%N %T' 2>/dev/null | grep -c ' idle$' || true)
  [ "$idle" -eq $n ] && break
  sleep 0.2
done
if [ "$idle" -ne $n ]; then
  echo "FAIL: only $idle of $n nodes became idle"; slurm sinfo -N -l || true; exit 1
fi
echo "slurm: $n nodes idle ($((SECONDS - start)) s)"

# ---- the job: the project's sbatch script, over TCP between the namespaces ----
job=$(cd "$work" && R1PI_BIN=$r1pi R1PI_THREADS=1 R1PI_ARGS="--temp 0" \
  OMPI_MCA_btl=tcp,self OMPI_MCA_btl_tcp_if_include=eth0 OMPI_MCA_oob_tcp_if_include=eth0 \
  OMPI_MCA_mpi_yield_when_idle=1 \
  slurm sbatch --parsable --time=2 -o "$work/job.out" -e "$work/job.err" \
  "$root/scripts/slurm/r1pi.sbatch" "$work/tiny.gguf" "$prompt" 32)
job=${job%%;*}
echo "slurm: submitted job $job"
state=""
for _ in $(seq 1 600); do   # at most ~120 s
  state=$(slurm scontrol show job "$job" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -n1)
  case "$state" in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED) break ;; esac
  sleep 0.2
done
echo "slurm: job $job $state ($((SECONDS - start)) s)"
if [ "$state" != COMPLETED ]; then
  echo "FAIL: job $job ended as '${state:-unknown}'"; cat "$work/job.out" "$work/job.err" 2>/dev/null; exit 1
fi
job=""
sha=$(sed -n 's/^sha256: \([0-9a-f]\{64\}\)$/\1/p' "$work/job.err")
status=0
grep -q "^r1pi.sbatch: job .*, 4 nodes" "$work/job.err" || { echo "FAIL: the job did not get 4 nodes"; status=1; }
grep -q '^rank 3: shard' "$work/job.err" || { echo "FAIL: no 4-rank report"; status=1; }
if [ "$sha" != "$ref_sha" ]; then
  echo "FAIL: sbatch sha256 '$sha' != mpirun '$ref_sha'"; status=1
fi
cmp -s "$work/mpirun.out" "$work/job.out" || { echo "FAIL: the job's text differs from mpirun's"; status=1; }
if [ $status -ne 0 ]; then cat "$work/job.err"; exit 1; fi
echo "sbatch: sha256 $sha, $(grep '^decode:' "$work/job.err")"
echo "PASS ($((SECONDS - start)) s)"
