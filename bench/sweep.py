#!/usr/bin/env python3
"""Sweeps with r1pi-bench: threads 1..T on one rank, ranks 1..R (here, or over a hostfile), and
the prefill batch size; and the bottleneck of decode at each rank count: Pred and Sync per token,
the weight bytes each rank reads per token and the implied GB/s against the rank's measured read
bandwidth (bench/read_bandwidth). r1pi-bench checks every test's output hash; a moved hash ends
the sweep.

  bench/sweep.py -m MODEL [-T 2] [-R 2] [--hostfile F] [-p 128] [-n 32] [-b 1,8,32,64] [-r 5]
  bench/sweep.py --quick      (tiny preset, 2 repetitions: seconds; what CI runs)
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from r1pibench import cli, env, report, runs  # noqa: E402


def shrink(a):
    a.threads, a.ranks, a.n_prompt, a.n_gen, a.batches, a.repetitions = 1, 2, 16, 8, "4,16", 2


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-m", "--model")
    p.add_argument("-T", "--threads", type=int, default=os.cpu_count(), help="threads per rank, up to")
    p.add_argument("-R", "--ranks", type=int, default=2, help="ranks, up to")
    p.add_argument("--hostfile", help="ranks over these hosts (each rank gets -T threads); else local ranks "
                                      "share the cores (T / np threads each)")
    p.add_argument("-p", "--n-prompt", type=int, default=128)
    p.add_argument("-n", "--n-gen", type=int, default=32)
    p.add_argument("-b", "--batches", default="1,8,32,64")
    p.add_argument("-r", "--repetitions", type=int, default=5)
    cli.add_common(p, "sweep", "tiny preset, -T 1 -R 2 -p 16 -n 8 -b 4,16 -r 2")
    return cli.resolve(p.parse_args(), shrink)


def main():
    a = parse_args()
    f = report.fmt
    e = env.record(runs.SOURCE, a.model, a.hostfile)
    lines = ["# Sweeps: %s" % os.path.basename(a.model), "",
             "r1pi-bench, %d repetitions after a warm-up per test; %s at the start." % (a.repetitions, runs.uptime()), ""]

    # ---- threads on one rank ----
    runs.progress("threads 1..%d" % a.threads)
    recs = runs.bench_json(a.build, ["-m", a.model, "-p", a.n_prompt, "-n", a.n_gen, "-t", "1-%d" % a.threads,
                                     "-r", a.repetitions])
    lines += ["## Threads (1 rank)", "", "| threads | test | tok/s | sd |", "| ---: | --- | ---: | ---: |"]
    lines += ["| %d | %s | %s | %s |" % (r["n_threads"], r["test"], f(r["avg_ts"]), f(r["stddev_ts"])) for r in recs]
    report.plot(os.path.join(a.out, a.name + "-threads.png"),
                'set xlabel "threads"\nset ylabel "tok/s"\nset xtics 1\nset key top left\n'
                "plot '<pp>' using 1:2:3 with yerrorlines title \"pp%d\", '<tg>' using 1:2:3 with yerrorlines "
                "title \"tg%d\"" % (a.n_prompt, a.n_gen),
                {t: [[r["n_threads"], r["avg_ts"], r["stddev_ts"]] for r in recs if r["test"].startswith(t)]
                 for t in ("pp", "tg")},
                title="Threads (1 rank): %s" % os.path.basename(a.model))

    # ---- ranks: decode, and where its time goes ----
    lines += ["", "## Ranks: decode and its bottleneck", "",
              "Pred: rank 0's compute per token; Sync: its waiting for and exchanging partial sums with the "
              "others. Weights: the matrix bytes rank 0 reads per decode token; GB/s: those bytes times tok/s, "
              "against the read bandwidth measured with rank 0's threads.", "",
              "| ranks | threads | tg%d tok/s | sd | Pred ms/tok | Sync ms/tok | weights MB/rank/tok | GB/s/rank | read GB/s | fraction |"
              % a.n_gen, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    bars = []
    for np in range(1, a.ranks + 1):
        t = a.threads if a.hostfile else max(1, a.threads // np)
        runs.progress("ranks %d x %d threads" % (np, t))
        r = runs.bench_json(a.build, ["-m", a.model, "-p", 0, "-n", a.n_gen, "-t", t, "-r", a.repetitions],
                            np, a.hostfile)[0]
        bw = runs.read_bandwidth(a.build, t, 2 if a.quick else 5)
        lines.append("| %d | %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            np, t, f(r["avg_ts"]), f(r["stddev_ts"]), f(r["avg_pred_ms"], 3), f(r["avg_sync_ms"], 3),
            f(r["weight_bytes_per_token"] / 1e6, 1), f(r["gbps_per_rank"]), f(bw) if bw else "n/a",
            f(r["gbps_per_rank"] / bw, 3) if bw else "n/a"))
        bars.append([np, r["avg_pred_ms"], r["avg_sync_ms"]])
    report.plot(os.path.join(a.out, a.name + "-ranks.png"),
                'set style data histograms\nset style histogram rowstacked\nset style fill solid 0.8 border -1\n'
                'set boxwidth 0.6\nset xlabel "ranks"\nset ylabel "ms per decode token (rank 0)"\nset yrange [0:*]\n'
                "plot '<bars>' using 2:xtic(1) title \"Pred\", '' using 3 title \"Sync\"",
                {"bars": bars},
                title="Decode time per token on rank 0 against ranks: %s" % os.path.basename(a.model))

    # ---- prefill batch size ----
    runs.progress("batch sizes " + a.batches)
    recs = runs.bench_json(a.build, ["-m", a.model, "-p", a.n_prompt, "-n", 0, "-b", a.batches, "-t", a.threads,
                                     "-r", a.repetitions])
    lines += ["", "## Prefill batch size (1 rank, %d threads)" % a.threads, "", "| n_batch | test | tok/s | sd |",
              "| ---: | --- | ---: | ---: |"]
    lines += ["| %d | %s | %s | %s |" % (r["n_batch"], r["test"], f(r["avg_ts"]), f(r["stddev_ts"])) for r in recs]
    report.plot(os.path.join(a.out, a.name + "-batch.png"),
                'set xlabel "prefill batch (tokens per forward)"\nset ylabel "pp%d tok/s"\nset logscale x 2\n'
                "plot '<b>' using 1:2:3 with yerrorlines notitle" % a.n_prompt,
                {"b": [[r["n_batch"], r["avg_ts"], r["stddev_ts"]] for r in recs]},
                title="Prefill against batch size: %s, %s threads" % (os.path.basename(a.model), a.threads))

    lines += ["", "%s at the end." % runs.uptime(), "", "## Environment", ""] + env.markdown(e)
    lines += ["", "![threads](%s-threads.png)" % a.name, "![ranks](%s-ranks.png)" % a.name,
              "![batch](%s-batch.png)" % a.name]
    report.write(os.path.join(a.out, a.name + ".md"), lines)


if __name__ == "__main__":
    main()
