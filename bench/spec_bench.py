#!/usr/bin/env python3
"""Speculative decoding against plain decoding on the three kinds of text of its issue, at each rank
count: W warm-ups then N runs per side, interleaved (no-spec, spec, spec, no-spec, ...), the same
command line but for --spec / --no-spec.

  repetitive  greedy output that loops, run past end-of-generation (--repetitive PROMPT; the
              default, twelve times 'He was very happy. ', makes TinyStories-656K inflated to the
              8B preset (Q4_0) settle into one sentence that it repeats exactly, as a looping R1
              does; bench/results/2026-12-02-vm/spec-loop-prompts-1B.txt says how it was chosen)
  quoting     the prompt holds a story for the output to copy: the model's own greedy
              continuation of "Once upon a time", then "Once upon a time" again (TinyStories-656K
              does not copy it: its second telling leaves the first after a few words)
  sampled     --temp 1.5 --top-k 40: text that does not repeat (the worst case, with random presets)

Per row: decode tok/s of each side (mean and 95% CI), the speedup spec / plain with its 95% CI and
Welch's p, the speedup the cost curve predicts for the steps taken (the forwards' c(B) summed against
one forward per token: free of the machine's noise), acceptance, tokens per step and the cost curve.
Both sides must print one sha256 (speculation is lossless) or the script stops. The cost curve is
measured at the first speculative run per rank count and cached in $R1PI_CACHE_DIR (default: a
folder beside the report).

  bench/spec_bench.py -m MODEL [--np 1,2] [-n 96] [-t 1] [-N 10] [-W 2] [--hostfile H]
  bench/spec_bench.py --quick     (tiny preset, np 1, 2 runs per side: seconds; what CI runs)
"""
import argparse
import os
import re
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from r1pibench import cli, env, report, runs, stats  # noqa: E402

KINDS = ("repetitive", "quoting", "sampled")
REPETITIVE = "He was very happy. " * 12

SPEC_LINE = re.compile(r"^spec: drafted (\d+), accepted (\d+) \(([0-9.]+)%\), (\d+) steps, ([0-9.]+) tokens/step, "
                       r"([0-9.]+)x by the cost curve, cost (.*) \((.*)\)$", re.M)


def shrink(a):
    a.nps, a.n_gen, a.runs, a.warmups = "1", 32, 2, 0


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-m", "--model")
    p.add_argument("--np", dest="nps", default="1,2", help="rank counts, comma-separated")
    p.add_argument("-n", "--n-gen", type=int, default=96)
    p.add_argument("-t", "--threads", type=int, default=1, help="threads per rank")
    p.add_argument("-N", "--runs", type=int, default=10)
    p.add_argument("-W", "--warmups", type=int, default=2)
    p.add_argument("--kinds", default=",".join(KINDS))
    p.add_argument("--repetitive", default=REPETITIVE, help="the prompt of the repetitive text")
    p.add_argument("--hostfile")
    cli.add_common(p, "spec", "tiny preset, --np 1 -n 32 -N 2 -W 0")
    a = cli.resolve(p.parse_args(), shrink)
    a.nps = [int(x) for x in a.nps.split(",")]
    a.kinds = a.kinds.split(",")
    if any(k not in KINDS for k in a.kinds):
        runs.die("--kinds takes %s" % ",".join(KINDS))
    if a.runs < 2:
        runs.die("-N must be at least 2 (a standard deviation needs two runs)")
    return a


def base(a, np):
    return runs.mpirun(np, a.hostfile) + [os.path.join(a.build, "r1pi"), "-m", a.model, "-t", a.threads]


def prompts(a):
    """The arguments of each kind of text; the quoting prompt from the model's own story."""
    out, _ = runs.checked(base(a, 1) + ["-p", "Once upon a time", "-n", 80, "--temp", 0, "--no-spec"])
    story = out.rstrip("\n")
    return {"repetitive": ["-p", a.repetitive, "--temp", 0, "--ignore-eos"],
            "quoting": ["-p", "Once upon a time%s\nOnce upon a time" % story, "--temp", 0],
            "sampled": ["-p", "Once upon a time", "--temp", 1.5, "--top-k", 40, "--seed", 7]}


