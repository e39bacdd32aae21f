#!/usr/bin/env python3
"""The server's aggregate and per-stream decode speed against the number of concurrent clients
(--parallel: continuous batching), and how long running streams pause when a long prompt joins.

usage: concurrency.py -m MODEL [--clients 1,2,4,8] [--tokens 64] [--threads 2] [--np 1]
                      [--reps 3] [--join-prompt 2000] [--out DIR] [--build DIR]

One server, started with --parallel (the largest client count) and -b 64 (the prefill chunk).
For each client count C (the counts interleaved, --reps rounds) C streaming completions start at
once, each with its own prompt, temperature 0, ignore_eos and --tokens tokens; a stream's time
runs from its first streamed token to its last. Aggregate tok/s: every stream's tokens after its
first over the span from the earliest first token to the latest last one; per-stream tok/s: each
stream's own rate, averaged. The gain of C streams is their aggregate over one stream's.
The join: three streams decode, then a request with a --join-prompt-token prompt arrives; each
stream's longest gap between tokens while that prompt is prefilled (in chunks of -b beside
them) is compared with its median gap before.
Writes concurrency-<model>.md, .csv and .png to --out (default ~/r1pi-results/<date>-<host>)."""
import argparse
import atexit
import http.client
import json
import os
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from r1pibench import report, runs  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("-m", "--model", required=True)
ap.add_argument("--clients", default="1,2,4,8")
ap.add_argument("--tokens", type=int, default=64)
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--np", type=int, default=1, help="ranks (scripts/mpirun on this machine)")
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--join-prompt", type=int, default=2000, help="tokens of the joining prompt (0: no join test)")
ap.add_argument("--port", type=int, default=18790)
ap.add_argument("--out")
ap.add_argument("--build")
a = ap.parse_args()
counts = [int(c) for c in a.clients.split(",")]
build = runs.build_dir(a.build)
name = os.path.splitext(os.path.basename(a.model))[0]


def stream(prompt, max_tokens, times, ignore_eos=True):
    """Sends one streaming completion; appends each token's arrival time to times."""
    conn = http.client.HTTPConnection("127.0.0.1", a.port, timeout=3600)
    body = {"prompt": prompt, "max_tokens": max_tokens, "temperature": 0, "stream": True, "ignore_eos": ignore_eos}
    conn.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
    res = conn.getresponse()
    if res.status != 200:
        runs.die("the server answered %d: %s" % (res.status, res.read()[:200]))
    buffer = b""
    while True:
        chunk = res.read1(65536)
        if not chunk:
            break
        buffer += chunk
        while b"\n\n" in buffer:
            event, buffer = buffer.split(b"\n\n", 1)
            data = event[6:]
            if data != b"[DONE]" and json.loads(data)["choices"]:
                times.append(time.perf_counter())
    conn.close()


def n_tokens(text):
    conn = http.client.HTTPConnection("127.0.0.1", a.port, timeout=600)
    conn.request("POST", "/tokenize", json.dumps({"content": text, "add_special": True}), {"Content-Type": "application/json"})
    n = len(json.loads(conn.getresponse().read())["tokens"])
    conn.close()
    return n


