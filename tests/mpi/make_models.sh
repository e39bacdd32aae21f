#!/usr/bin/env bash
# make_models.sh OUT_DIR: the generated models every MPI test uses (the ctest fixture mpi_models).
#   tiny.gguf        the tiny preset (dim 256, 4 layers, 8/4 heads, FFN 768 = 24 Q4_0 blocks,
#                    vocab 512, Q6_K output), seed 7
#   tiny-seed8.gguf  the same shape and seed 8: a different model with the same metadata
#   uneven.gguf      dim 384, 3 layers, 12/6 heads, FFN 224 = 7 blocks, vocab 515, Q4_0 output:
#                    on 4 ranks KV heads split 2/2/1/1, FFN blocks 2/2/2/1, vocabulary 129/129/129/128
#   uneven-tied.gguf the same shape without output.weight (logits from token_embd's rows; such a
#                    random model mostly repeats its input token, so only the logits test uses it)
#   qwen2.gguf       qwen2's tiny preset (q/k/v biases, RoPE over halves), seed 7
#   qwen2-kv2.gguf   qwen2's tiny preset with 8 query heads on 2 KV heads (biases of shared KV heads):
#                    on 5 ranks KV head 0 goes to 3 ranks, KV head 1 to 2
#   qwen3.gguf       qwen3's tiny preset (per-head q/k norm, head size 64 = 2 x dim / heads), seed 7
#   qwen3moe.gguf    qwen3moe's tiny preset (16 experts of 96 units = 3 Q4_0 blocks, 4 per token: on
#                    4 ranks each rank holds none of a quarter of the experts), seed 7
#   gpt-oss.gguf     gpt-oss's tiny preset in its published mix (experts MXFP4, the rest Q8_0): sinks
#                    split with the query heads, biases added after the sync, a window of 8, seed 7
#   kquant-q4km.gguf dim 1024, 2 layers, 16/4 heads of 64, FFN 2048 as llama-quantize's Q4_K_M (Q4_K,
#                    Q6_K): every rank's columns of attn_output and ffn_down whole 256-element
#                    super-blocks at 2, 3 and 4 ranks, as the 8B's
#   kquant-q2k.gguf  the same shape as Q2_K's mix (Q2_K, Q3_K, Q4_K, Q6_K output)
#   slow.gguf        dim 512, 8 layers, 8/4 heads, FFN 1536, vocab 2048: still busy after seconds
#   prompt-long.txt  7000 bytes of prompt (about 7000 tokens with the byte vocabulary)
set -euo pipefail
out=${1:?usage: make_models.sh OUT_DIR}
: "${R1PI_BIN_DIR:?set R1PI_BIN_DIR to the build folder}"
mk=$R1PI_BIN_DIR/r1pi-model
mkdir -p "$out"
"$mk" make --no-progress --preset tiny --seed 7 -o "$out/tiny.gguf"
"$mk" make --no-progress --preset tiny --seed 8 -o "$out/tiny-seed8.gguf"
uneven=(--preset tiny --seed 11 --dim 384 --layers 3 --heads 12 --kv-heads 6 --ffn 224 --vocab 515)
"$mk" make --no-progress "${uneven[@]}" --output-type q4_0 -o "$out/uneven.gguf"
"$mk" make --no-progress "${uneven[@]}" --tied -o "$out/uneven-tied.gguf"
"$mk" make --no-progress --arch qwen2 --preset tiny --seed 7 -o "$out/qwen2.gguf"
"$mk" make --no-progress --arch qwen2 --preset tiny --seed 7 --heads 8 --kv-heads 2 -o "$out/qwen2-kv2.gguf"
"$mk" make --no-progress --arch qwen3 --preset tiny --seed 7 -o "$out/qwen3.gguf"
"$mk" make --no-progress --arch qwen3moe --preset tiny --seed 7 -o "$out/qwen3moe.gguf"
"$mk" make --no-progress --arch gpt-oss --preset tiny --type mxfp4_moe --seed 7 -o "$out/gpt-oss.gguf"
kquant=(--preset tiny --seed 7 --dim 1024 --layers 2 --heads 16 --kv-heads 4 --ffn 2048)
"$mk" make --no-progress "${kquant[@]}" --type q4_k_m -o "$out/kquant-q4km.gguf"
"$mk" make --no-progress "${kquant[@]}" --type q2_k -o "$out/kquant-q2k.gguf"
"$mk" make --no-progress --preset tiny --seed 5 --dim 512 --layers 8 --heads 8 --kv-heads 4 \
  --ffn 1536 --vocab 2048 -o "$out/slow.gguf"
text=""
while [ ${#text} -lt 7000 ]; do text+="The quick brown fox jumps over the lazy dog again. "; done
printf '%s' "${text:0:7000}" >"$out/prompt-long.txt"
echo "PASS: mpi_models: models in $out"
