#!/usr/bin/env python3
"""A/B: two command lines (two builds, two configurations: anything that prints r1pi's summary),
run interleaved, W warm-ups then N measured runs each, in the order A B B A A B ... so that a slow
drift of the machine falls on both sides alike.

Reports the chosen rate (decode or prefill tok/s) of each side with mean, sd, 95% CI (Student t),
min/max, p50/p90/p99; Welch's t-test and the ratio B/A with its 95% CI. Every run's sha256 must
equal its side's first (the output is the same or the number means nothing). The environment is
recorded before every run; a change of governor, kernel, Open MPI, THP and the like between runs
ends the comparison (--allow-env-change: report it instead).

  bench/ab.py --a 'build/r1pi -m M -p "..." -n 64 --temp 0 -t 1' --b '... -t 2' [-N 20] [-W 2]
  bench/ab.py --quick        (tiny preset, 3 runs after 1 warm-up: seconds; what CI runs)
"""
import argparse
import os
import re
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from r1pibench import env, report, runs, stats  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--a", help="command line A (a shell line)")
    p.add_argument("--b", help="command line B")
    p.add_argument("--label-a", default="A")
    p.add_argument("--label-b", default="B")
    p.add_argument("-N", "--runs", type=int, default=20)
    p.add_argument("-W", "--warmups", type=int, default=2)
    p.add_argument("--metric", choices=("decode", "prefill"), default="decode", help="which tok/s")
    p.add_argument("--hostfile", help="recorded in the environment (the commands use it themselves)")
    p.add_argument("--allow-env-change", action="store_true", help="report a changed environment instead of failing")
    p.add_argument("--name", default="ab", help="report file name (NAME.md, NAME.png)")
    p.add_argument("--out", help="results folder (default ~/r1pi-results/<date>-<host>, or $R1PI_RESULTS_DIR/<date>-<host>)")
    p.add_argument("--build", help="build folder for --quick (default build/)")
    p.add_argument("--quick", action="store_true", help="tiny preset, -N 3 -W 1, -b 64 against -b 1")
    a = p.parse_args()
    if a.quick:
        build = runs.build_dir(a.build)
        out = report.results_dir(a.out)
        model = runs.make_model(build, "tiny", os.path.join(out, "tiny.gguf"))
        line = "%s/r1pi -m %s -p 'Once upon a time' -n 32 --temp 0 -c 256" % (build, model)
        a.a, a.b, a.label_a, a.label_b = line + " -t 1 -b 64", line + " -t 1 -b 1", "-b 64", "-b 1"
        a.runs, a.warmups, a.out = 3, 1, out
    if not a.a or not a.b:
        runs.die("give --a and --b (or --quick)")
    if a.runs < 2:
        runs.die("-N must be at least 2 (a standard deviation needs two runs)")
    return a


def model_of(line):
    """The -m/--model file of a command line, for the environment record."""
    words = shlex.split(line)
    for i, w in enumerate(words[:-1]):
        if w in ("-m", "--model"):
            return words[i + 1]
    m = re.match(r"--model=(.*)", next((w for w in words if w.startswith("--model=")), ""))
    return m.group(1) if m else None


def main():
    a = parse_args()
    out = report.results_dir(a.out)
    sides = {"A": a.a, "B": a.b}
    labels = {"A": a.label_a, "B": a.label_b}
    models = {s: model_of(line) for s, line in sides.items()}
    start_env = env.record(runs.SOURCE, hostfile=a.hostfile)
    side_env = {s: env.record(runs.SOURCE, models[s], a.hostfile) if models[s] else start_env for s in sides}
    load_start = runs.uptime()
    # ABBA order: the pair's order alternates, so neither side always runs first.
    order = []
    for i in range(a.warmups + a.runs):
        order += ["A", "B"] if i % 2 == 0 else ["B", "A"]
    rates = {"A": [], "B": []}
    hashes = {"A": None, "B": None}
    samples = {"A": [], "B": []}  # env before each measured run
    problems = []
    for k, side in enumerate(order):
        i = k // 2
        before = env.record(runs.SOURCE, hostfile=a.hostfile)
        problems += ["before %s run %d: %s" % (side, i + 1, c) for c in env.changes(start_env, before)]
        rc, _, err = runs.run(sides[side])
        if rc != 0:
            runs.die("%s (%s) exited %d:\n%s" % (side, sides[side], rc, err[-2000:]))
        s = runs.r1pi_summary(err)
        if a.metric not in s or not s["sha256"]:
            runs.die("%s printed no %s rate and sha256 (is it r1pi?):\n%s" % (side, a.metric, err[-2000:]))
        if hashes[side] is None:
            hashes[side] = s["sha256"]
        elif s["sha256"] != hashes[side]:
            runs.die("%s run %d: sha256 %s, its first run %s: the output moved" % (side, i + 1, s["sha256"], hashes[side]))
        warm = i < a.warmups
        runs.progress("%s %s %d/%d: %.2f tok/s%s" % (side, labels[side], i + 1, a.warmups + a.runs, s[a.metric],
                                                     " (warm-up)" if warm else ""))
        if not warm:
            rates[side].append(s[a.metric])
            samples[side].append(before)
    if problems and not a.allow_env_change:
        runs.die("the environment changed during the comparison:\n  " + "\n  ".join(problems))
    write_report(a, out, sides, labels, rates, hashes, samples, start_env, side_env, problems, load_start)


