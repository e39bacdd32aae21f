#!/usr/bin/env python3
"""The decode-rate law: one long greedy generation (--ignore-eos, so that it runs its full length)
with r1pi's per-forward timings (--timings FILE.csv), and the least-squares line
t(L) = a + b*L of each decode token's time against its position L, with R^2.

b is the cost of one more position in the KV cache: every decode token reads the keys and values
of all earlier positions, kv_bytes = 2 (K and V) x layers x kv_dim x the bytes of one element per
position (4 with the exact F32 cache; --kv-type f16: 2, q8_0: 34 per 32) divided among the ranks
by KV head, so kv_bytes / b is the rate at which the cache is read. Also the
average rate over the whole generation and the plot of the rate against the position.

  bench/kv_law.py -m MODEL [-n 4096] [-t 2] [--np 1] [--kv-type f32|f16|q8_0]
  bench/kv_law.py --quick      (tiny preset, 256 tokens: seconds; what CI runs)
"""
import argparse
import os
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from r1pibench import cli, env, report, runs, stats  # noqa: E402

PROMPT = "Once upon a time"
KV_ELEMENT_BYTES = {"f32": 4.0, "f16": 2.0, "q8_0": 34 / 32}  # a q8_0 block: an f16 scale and 32 int8


def shrink(a):
    a.n_gen, a.threads, a.no_read_bw = 256, 1, True


def sharing_ranks(a):
    """How many ranks read this machine's memory at once: all of them when they run here."""
    return 1 if a.hostfile else a.np


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-m", "--model")
    p.add_argument("-n", "--n-gen", type=int, default=4096)
    p.add_argument("-t", "--threads", type=int, default=os.cpu_count())
    p.add_argument("--np", type=int, default=1, help="ranks (scripts/mpirun)")
    p.add_argument("--hostfile")
    p.add_argument("--kv-type", choices=sorted(KV_ELEMENT_BYTES), default="f32", help="r1pi's --kv-type")
    p.add_argument("--no-read-bw", action="store_true", help="do not measure the read bandwidth first")
    cli.add_common(p, "kv-law", "tiny preset, -n 256 -t 1")
    return cli.resolve(p.parse_args(), shrink)


