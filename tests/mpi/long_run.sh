#!/usr/bin/env bash
# long_run.sh TOKENS [NP [LIMIT_S]]: a long generation on NP (default 4) ranks of the tiny preset, greedy,
# until the context is full (-c = prompt + TOKENS - 1, so TOKENS tokens are generated).
#   - the run ends cleanly: exit 0, "generated: TOKENS tokens (stop: context full)", a sha256;
#   - RSS stays bounded: every rank's VmRSS, sampled from /proc every 0.2 s, grows by at most
#     its KV cache (r1pi's "rank <r>: ... KV cache <MB> MB" line) and $R1PI_LONG_RSS_SLACK_MB
#     (default 4) from the first sample after generation starts to the last, and each rank's peak
#     RSS (the same line's "peak RSS") exceeds that of a 64-token run with the same context by at
#     most the same: the KV cache is mapped at start and its pages are taken as positions fill, so
#     a long run may hold its cache where a short one held part of it, and nothing more.
# ctest runs mpi_long_run with 2,000 tokens (CI); mpi_long_run_full (label long, excluded from CI)
# with the issue's 10,000.
source "$(dirname "$0")/lib.sh"
tokens=${1:?usage: long_run.sh TOKENS [NP [LIMIT_S]]}
np=${2:-4}
limit=${3:-1000}  # hard limit of the long job (a hang fails, it does not block ctest)
slack_kb=$((${R1PI_LONG_RSS_SLACK_MB:-4} * 1024))
TEST_NAME="mpi long run $tokens tokens np=$np"
work=$(mktemp -d "${TMPDIR:-/tmp}/r1pi-mpi-long.XXXXXX")
trap 'rm -rf "$work"' EXIT
prompt="Once upon a time"
# The byte vocabulary: BOS + one token per byte.
n_prompt=$((1 + ${#prompt}))
ctx=$((n_prompt + tokens - 1))
model=$work/tiny-long.gguf
"$R1PI_BIN_DIR/r1pi-model" make --no-progress --preset tiny --seed 7 --ctx "$ctx" -o "$model" >/dev/null \
  || die "r1pi-model make failed"
args=(-m "$model" -p "$prompt" -c "$ctx" --temp 0 -t 1)

# rank_peaks LOG: "r kB" per rank from the memory lines; rank_kv LOG: "r kB" of each rank's KV cache.
rank_peaks() { sed -n 's/^rank \([0-9]*\): shard .* peak RSS \([0-9.]*\) MB$/\1 \2/p' "$1" |
  awk '{printf "%d %d\n", $1, $2 * 1000 / 1.024}'; }
rank_kv() { sed -n 's/^rank \([0-9]*\): shard .* KV cache \([0-9.]*\) MB, .*$/\1 \2/p' "$1" |
  awk '{printf "%d %d\n", $1, $2 * 1000 / 1.024 + 1}'; }

# The short run: peak RSS with the same context.
JOB_TIMEOUT=120 job "$np" "$work/short.log" "$R1PI" "${args[@]}" -n 64
[ "$rc" -eq 0 ] || { show "$work/short.log"; die "the 64-token run failed (exit $rc)"; }

# The long run, with /proc sampling of the ranks. timeout starts scripts/mpirun, which execs mpirun;
# the ranks are mpirun's children.
log=$work/long.log samples=$work/rss
parent_of() { local f; { f=$(<"/proc/$1/stat"); } 2>/dev/null || return 0; f=${f##*) }; read -r _ f _ <<<"$f"; echo "$f"; }
start=$SECONDS
: >"$log"  # before the background start: the polls below must not race the child's redirection
timeout -s KILL "$limit" "$MPIRUN_WRAPPER" -np "$np" -- "$R1PI" "${args[@]}" -n -1 >"$log" 2>&1 &
timeout_pid=$!
declare -A rank_pid=()
: >"$samples"
while kill -0 $timeout_pid 2>/dev/null; do
  if [ ${#rank_pid[@]} -lt "$np" ] && grep -q '^run: ' "$log"; then
    # Once generation has started: find the ranks (grandchildren of timeout).
    for stat in /proc/[0-9]*/stat; do
      pid=${stat#/proc/}; pid=${pid%/stat}
      ppid=$(parent_of "$pid"); [ -n "$ppid" ] || continue
      [ "$(parent_of "$ppid")" = "$timeout_pid" ] || continue
      rank=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
      [ -n "$rank" ] && rank_pid[$rank]=$pid
    done
  fi
  for rank in "${!rank_pid[@]}"; do
    { while read -r key value _; do
        [ "$key" = "VmRSS:" ] && echo "$rank $value" >>"$samples" && break
      done <"/proc/${rank_pid[$rank]}/status"; } 2>/dev/null || true  # a rank that has just ended
  done
  sleep 0.2
done
rc=0
wait $timeout_pid || rc=$?
secs=$((SECONDS - start))
echo "  long run: ${secs}s, exit $rc, $(wc -l <"$samples") RSS samples; CPU time of this script's jobs (user, system):"
times >"$work/times"
tail -n 1 "$work/times" | sed 's/^/    /'
if [ "$rc" -eq 137 ]; then show "$log"; die "hung: killed after ${limit}s"; fi
[ "$rc" -eq 0 ] && pass "exit status 0" || { fail "exit status $rc"; show "$log"; }
grep -qx "generated: $tokens tokens (stop: context full)" "$log" \
  && pass "generated $tokens tokens, stop: context full" \
  || { fail "no 'generated: $tokens tokens (stop: context full)' line"; grep '^generated:' "$log" || show "$log"; }
[ -n "$(sha_of "$log")" ] && pass "printed a sha256" || fail "no sha256 line"
grep -q '^error' "$log" && fail "an error line: $(grep -m1 '^error' "$log")" || true
grep '^decode:' "$log" | sed 's/^/  /' || true

# RSS over the run, per rank: growth within the rank's KV cache and the slack.
declare -A kv_kb
while read -r r kb; do kv_kb[$r]=$kb; done < <(rank_kv "$log")
for ((r = 0; r < np; r++)); do
  bound=$((slack_kb + ${kv_kb[$r]:-0}))
  first=$(awk -v r=$r '$1 == r {print $2; exit}' "$samples")
  last=$(awk -v r=$r '$1 == r {v = $2} END {print v}' "$samples")
  max=$(awk -v r=$r '$1 == r && $2 > m {m = $2} END {print m}' "$samples")
  n=$(awk -v r=$r '$1 == r {n++} END {print n + 0}' "$samples")
  if [ "$n" -lt 3 ]; then fail "rank $r: only $n RSS samples"; continue; fi
  echo "  rank $r: VmRSS first ${first} kB, last ${last} kB, max ${max} kB ($n samples)"
  [ -n "${kv_kb[$r]:-}" ] || fail "rank $r: no KV cache size in the memory lines"
  [ $((max - first)) -le "$bound" ] && pass "rank $r: RSS grew by $((max - first)) kB, within the KV cache and slack ($bound kB)" \
    || fail "rank $r: RSS grew by $((max - first)) kB during the run (bound: $bound kB)"
done
# Peak RSS of the long run against the short one.
declare -A short_peak
while read -r r kb; do short_peak[$r]=$kb; done < <(rank_peaks "$work/short.log")
seen=0
while read -r r kb; do
  seen=$((seen + 1))
  base=${short_peak[$r]:-}
  [ -n "$base" ] || { fail "rank $r: no peak RSS in the short run"; continue; }
  echo "  rank $r: peak RSS $kb kB after $tokens tokens, $base kB after 64"
  bound=$((slack_kb + ${kv_kb[$r]:-0}))
  [ $((kb - base)) -le "$bound" ] && pass "rank $r: peak RSS within $bound kB of the 64-token run's (+$((kb - base)) kB)" \
    || fail "rank $r: peak RSS $((kb - base)) kB above the 64-token run's (bound: $bound kB)"
done < <(rank_peaks "$log")
[ "$seen" -eq "$np" ] || fail "peak RSS lines for $seen of $np ranks"
finish