def side_means(samples, key):
    xs = [e[key] for e in samples if isinstance(e[key], (int, float))]
    return stats.mean(xs) if xs else None


def write_report(a, out, sides, labels, rates, hashes, samples, start_env, side_env, problems, load_start):
    sa, sb = stats.summary(rates["A"]), stats.summary(rates["B"])
    w = stats.welch(rates["A"], rates["B"])
    r = stats.ratio_ci(rates["A"], rates["B"])
    f = report.fmt
    lines = ["# A/B: %s against %s (%s tok/s)" % (a.label_b, a.label_a, a.metric), "",
             "%d measured runs per side after %d warm-up(s), interleaved A B B A ...; %s at the start, %s at the end."
             % (a.runs, a.warmups, load_start, runs.uptime()), "",
             "- A (%s): `%s`" % (labels["A"], sides["A"]), "- B (%s): `%s`" % (labels["B"], sides["B"]), "",
             "| side | mean | sd | 95% CI | min | max | p50 | p90 | p99 | sha256 |",
             "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for side, s in (("A", sa), ("B", sb)):
        lines.append("| %s %s | %s | %s | %s .. %s | %s | %s | %s | %s | %s | `%s` |" % (
            side, labels[side], f(s["mean"]), f(s["sd"]), f(s["ci95"][0]), f(s["ci95"][1]), f(s["min"]), f(s["max"]),
            f(s["p50"]), f(s["p90"]), f(s["p99"]), hashes[side][:16]))
    lines += ["", "B / A = **%s** (95%% CI %s .. %s); Welch's t = %s, df = %s, p = %.3g." % (
        f(r["ratio"], 3), f(r["ci95"][0], 3), f(r["ci95"][1], 3), f(w["t"]), f(w["df"], 1), w["p"]),
        "Same output on both sides: %s." % ("yes" if hashes["A"] == hashes["B"] else "no (different sha256)"), ""]
    lines += ["## Environment", ""]
    if problems:
        lines += ["**Changed during the comparison (--allow-env-change):**", ""] + ["- " + p for p in problems] + [""]
    else:
        lines += ["Unchanged before every run: %s." % ", ".join(env.STATIC), ""]
    for key, unit in (("frequency_mhz", "MHz"), ("temperature_c", "C")):
        ma, mb = side_means(samples["A"], key), side_means(samples["B"], key)
        if ma is not None and mb is not None:
            lines.append("- mean %s before A's runs %.1f %s, before B's %.1f %s" % (key, ma, unit, mb, unit))
    for side in ("A", "B"):
        lines.append("- model of %s: sha256 `%s`" % (side, side_env[side]["model_sha256"]))
    lines += [""] + env.markdown(start_env) + ["", "![runs](%s.png)" % a.name]
    report.write(os.path.join(out, a.name + ".md"), lines)
    report.plot(os.path.join(out, a.name + ".png"),
                'set xlabel "measured run"\nset ylabel "%s tok/s"\nset key outside top center horizontal\n'
                "plot '<a>' using 1:2 with linespoints title \"A %s\", '<b>' using 1:2 with linespoints title \"B %s\""
                % (a.metric, labels["A"].replace('"', ""), labels["B"].replace('"', "")),
                {"a": list(enumerate(rates["A"], 1)), "b": list(enumerate(rates["B"], 1))},
                title="A/B: %s tok/s per measured run, interleaved" % a.metric)


if __name__ == "__main__":
    main()
