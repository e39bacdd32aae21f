#!/usr/bin/env bash
# Decode against the memory roofline, prefill GOP/s and the batch-cost curve, on generated models.
#
# For each preset (default: 1B 8B) in a scratch folder that is deleted afterwards:
#   - writes the model (r1pi-model make; the 8B file is 4.66 GB and takes ~40 s),
#   - measures the read bandwidth (bench/read_bandwidth, 1 GiB, 1 and 2 threads) right before,
#   - decodes 32 tokens greedily with the CLI at -t 1 and -t 2: tok/s and
#       roofline fraction = tok/s * matrix bytes per token / read bandwidth
#     (matrix bytes per token: every tensor but token_embd, which is only looked up, from
#     `r1pi-model info`),
#   - prefills a 128-token prompt at 2 threads with the CLI (-b 128): tok/s and
#       GOP/s = 2 * matrix parameters * tokens / s,
#   - times one forward of B = 1, 2, 4, 8, 16 tokens relative to B = 1, and a 128-token prefill,
#     with bench/forward_batch (at 2 threads).
# The machine should be otherwise idle; the numbers of one run are comparable with each other.
#
# Usage: bench/decode_roofline.sh [BUILD_DIR] [PRESET...]     (BUILD_DIR default: build)
#   R1PI_BACKEND selects the kernels as for r1pi; SCRATCH_PARENT the folder for the scratch dir;
#   REPEAT=N runs each CLI measurement N times and keeps the best (for a machine shared with others);
#   MODELS=DIR keeps the models in DIR (written there if missing, never deleted) to compare builds.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
presets=("$@")
[ ${#presets[@]} -eq 0 ] && presets=(1B 8B)
for bin in r1pi r1pi-model bench/read_bandwidth bench/forward_batch; do
  [ -x "$build/$bin" ] || { echo "decode_roofline: $build/$bin not built" >&2; exit 1; }
done

scratch=$(mktemp -d "${SCRATCH_PARENT:-${TMPDIR:-/tmp}}/r1pi-roofline.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# The built-in byte vocabulary makes one token per byte: 127 bytes + BOS = 128 tokens.
prompt128=$(printf 'The quick brown fox jumps over the lazy dog while the cat sleeps by the fire and the rain taps on the window of the little house..' | head -c 127)
decode_prompt="Once upon a time, in a land far away, there lived"

bandwidth() {  # prints "bw1 bw2" (best GB/s at 1 and 2 threads)
  "$build/bench/read_bandwidth" --threads 1,2 --reps 5 |
    awk '{for (i = 1; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] } bw[v["threads"]] = v["best_GBps"]}
         END {print bw[1], bw[2]}'
}

# Matrix bytes and parameters per token from `r1pi-model info`: all tensors but token_embd (unless
# there is no output.weight: then the logits read token_embd).
model_sizes() {
  "$build/r1pi-model" info "$1" | awk '
    /^tensors:/ {t = 1; next}
    t && NF == 0 {t = 0}
    t && $1 != "name" {
      name = $1; bytes = $NF; n = 1; dims = 0
      for (i = 3; i < NF; ++i) if ($i != "x") { n *= $i; ++dims }
      if (name == "token_embd.weight") { eb = bytes; ep = n; next }
      if (name == "output.weight") out = 1
      b += bytes; if (dims == 2) p += n
    }
    END { if (!out) { b += eb; p += ep }; printf "%.0f %.0f\n", b, p }'
}

repeat=${REPEAT:-1}

cli() {  # model threads batch n prompt -> the CLI's stderr summary
  "$build/r1pi" -m "$1" -t "$2" -b "$3" -n "$4" --temp 0 -c 512 -p "$5" 2>&1 >/dev/null
}

field() { sed -n "s/^$1: \([0-9]*\) tokens, \([0-9.]*\) tok\/s.*/\2/p"; }

best_cli() {  # phase model threads batch n prompt -> the summary of the fastest of $repeat runs
  local best="" best_tps=0 out tps
  for ((i = 0; i < repeat; ++i)); do
    out=$(cli "$2" "$3" "$4" "$5" "$6")
    tps=$(echo "$out" | field "$1")
    if [ -z "$best" ] || awk -v a="$tps" -v b="$best_tps" 'BEGIN {exit !(a > b)}'; then
      best=$out
      best_tps=$tps
    fi
  done
  echo "$best"
}

summary=()
for preset in "${presets[@]}"; do
  model="${MODELS:-$scratch}/$preset.gguf"
  if [ -n "${MODELS:-}" ] && [ -f "$model" ]; then
    echo "== $preset: $model"
  else
    echo "== $preset: writing $model"
    "$build/r1pi-model" make --preset "$preset" -o "$model" --no-progress
  fi
  read -r bytes params < <(model_sizes "$model")
  echo "   matrix bytes per token $bytes, matrix parameters $params"

  read -r bw1 bw2 < <(bandwidth)
  echo "   read bandwidth: $bw1 GB/s (1 thread), $bw2 GB/s (2 threads)"
  for t in 1 2; do
    out=$(best_cli decode "$model" $t 64 32 "$decode_prompt")
    kernels=$(echo "$out" | sed -n 's/.* threads, \([a-z0-9-]*\) kernels.*/\1/p')
    tps=$(echo "$out" | field decode)
    bw=$([ $t = 1 ] && echo "$bw1" || echo "$bw2")
    frac=$(awk -v s="$tps" -v b="$bytes" -v w="$bw" 'BEGIN {printf "%.3f", s * b / (w * 1e9)}')
    gbps=$(awk -v s="$tps" -v b="$bytes" 'BEGIN {printf "%.2f", s * b / 1e9}')
    line="$preset decode -t $t [$kernels]: $tps tok/s = $gbps GB/s of weights = $frac of $bw GB/s"
    echo "   $line"
    summary+=("$line")
  done

  out=$(best_cli prefill "$model" 2 128 1 "$prompt128")
  ntok=$(echo "$out" | sed -n 's/^prefill: \([0-9]*\) tokens.*/\1/p')
  tps=$(echo "$out" | field prefill)
  gops=$(awk -v s="$tps" -v p="$params" 'BEGIN {printf "%.1f", 2 * p * s / 1e9}')
  line="$preset prefill -t 2 -b 128 ($ntok tokens): $tps tok/s = $gops GOP/s"
  echo "   $line"
  summary+=("$line")

  echo "   forward_batch (2 threads):"
  while IFS= read -r l; do
    echo "     $l"
    case "$l" in forward* | prefill*) summary+=("$preset $l") ;; esac
  done < <("$build/bench/forward_batch" "$model" --threads 2 --batches 1,2,4,8,16 --reps 3 --prefill 128)
  [ -n "${MODELS:-}" ] || rm -f "$model"
done

echo
echo "== summary"
printf '%s\n' "${summary[@]}"
