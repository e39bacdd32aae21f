#!/usr/bin/env bash
# o200k_llama_cpp.sh: llama.cpp reads the gpt-oss file that test tokenizer_o200k wrote and gives
# its own recorded ids on every case (llama_cpp_tokens.mjs). A test of its own so that runs without
# llama.cpp (the ASan build's) still check r1pi's tokenizer.
# Environment: LLAMACPP_NPM (node-llama-cpp's folder), SCRATCH (tokenizer_o200k's), VECTORS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cp "$here/llama_cpp_tokens.mjs" "$LLAMACPP_NPM/llama_cpp_tokens.mjs"  # node resolves imports from there
node "$LLAMACPP_NPM/llama_cpp_tokens.mjs" "$SCRATCH/gpt-oss-o200k.gguf" "$VECTORS"