def main():
    a = parse_args()
    info = runs.model_info(a.build, a.model)
    layers, dim = int(info["block_count"]), int(info["embedding_length"])
    heads, kv_heads = int(info["attention.head_count"]), int(info["attention.head_count_kv"])
    kv_bytes = 2 * layers * kv_heads * (dim // heads) * KV_ELEMENT_BYTES[a.kv_type] / a.np  # per position, per rank
    e = env.record(runs.SOURCE, a.model, a.hostfile)
    load_start = runs.uptime()
    # At the threads that read this machine's memory at once: threads per rank x the ranks here.
    read_bw = None if a.no_read_bw else runs.read_bandwidth(a.build, a.threads * sharing_ranks(a), reps=7, stat="median")
    timings = os.path.join(a.out, a.name + ".csv")
    cmd = runs.mpirun(a.np, a.hostfile) + [
        os.path.join(a.build, "r1pi"), "-m", a.model, "-p", PROMPT, "-n", a.n_gen, "--temp", 0, "--ignore-eos",
        "-t", a.threads, "-c", a.n_gen + 64, "--kv-type", a.kv_type, "--timings", timings]
    runs.progress("generating %d tokens (%s)" % (a.n_gen, load_start))
    _, err = runs.checked(cmd, timeout=24 * 3600)
    summary = runs.r1pi_summary(err)
    rows, _ = runs.decode_timings(timings)
    pos = [int(r["pos"]) for r in rows]
    ms = [float(r["pred_ms"]) + float(r["sync_ms"]) for r in rows]
    # The line runs under the bulk of the points: slow stretches of a shared machine (tokens at
    # several times the usual time) would lift and tilt a least-squares line.
    fit = stats.robust_linear_fit(pos, ms)
    plain = stats.linear_fit(pos, ms)
    average = len(ms) / (sum(ms) / 1e3)
    # The short-context rate measured rather than fitted: when the cache adds little to a token
    # (R^2 near 0, the machine's own slow phases dominating) the intercept is as noisy as the slope.
    edge = max(1, min(200, len(ms) // 10))
    first_rate, last_rate = edge / (sum(ms[:edge]) / 1e3), edge / (sum(ms[-edge:]) / 1e3)
    f = report.fmt
    kv_gbps = kv_bytes / (fit["b"] / 1e3) / 1e9 if fit["b"] > 0 else float("nan")
    lines = ["# Decode-rate law: %s, %d tokens" % (os.path.basename(a.model), a.n_gen), "",
             "`%s`" % shlex.join(map(str, cmd)), "",
             "%s at the start, %s at the end; one run." % (load_start, runs.uptime()), "",
             "| quantity | value |", "| --- | ---: |",
             "| decode tokens fitted | %d (positions %d..%d) |" % (len(ms), pos[0], pos[-1]),
             "| t(L) = a + b*L (Tukey biweight) | %s + %s*L ms |" % (f(fit["a"]), "%.6f" % fit["b"]),
             "| points with weight in that fit / at or below its line | %s / %s |" % (
                 f(fit["kept"], 3), f(fit["below"], 3)),
             "| R^2 of the weighted points | %.4f |" % fit["r2"],
             "| least squares over every point, R^2 | %s + %s*L ms, %.4f |" % (
                 f(plain["a"]), "%.6f" % plain["b"], plain["r2"]),
             "| KV bytes per position per rank (%s cache) | %d |" % (a.kv_type, kv_bytes),
             "| implied KV read rate (kv bytes / b)%s | %s GB/s |" % (", per rank" if a.np > 1 else "", f(kv_gbps))]
    if read_bw:
        # Local ranks read their caches at the same time from one memory: their rates add up.
        here = sharing_ranks(a)
        lines += ["| read bandwidth, %d threads (read_bandwidth, median) | %s GB/s |" % (a.threads * here, f(read_bw))]
        if here > 1:
            lines += ["| KV read rate of the %d ranks here together | %s GB/s |" % (here, f(here * kv_gbps))]
        lines += ["| KV read rate%s / read bandwidth | %s |" % (" of the ranks here" if here > 1 else "",
                                                             f(here * kv_gbps / read_bw))]
    lines += ["| rate at the first / last position | %s / %s tok/s |" % (f(1e3 / ms[0]), f(1e3 / ms[-1])),
              "| average rate over the generation | %s tok/s |" % f(average),
              "| short-context rate (1000 / a) | %s tok/s |" % f(1e3 / fit["a"]),
              "| average / short-context rate | %s |" % f(average * fit["a"] / 1e3, 3),
              "| first / last %d decode tokens, average rate | %s / %s tok/s |" % (edge, f(first_rate), f(last_rate)),
              "| average over the generation / the first %d tokens' | %s |" % (edge, f(average / first_rate, 3)),
              "| r1pi's decode line | %s tok/s |" % f(summary.get("decode", float("nan"))),
              "| sha256 | `%s` |" % summary["sha256"], "", "## Environment", ""] + env.markdown(e)
    lines += ["", "![rate against position](%s.png)" % a.name]
    report.write(os.path.join(a.out, a.name + ".md"), lines)
    step = max(1, len(ms) // 1000)  # the plot needs no more points than pixels
    report.plot(os.path.join(a.out, a.name + ".png"),
                'set xlabel "position L"\nset ylabel "decode tok/s"\nset key below\n'
                "plot '<r>' using 1:2 with points pt 7 ps 0.3 title \"measured\", "
                "1000 / (%r + %r * x) with lines lw 2 title \"1000 / (a + b L), biweight fit\"" % (fit["a"], fit["b"]),
                {"r": [[p, 1e3 / t] for p, t in list(zip(pos, ms))[::step]]},
                title="Decode rate against position: %s, np %d x %d threads, %s KV cache" % (
                    os.path.basename(a.model), a.np, a.threads, a.kv_type))


if __name__ == "__main__":
    main()
