#!/usr/bin/env python3
"""Decode of r1pi against a current llama.cpp on the same GGUF files, interleaved in one run.

llama.cpp is node-llama-cpp's prebuilt CPU library (ggml-org/llama.cpp release v0.5.0, which reads
qwen2 and qwen3 where the fetchable snapshot does not), installed from npm into the build folder by
tests/llamacpp/npm_install.sh. For every round and every model, r1pi (-n N --temp 0 --ignore-eos)
and llama.cpp (llamacpp_decode.mjs, N greedy tokens) decode with the same threads, the order
alternating between rounds, after a warm-up round. Reported per model: each tool's tok/s per round, the ratio of the
means, and each tool's share of the read bandwidth (tok/s x matrix bytes per token / the read
bandwidth measured by bench/read_bandwidth at the same threads before the rounds).

  bench/vs_llamacpp_decode.py -m llama8b.gguf qwen3-8b.gguf -t 2 -n 32 --rounds 5

With --prompt P the rounds time prefill instead (llama-bench's ppP): P tokens of a fixed text (llama.cpp:
the first P of its tokenization; r1pi: the text cut to P tokens or a few less, its count printed) in
batches of 512 for both, tok/s of the whole prompt.
"""
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from r1pibench import runs  # noqa: E402


def matrix_bytes(build, model):
    """Bytes read per decoded token: every tensor but token_embd, which is looked up (or with it,
    when there is no output.weight and the logits read it); of a mixture of experts' expert tensors
    (*_exps) the share a token uses, expert_used_count / expert_count (its active bytes)."""
    out, _ = runs.checked([os.path.join(build, "r1pi-model"), "info", model])
    sizes = {k: int(v) for k, v in re.findall(r"^  (\S+\.weight)\s+\S+\s+.*?\s(\d+)$", out, re.M)}
    count = re.search(r"\.expert_count\s+\S+\s+(\d+)", out)
    used = re.search(r"\.expert_used_count\s+\S+\s+(\d+)", out)
    share = int(used.group(1)) / int(count.group(1)) if count and used else 1.0
    total = sum(b * (share if "_exps." in name else 1.0) for name, b in sizes.items())
    return total if "output.weight" not in sizes else total - sizes["token_embd.weight"]


def main():
    p = runs.llamacpp_arguments(__doc__, 32)
    p.add_argument("--prompt", type=int, default=0, help="time a prefill of this many tokens instead of decode")
    a = p.parse_args()
    build = runs.build_dir(a.build)
    script = runs.llamacpp_script(build, "llamacpp_decode.mjs")
    bandwidth = runs.read_bandwidth(build, a.threads)
    rates = {m: {"r1pi": [], "llama.cpp": []} for m in a.models}
    # The prefill's text: the sentence llamacpp_decode.mjs repeats, cut to --prompt tokens by r1pi's
    # own tokenizer (the same Llama 3 BPE as llama.cpp's on these files).
    prompt_text = {}
    for m in a.models if a.prompt else []:
        text = "The history of the sky's colour is a story of light, air and the eye. " * (a.prompt // 8 + 1)
        while True:
            out, _ = runs.checked([os.path.join(build, "r1pi-model"), "tokenize", "-m", m, "--ids", "-p", text])
            n = len(out.split())
            if n <= a.prompt:
                break
            text = text[:int(len(text) * a.prompt / n) - 1]
        prompt_text[m] = text
        runs.progress("%s: r1pi's prompt is %d tokens" % (os.path.basename(m), n))
    # Round 0 is a warm-up, not reported: the first read of a file that is not in the page cache
    # comes from the disk (a third of the rate here).
    for r in range(-1, a.rounds):
        for m in a.models:
            tools = ["r1pi", "llama.cpp"] if r % 2 == 0 else ["llama.cpp", "r1pi"]
            for tool in tools:
                if tool == "r1pi" and a.prompt:
                    _, err = runs.checked([os.path.join(build, "r1pi"), "-m", m, "-p", prompt_text[m], "-n", 1,
                                           "--temp", 0, "-b", 512, "-c", a.prompt + 64, "-t", a.threads])
                    rate = runs.r1pi_summary(err)["prefill"]
                elif tool == "r1pi":
                    _, err = runs.checked([os.path.join(build, "r1pi"), "-m", m, "-p", "Why is the sky blue?",
                                           "-n", a.n, "--temp", 0, "--ignore-eos", "-t", a.threads])
                    rate = runs.r1pi_summary(err)["decode"]
                else:
                    out, _ = runs.checked(["node", script, m, a.threads, 0 if a.prompt else a.n] +
                                          ([a.prompt] if a.prompt else []))
                    rate = json.loads(out.strip().splitlines()[-1])["prefill_tok_s" if a.prompt else "decode_tok_s"]
                if r >= 0:
                    rates[m][tool].append(rate)
                runs.progress("round %d %s %s: %.2f tok/s" % (r + 1, os.path.basename(m), tool, rate))
    what = "prefill of %d tokens in batches of 512" % a.prompt if a.prompt else "%d tokens decoded" % a.n
    print("threads %d, %s per run, %d rounds, read bandwidth %.1f GB/s, %s\n"
          % (a.threads, what, a.rounds, bandwidth or 0, runs.uptime()))
    print("| model | GB per token | r1pi tok/s | llama.cpp tok/s | r1pi / llama.cpp | r1pi share | llama.cpp share |")
    print("|---|---|---|---|---|---|---|")
    for m in a.models:
        gb = matrix_bytes(build, m) / 1e9
        mine, theirs = statistics.mean(rates[m]["r1pi"]), statistics.mean(rates[m]["llama.cpp"])
        # A prefill reads the weights once per batch, not per token: no share of the bandwidth there.
        share = (lambda rate: "%.2f" % (rate * gb / bandwidth)) if bandwidth and not a.prompt else (lambda rate: "-")
        print("| %s | %.2f | %s | %s | %.2f | %s | %s |" % (
            os.path.basename(m), gb, " ".join("%.2f" % v for v in rates[m]["r1pi"]),
            " ".join("%.2f" % v for v in rates[m]["llama.cpp"]), mine / theirs, share(mine), share(theirs)))


if __name__ == "__main__":
    main()
