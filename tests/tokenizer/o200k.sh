#!/usr/bin/env bash
# o200k.sh: gpt-oss's tokenizer end to end. js-tiktoken's o200k_base ranks (npm, pinned) become the
# tokenizer.json transformers would write (o200k_tokenizer_json.py), r1pi-model writes a gpt-oss
# file with it, and o200k_vectors checks both against js-tiktoken's ids. Test
# llamacpp_tokens_o200k (o200k_llama_cpp.sh) then has llama.cpp read the same file.
# Environment: R1PI_MODEL, O200K_VECTORS (the checker), NPM_DIR, SCRATCH, VECTORS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$SCRATCH"
bash "$here/../npm_install.sh" "$NPM_DIR" js-tiktoken@1.0.21
tok=$SCRATCH/tokenizer.json model=$SCRATCH/gpt-oss-o200k.gguf
python3 "$here/o200k_tokenizer_json.py" "$NPM_DIR/node_modules/js-tiktoken/dist/ranks/o200k_base.js" "$tok"
"$R1PI_MODEL" make --no-progress --arch gpt-oss --preset tiny --layers 1 --tokenizer "$tok" -o "$model" >/dev/null
"$O200K_VECTORS" "$tok" "$VECTORS" "$model"
