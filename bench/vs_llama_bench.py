#!/usr/bin/env python3
"""r1pi-bench against llama.cpp's llama-bench on one GGUF file, interleaved in one run.

For every prompt length P (prefill, `-p P -n 0`) and every generation length N (decode, `-p 0 -n N`),
round after round, each tool runs its test with the same threads and repetitions (each does its own
warm-up first); the order alternates between rounds (r1pi first, then llama.cpp first) so that a
drift of the machine falls on both. The report is a markdown table of every sample's tok/s per tool
and the ratio of the means, r1pi / llama.cpp.

llama.cpp is not part of r1pi: build llama-bench in a scratch folder outside the checkout (recipe in
bench/README.md) and pass its path.

  bench/vs_llama_bench.py --llama-bench ../scratch/llama.cpp/build/bin/llama-bench -m M.gguf \\
      -p 128,512 -n 0 -t 2 -r 1 --rounds 2
"""
import argparse
import json
import os
import statistics
import sys
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
    return a


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
    if not tests:
        runs.die("no test (give -p or -n values above 0)")
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
