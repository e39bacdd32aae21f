#!/usr/bin/env bash
# same_greedy_ids.sh ARCH [TYPE]: r1pi and llama.cpp (node-llama-cpp's prebuilt library) pick the
# same greedy tokens on ARCH's tiny preset with F32 weights (or TYPE matrices with a Q6_K output:
# q4_k, Q4_K_M's mix, or q5_k: r1pi's K-quant files and kernels), r1pi-model's file read by both.
# A check of the architecture's math (biases, head norms, RoPE over halves, a head size other than dim / heads)
# and of the file's keys and shapes against the real llama.cpp, not against r1pi's reading of it.
# Environment: R1PI, R1PI_MODEL (the binaries), NPM_DIR (npm_install.sh's folder), SCRATCH.
set -euo pipefail
arch=${1:?usage: same_greedy_ids.sh ARCH [TYPE]}
type=${2:-f32}
here=$(cd "$(dirname "$0")" && pwd)
model=$SCRATCH/llamacpp-$arch-$type.gguf
n=16
mkdir -p "$SCRATCH"
"$R1PI_MODEL" make --no-progress --arch "$arch" --preset tiny --type "$type" --output-type "$([ "$type" = f32 ] && echo f32 || echo q6_k)" --seed 3 \
  -o "$model" >/dev/null
# "Hello" in the built-in byte vocabulary after BOS (256): the ids r1pi's tokenizer gives it.
# (A copy beside the npm packages: node resolves an ES module's imports from the module's folder.)
cp "$here/greedy_ids.mjs" "$NPM_DIR/greedy_ids-$arch-$type.mjs"
ids=$(node "$NPM_DIR/greedy_ids-$arch-$type.mjs" "$model" "256 72 101 108 108 111" $n)
want=$(python3 -c 'import hashlib, struct, sys
print(hashlib.sha256(b"".join(struct.pack("<i", int(t)) for t in sys.argv[1].split())).hexdigest())' "$ids")
got=$("$R1PI" -m "$model" -p Hello -n $n --temp 0 --ignore-eos -t 1 2>&1 | sed -n 's/^sha256: //p')
echo "llama.cpp: $ids (sha256 $want)"
echo "r1pi:      sha256 $got"
[ "$got" = "$want" ] || { echo "FAIL: $arch $type: r1pi's greedy tokens differ from llama.cpp's"; exit 1; }