def measure(a, np, args):
    """Interleaved runs of both sides: rates, the sha256 and spec's last summary line."""
    sides = {"plain": base(a, np) + args + ["-n", a.n_gen, "--no-spec"],
             "spec": base(a, np) + args + ["-n", a.n_gen, "--spec"]}
    rates, sha, spec_line = {"plain": [], "spec": []}, None, None
    for i in range(a.warmups + a.runs):
        for side in (("plain", "spec") if i % 2 == 0 else ("spec", "plain")):
            _, err = runs.checked(sides[side])
            s = runs.r1pi_summary(err)
            if sha is None:
                sha = s["sha256"]
            elif s["sha256"] != sha:
                runs.die("%s run %d: sha256 %s, first run %s: speculation changed the output\n%s"
                         % (side, i + 1, s["sha256"], sha, shlex.join(map(str, sides[side]))))
            if side == "spec":
                spec_line = SPEC_LINE.search(err)
                if not spec_line:
                    runs.die("no spec: line from %s" % shlex.join(map(str, sides[side])))
            if i >= a.warmups:
                rates[side].append(s["decode"])
    return sides, rates, sha, spec_line


def main():
    a = parse_args()
    os.environ.setdefault("R1PI_CACHE_DIR", os.path.join(a.out, a.name + "-cost-cache"))
    e = env.record(runs.SOURCE, a.model, a.hostfile)
    load_start = runs.uptime()
    kinds = prompts(a)
    f = report.fmt
    rows, bars, commands = [], [], []
    for np in a.nps:
        for kind in a.kinds:
            runs.progress("np %d, %s: %d runs per side after %d warm-up(s)" % (np, kind, a.runs, a.warmups))
            sides, rates, sha, m = measure(a, np, kinds[kind])
            shown = [w if kind != "quoting" or w != kinds[kind][1] else "Once upon a time<story> Once upon a time"
                     for w in sides["spec"]]
            commands.append("- np %d, %s: `%s`" % (np, kind, shlex.join(map(str, shown))))
            sp, ss = stats.summary(rates["plain"]), stats.summary(rates["spec"])
            r, w = stats.ratio_ci(rates["plain"], rates["spec"]), stats.welch(rates["plain"], rates["spec"])
            runs.progress("  plain %s, spec %s tok/s: %sx" % (f(sp["mean"]), f(ss["mean"]), f(r["ratio"], 3)))
            rows.append("| %d | %s | %s (%s .. %s) | %s (%s .. %s) | **%s** (%s .. %s) | %.3g | %sx | %s%% | %s | %s | `%s` |" % (
                np, kind, f(sp["mean"]), f(sp["ci95"][0]), f(sp["ci95"][1]), f(ss["mean"]), f(ss["ci95"][0]),
                f(ss["ci95"][1]), f(r["ratio"], 3), f(r["ci95"][0], 3), f(r["ci95"][1], 3), w["p"], m.group(6),
                m.group(3), m.group(5), m.group(7), sha[:16]))
            bars.append(["\"np%d %s\"" % (np, kind), r["ratio"], r["ci95"][0], r["ci95"][1], float(m.group(6))])
    lines = ["# Speculative decoding against plain decoding: %s" % os.path.basename(a.model), "",
             "%d measured runs per side after %d warm-up(s), interleaved; -n %d, -t %d per rank; %s at the start, "
             "%s at the end." % (a.runs, a.warmups, a.n_gen, a.threads, load_start, runs.uptime()), "",
             "| np | text | plain tok/s (95% CI) | spec tok/s (95% CI) | speedup (95% CI) | Welch p | by c(B) "
             "| accepted | tokens/step | cost curve c(1..) | sha256 (both sides) |",
             "| ---: | --- | --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- |"] + rows + [
             "", "Commands (plain: the same with `--no-spec`; `<story>`: the model's greedy continuation of "
             "\"Once upon a time\", 80 tokens):", ""] + commands + [
             "", "## Environment", ""] + env.markdown(e) + ["", "![speedup](%s.png)" % a.name]
    report.write(os.path.join(a.out, a.name + ".md"), lines)
    report.plot(os.path.join(a.out, a.name + ".png"),
                'set ylabel "speedup (spec / plain)"\nset style fill solid 0.5\nset boxwidth 0.4\n'
                "set xtics rotate by -30\nset yrange [0:%r]\nset xrange [-0.6:%r]\nset key top left\nset grid ytics\n"
                % (1.15 * max(max(b[3], b[4], 1.0) for b in bars), len(bars) - 0.4) +
                "plot '<r>' using 0:2:xtic(1) with boxes title \"measured\", "
                "'' using 0:2:3:4 with yerrorbars pt 0 lc rgb \"black\" title \"95% CI\", "
                "'' using ($0 + 0.25):5 with points pt 7 title \"by c(B)\", 1 with lines dt 2 title \"\"",
                {"r": bars},
                title="Speculative decoding against plain: %s, np %s x %d threads" % (
                    os.path.basename(a.model), ",".join(map(str, a.nps)), a.threads))


if __name__ == "__main__":
    main()
