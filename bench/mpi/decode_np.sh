#!/usr/bin/env bash
# Decode speed of one rank with 2 threads against 2 ranks with 1 thread each (same machine, same
# cores: what tensor parallelism costs or gains before any network), plus the Pred/Sync split from
# --timings and the bytes each rank sends per token for np = 2 and 4.
#
#   bench/mpi/decode_np.sh [BUILD_DIR]                       (default: build)
# Env: MODELS="1B 8B" (default 1B; 8B writes a 4.7 GB file and deletes it afterwards),
#      REPS=3 (alternating np1x2 / np2x1 runs), N=32 (tokens generated), MODEL_DIR (default
#      BUILD_DIR/models; an existing 1B.gguf there is reused), PROMPT, R1PI_BENCH_NICE (e.g. -10:
#      run r1pi at that nice level, for a shared, busy machine).
# Output: one line per run, then a table (median and best of the runs; on a shared machine the best
# run is the one least disturbed). Pred and Sync are rank 0's per-token means over the
# decode forwards ("1 tokens:" lines of --timings); Sent is the Q8_0 sync payload per token per rank
# (the control broadcast, ~100 B, and the token pick, 8 B per rank, come on top).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "${1:-$root/build}")
models=${MODELS:-1B}
reps=${REPS:-3}
n=${N:-32}
prompt=${PROMPT:-Once upon a time}
model_dir=${MODEL_DIR:-$build/models}
r1pi=$build/r1pi
model_tool=$build/r1pi-model
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$model_dir"
work=$(mktemp -d /tmp/r1pi-decode.XXXXXX)
generated=()
cleanup() {
  rm -rf "$work"
  for f in "${generated[@]}"; do rm -f "$f"; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

prio=()
[ -n "${R1PI_BENCH_NICE:-}" ] && prio=(nice -n "$R1PI_BENCH_NICE")

# run CONFIG MODEL OUT: CONFIG is np1t2, np2t1 or np4t1
run() {
  local cfg=$1 model=$2 out=$3
  local args=(-m "$model" -p "$prompt" -n "$n" --temp 0)
  case $cfg in
    np1t2) "${prio[@]}" "$r1pi" "${args[@]}" -t 2 >/dev/null 2>"$out" ;;
    np2t1) "${prio[@]}" mpirun -np 2 --mca mpi_yield_when_idle 1 "$r1pi" "${args[@]}" -t 1 --timings >/dev/null 2>"$out" ;;
    np4t1) "${prio[@]}" mpirun -np 4 --oversubscribe --mca mpi_yield_when_idle 1 "$r1pi" "${args[@]}" -t 1 --timings \
             >/dev/null 2>"$out" ;;
  esac
}

# summary of one run: tok/s pred_ms sync_ms sent_kB sha
parse() {
  awk '
    /^decode:/ { tps = $4 }
    /^sha256:/ { sha = substr($2, 1, 12) }
    /^1 tokens: Pred/ { p += $4; s += $7; k += $11; c++ }
    END {
      if (c) printf "%s %.1f %.1f %.1f %s\n", tps, p / c, s / c, k / c, sha
      else printf "%s - - - %s\n", tps, sha
    }' "$1"
}

summary=$work/summary
: >"$summary"
for m in $models; do
  model=$model_dir/$m.gguf
  if [ ! -f "$model" ]; then
    echo "# writing the $m preset to $model" >&2
    t0=$SECONDS
    "$model_tool" make --preset "$m" --no-progress -o "$model" >/dev/null
    echo "# ... $((SECONDS - t0)) s" >&2
    [ "$m" = 1B ] || generated+=("$model")
  fi
  "$r1pi" -m "$model" -p "$prompt" -n 2 --temp 0 -t 2 >/dev/null 2>&1  # page cache warm
  for rep in $(seq 1 "$reps"); do
    for cfg in np1t2 np2t1; do
      run $cfg "$model" "$work/out"
      line=$(parse "$work/out")
      echo "$m $cfg rep$rep $line" | tee -a "$summary" >&2
    done
  done
  run np4t1 "$model" "$work/out"
  line=$(parse "$work/out")
  echo "$m np4t1 rep1 $line" | tee -a "$summary" >&2
  grep '^sync:' "$work/out" | sed "s/^/# $m np4t1 /" >&2
  for f in "${generated[@]}"; do [ "$f" = "$model" ] && rm -f "$model"; done
done

echo
printf '%-5s %-6s %-30s %7s %7s %9s %9s %11s %11s %14s %s\n' model config "decode tok/s (runs)" median best \
  "Pred ms" "Sync ms" "Pred@best" "Sync@best" "Sent kB/tok/rk" sha256
awk '
  { key = $1 " " $2; if (!(key in seen)) { order[++n] = key; seen[key] = 1 }
    tps[key] = tps[key] (tps[key] == "" ? "" : " ") $4; cnt[key]++; v[key, cnt[key]] = $4
    if ($5 != "-") { p[key] += $5; s[key] += $6; k[key] = $7 } else { p[key] = "-" }
    if ($4 + 0 > best[key] + 0) { best[key] = $4; bp[key] = $5; bs[key] = $6 }
    sha[key] = sha[key] == "" ? $8 : (sha[key] == $8 ? sha[key] : "DIFFERS") }
  END {
    for (i = 1; i <= n; i++) {
      key = order[i]; c = cnt[key]
      for (a = 1; a <= c; a++) w[a] = v[key, a]
      for (a = 1; a <= c; a++) for (b = a + 1; b <= c; b++) if (w[b] < w[a]) { t = w[a]; w[a] = w[b]; w[b] = t }
      med = c % 2 ? w[(c + 1) / 2] : (w[c / 2] + w[c / 2 + 1]) / 2
      split(key, kk, " ")
      if (p[key] == "-") printf "%-5s %-6s %-30s %7.2f %7.2f %9s %9s %11s %11s %14s %s\n", kk[1], kk[2], tps[key], med, best[key], "-", "-", "-", "-", "-", sha[key]
      else printf "%-5s %-6s %-30s %7.2f %7.2f %9.1f %9.1f %11.1f %11.1f %14.1f %s\n", kk[1], kk[2], tps[key], med, best[key], p[key] / c, s[key] / c, bp[key], bs[key], k[key], sha[key]
    }
  }' "$summary"
