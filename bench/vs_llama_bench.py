#!/usr/bin/env python3
"""r1pi-bench against llama.cpp's llama-bench on one GGUF file, interleaved in one run.

For every prompt length P (prefill, `-p P -n 0`) and every generation length N (decode, `-p 0 -n N`),
round after round, each tool runs its test with the same threads and repetitions (each does its own
warm-up first); the order alternates between rounds (r1pi first, then llama.cpp first) so that a
drift of the machine falls on both. The report is a markdown table of every sample's tok/s per tool
and the ratio of the means, r1pi / llama.cpp.

Decode after a context of D tokens (`-d D`, with `--depth-gen N` tokens timed): r1pi-bench's own
`-p 0 -n N -d D`; this llama-bench has no depth, so llama.cpp's side is its llama-cli (beside
llama-bench, or --llama-cli) fed a prompt of D tokens (BOS and D - 1 times " the", one token each in
the Llama 3 vocabulary) and generating N more, its decode rate read from its own timing line
("eval time"), which counts the generated tokens' forwards only; the prompt's token count that
llama-cli reports must be D.

llama.cpp is not part of r1pi: build llama-bench in a scratch folder outside the checkout (recipe in
bench/README.md) and pass its path.

  bench/vs_llama_bench.py --llama-bench ../scratch/llama.cpp/build/bin/llama-bench -m M.gguf \\
      -p 128,512 -n 0 -t 2 -r 1 --rounds 2
"""
import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from r1pibench import runs  # noqa: E402


def ints(text):
    return [int(v) for v in text.split(",") if v.strip() != ""]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--llama-bench", required=True, help="path of llama.cpp's llama-bench")
    p.add_argument("--build", help="r1pi's build folder (default build/)")
    p.add_argument("-m", "--model", required=True)
    p.add_argument("-p", default="128,512", help="prompt lengths (prefill tests), 0 for none")
    p.add_argument("-n", default="0", help="generation lengths (decode tests), 0 for none")
    p.add_argument("-d", default="", help="context depths for decode tests after a context (e.g. 0,2048,4096)")
    p.add_argument("--depth-gen", type=int, default=32, help="tokens timed in each depth test")
    p.add_argument("--llama-cli", help="llama.cpp's llama-cli (default: beside --llama-bench)")
    p.add_argument("-t", "--threads", type=int, default=2)
    p.add_argument("-r", "--repetitions", type=int, default=1, help="timed runs per test and tool")
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--r1pi-args", default="", help="more arguments for r1pi-bench (e.g. '-b 256')")
    p.add_argument("--out", help="write the markdown report to this file too")
    a = p.parse_args()
    a.build = runs.build_dir(a.build)
    if not os.access(a.llama_bench, os.X_OK):
        runs.die("%s is not an executable program" % a.llama_bench)
    if not os.path.isfile(a.model):
        runs.die("no model file %s" % a.model)
    if a.rounds < 1 or a.repetitions < 1:
        runs.die("--rounds and -r must be at least 1")
    a.llama_cli = a.llama_cli or os.path.join(os.path.dirname(a.llama_bench), "llama-cli")
    if a.d and not os.access(a.llama_cli, os.X_OK):
        runs.die("%s is not an executable program (needed for -d; --llama-cli)" % a.llama_cli)
    if a.depth_gen < 1:
        runs.die("--depth-gen must be at least 1")
    return a


def llama_cli_decode(a, depth, prompt_dir):
    """One llama-cli run after a prompt of `depth` tokens; returns its decode tok/s."""
    path = os.path.join(prompt_dir, "depth-%d.txt" % depth)
    with open(path, "w") as f:
        f.write("the" + " the" * (depth - 2) if depth > 1 else "")
    cmd = [a.llama_cli, "-m", a.model, "-f", path, "-n", str(a.depth_gen), "-t", str(a.threads),
           "-c", str(depth + a.depth_gen + 16), "--temp", "0", "-s", "1", "-no-cnv", "--ignore-eos",
           "--simple-io", "--no-display-prompt"]
    _, err = runs.checked(cmd)
    prompt = re.search(r"prompt eval time =\s*[0-9.]+ ms /\s*(\d+) tokens", err)
    if depth > 1 and (not prompt or int(prompt.group(1)) != depth):
        runs.die("llama-cli read %s prompt tokens, not %d" % (prompt.group(1) if prompt else "no", depth))
    m = re.search(r"\beval time =\s*([0-9.]+) ms /\s*(\d+) runs", err)
    if not m:
        runs.die("no eval time in llama-cli's output:\n" + err[-2000:])
    return [int(m.group(2)) / (float(m.group(1)) / 1000.0)]


def run_tool(cmd):
    """Runs one bench command with -o json; returns its test's samples_ts (tok/s)."""
    out, _ = runs.checked(cmd)
    tests = json.loads(out)
    if len(tests) != 1:
        runs.die("expected one test from %s, got %d" % (" ".join(cmd), len(tests)))
    if tests[0].get("error"):
        runs.die("%s: %s" % (" ".join(cmd), tests[0]["error"]))
    return [float(v) for v in tests[0]["samples_ts"]]


def main():
    a = parse_args()
    tests = [("pp%d" % p, ["-p", str(p), "-n", "0"]) for p in ints(a.p) if p > 0]
    tests += [("tg%d" % n, ["-p", "0", "-n", str(n)]) for n in ints(a.n) if n > 0]
    tests += [("tg%d @ d%d" % (a.depth_gen, d), ["-p", "0", "-n", str(a.depth_gen), "-d", str(d)])
              for d in ints(a.d)]
    if not tests:
        runs.die("no test (give -p, -n or -d values above 0)")
    prompt_dir = tempfile.mkdtemp(prefix="vs-llama-")
    common = ["-m", a.model, "-t", str(a.threads), "-r", str(a.repetitions), "-o", "json"]
    tools = {
        "r1pi": [os.path.join(a.build, "r1pi-bench")] + common + a.r1pi_args.split(),
        "llama.cpp": [a.llama_bench] + common,
    }
    samples = {(name, tool): [] for name, _ in tests for tool in tools}
    for rnd in range(a.rounds):
        order = list(tools) if rnd % 2 == 0 else list(reversed(tools))
        for name, test_args in tests:
            for tool in order:
                t0 = time.time()
                if tool == "llama.cpp" and "-d" in test_args:
                    depth = int(test_args[test_args.index("-d") + 1])
                    got = sum((llama_cli_decode(a, depth, prompt_dir) for _ in range(a.repetitions)), [])
                else:
                    got = run_tool(tools[tool] + test_args)
                samples[(name, tool)] += got
                runs.progress("round %d %s %s: %s tok/s (%.0f s)" % (rnd + 1, name, tool,
                              ", ".join("%.2f" % v for v in got), time.time() - t0))
    lines = ["| test | r1pi tok/s | llama.cpp tok/s | r1pi / llama.cpp |", "| --- | --- | --- | ---: |"]
    for name, _ in tests:
        r, l = samples[(name, "r1pi")], samples[(name, "llama.cpp")]
        lines.append("| %s | %s | %s | %.2f |" % (name, ", ".join("%.2f" % v for v in r),
                     ", ".join("%.2f" % v for v in l), statistics.mean(r) / statistics.mean(l)))
    head = ("%s, %d threads, %d round(s) x %d run(s) per tool, interleaved; %s at the end.\n\n"
            % (os.path.basename(a.model), a.threads, a.rounds, a.repetitions, runs.uptime()))
    text = head + "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