def concurrent(n, round_no):
    times = [[] for _ in range(n)]
    threads = [threading.Thread(target=stream, args=("Round %d, story %d: once upon a time" % (round_no, i), a.tokens, times[i]))
               for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    first, last = min(t[0] for t in times), max(t[-1] for t in times)
    aggregate = sum(len(t) - 1 for t in times) / (last - first)
    per_stream = statistics.mean((len(t) - 1) / (t[-1] - t[0]) for t in times)
    return aggregate, per_stream


def join_test():
    """Three streams, then a long prompt: each stream's median gap before, its longest during."""
    times = [[] for _ in range(3)]
    streams = [threading.Thread(target=stream, args=("Join test, story %d" % i, 10 ** 6, times[i])) for i in range(3)]
    for t in streams:
        t.start()
    while min(len(t) for t in times) < 20:
        time.sleep(0.01)
    # A prompt of --join-prompt tokens or a few less (the server's tokenizer counts), one token back.
    prompt = " ".join("w%d" % (i % 97) for i in range(a.join_prompt))
    while True:
        n = n_tokens(prompt)
        if n <= a.join_prompt:
            break
        prompt = prompt[:int(len(prompt) * a.join_prompt / n) - 1]
    start = time.perf_counter()
    stream(prompt, 1, [], ignore_eos=False)
    end = time.perf_counter()
    rows = []
    for t in times:
        before = [y - x for x, y in zip(t, t[1:]) if y < start]
        during = [y - x for x, y in zip(t, t[1:]) if start < y <= end + (statistics.median(before) if before else 0)]
        rows.append((statistics.median(before), max(during) if during else 0.0))
    return end - start, rows


n_ctx = max(a.tokens + 64, a.join_prompt + 64)
cmd = runs.mpirun(a.np) + [os.path.join(build, "r1pi"), "-m", a.model, "--serve", "--port", str(a.port), "-t",
                           str(a.threads), "--parallel", str(max(counts + [4])), "-c", str(n_ctx), "-b", "64"]
server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
atexit.register(server.terminate)  # also when a check below ends the script
line = b""
while b"listening on" not in line:
    line = server.stderr.readline()
    if not line:
        runs.die("the server did not start: " + " ".join(cmd))
threading.Thread(target=lambda: [None for _ in iter(server.stderr.readline, b"")], daemon=True).start()
stream("Warm-up", 8, [])

results = {n: [] for n in counts}
for r in range(a.reps):
    for n in counts if r % 2 == 0 else reversed(counts):
        runs.progress("round %d: %d client(s)" % (r + 1, n))
        results[n].append(concurrent(n, r))
join = None
if a.join_prompt:
    runs.progress("a %d-token prompt joins three streams" % a.join_prompt)
    # The three streams run until the server stops: the join test is the last thing measured.
    join = join_test()
server.terminate()
server.wait()

one = statistics.mean(x[0] for x in results[counts[0]]) if counts[0] == 1 else None
out = report.results_dir(a.out)
base = os.path.join(out, "concurrency-%s" % name)
lines = ["# Concurrent clients on %s (--parallel %d, %d rank(s) x %d threads, %d tokens each)" %
         (name, max(counts + [4]), a.np, a.threads, a.tokens), "",
         "`bench/server/concurrency.py -m %s --clients %s --tokens %d --threads %d --np %d --reps %d`" %
         (a.model, a.clients, a.tokens, a.threads, a.np, a.reps), "",
         "| clients | aggregate tok/s (each round) | mean | gain over one | per-stream tok/s |",
         "|---|---|---|---|---|"]
csv = ["clients,round,aggregate_tok_s,per_stream_tok_s"]
rows = []
for n in counts:
    agg = [x[0] for x in results[n]]
    per = statistics.mean(x[1] for x in results[n])
    gain = statistics.mean(agg) / one if one else float("nan")
    lines.append("| %d | %s | %s | %s | %s |" % (n, " ".join(report.fmt(x) for x in agg), report.fmt(statistics.mean(agg)),
                                                report.fmt(gain), report.fmt(per)))
    csv += ["%d,%d,%.3f,%.3f" % (n, i + 1, x[0], x[1]) for i, x in enumerate(results[n])]
    rows.append((n, statistics.mean(agg), per))
if join:
    seconds, gaps = join
    lines += ["", "A %d-token prompt joining three streams (prefilled in %.2f s, in chunks of 64 beside them): "
              "each stream's median gap between tokens before it, and its longest gap while it was prefilled:" %
              (a.join_prompt, seconds), "", "| stream | median gap ms | longest gap ms | in token times |", "|---|---|---|---|"]
    for i, (median, longest) in enumerate(gaps):
        lines.append("| %d | %.1f | %.1f | %.1f |" % (i, 1e3 * median, 1e3 * longest, longest / median))
report.write(base + ".md", lines)
report.write(base + ".csv", csv)
report.plot(base + ".png", """set xlabel "concurrent clients"
set ylabel "tok/s"
set key left top
set logscale x 2
set xtics (%s)
plot '<d>' using 1:2 with linespoints title "aggregate", '<d>' using 1:3 with linespoints title "per stream", \\
     '<d>' using 1:($1*%f) with lines dashtype 2 title "linear in clients"
""" % (",".join(str(n) for n in counts), rows[0][1] / rows[0][0]), {"d": rows},
            title="%s: decode tok/s against concurrent clients (--parallel)" % name)
