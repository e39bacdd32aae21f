#!/usr/bin/env bash
# npm_install.sh DIR: llama.cpp as a prebuilt CPU library (node-llama-cpp, which bundles
# ggml-org/llama.cpp release v0.5.0 and reads qwen2 and qwen3), through tests/npm_install.sh.
exec "$(dirname "$0")/../npm_install.sh" "${1:?usage: npm_install.sh DIR}" \
  node-llama-cpp@3.22.1 @node-llama-cpp/linux-x64@3.22.1
