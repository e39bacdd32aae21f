#!/usr/bin/env bash
# same_greedy_ids.sh ARCH [TYPE [LABEL MAKE-FLAGS...]]: r1pi and llama.cpp (node-llama-cpp's prebuilt library) pick the
# same greedy tokens on ARCH's tiny preset with F32 weights (or TYPE matrices with a Q6_K output:
# q4_k, Q4_K_M's mix, q5_k, q4_1, q5_0, q5_1, iq4_nl, iq4_xs, bf16 or mxfp4_moe (the experts MXFP4,
# the rest Q8_0): r1pi's quantised files and
# kernels), r1pi-model's file read by both.
# A check of the architecture's math (biases, head norms, RoPE over halves, a head size other than dim / heads,
# qwen3moe's routing and weighted experts)
# and of the file's keys and shapes against the real llama.cpp, not against r1pi's reading of it.
# Environment: R1PI, R1PI_MODEL, R1PI_PERPLEXITY (the binaries), NPM_DIR (npm_install.sh's folder),
# SCRATCH.
set -euo pipefail
arch=${1:?usage: same_greedy_ids.sh ARCH [TYPE [LABEL MAKE-FLAGS...]]}
type=${2:-f32}
label=${3:-}  # another shape: LABEL names the file, MAKE-FLAGS give the shape
shift $(($# < 3 ? $# : 3))
here=$(cd "$(dirname "$0")" && pwd)
model=$SCRATCH/llamacpp-$arch-$type${label:+-$label}.gguf
n=16
mkdir -p "$SCRATCH"
"$R1PI_MODEL" make --no-progress --arch "$arch" --preset tiny --type "$type" --output-type "$([ "$type" = f32 ] && echo f32 || echo q6_k)" --seed 3 \
  "$@" -o "$model" >/dev/null
# "Hello" in the built-in byte vocabulary after BOS (256): the ids r1pi's tokenizer gives it.
# (A copy beside the npm packages: node resolves an ES module's imports from the module's folder.)
cp "$here/greedy_ids.mjs" "$NPM_DIR/greedy_ids-$arch-$type$label.mjs"
ids=$(node "$NPM_DIR/greedy_ids-$arch-$type$label.mjs" "$model" "256 72 101 108 108 111" $n)
want=$(python3 -c 'import hashlib, struct, sys
print(hashlib.sha256(b"".join(struct.pack("<i", int(t)) for t in sys.argv[1].split())).hexdigest())' "$ids")
got=$("$R1PI" -m "$model" -p Hello -n $n --temp 0 --ignore-eos -t 1 2>&1 | sed -n 's/^sha256: //p')
echo "llama.cpp: $ids (sha256 $want)"
echo "r1pi:      sha256 $got"
[ "$got" = "$want" ] && exit 0
# Different ids: llama.cpp's sequence teacher-forced through r1pi (r1pi-perplexity --all-logits).
# Where r1pi's best token is not llama.cpp's, the two must be a near-tie in r1pi's logits (the
# engines quantise activations differently: Q8_1 against Q8_0 for Q4_1, other rounding).
prompt="256 72 101 108 108 111"
echo "$prompt $ids" >"$SCRATCH/teacher-$arch-$type$label.ids"
"$R1PI_PERPLEXITY" -m "$model" --tokens "$SCRATCH/teacher-$arch-$type$label.ids" --all-logits -c 64 -t 1 \
  --save-logits "$SCRATCH/teacher-$arch-$type$label.f32" >/dev/null 2>&1 || { echo "FAIL: $arch $type: r1pi-perplexity failed"; exit 1; }
python3 - "$SCRATCH/teacher-$arch-$type$label.f32" "$prompt $ids" <<'PY' || { echo "FAIL: $arch $type: r1pi's greedy tokens differ from llama.cpp's beyond a near-tie"; exit 1; }
import struct, sys
data = open(sys.argv[1], "rb").read()
seq = [int(t) for t in sys.argv[2].split()]
V = len(data) // 4 // len(seq)
rows = [struct.unpack_from("<%df" % V, data, 4 * V * p) for p in range(len(seq))]
flips = 0
for p in range(5, len(seq) - 1):  # row p predicts seq[p + 1]; the generated ids start at 6
    row, theirs = rows[p], seq[p + 1]
    best = max(range(V), key=lambda i: (row[i], -i))
    if best != theirs:
        gap = row[best] - row[theirs]
        print("position %d: r1pi's best %d, llama.cpp's %d, r1pi's gap %.4f" % (p + 1, best, theirs, gap))
        if gap > 0.02 * max(1.0, abs(row[best])):
            sys.exit(1)
        flips += 1
print("every difference a near-tie (%d of %d positions)" % (flips, len(seq) - 6))
PY
