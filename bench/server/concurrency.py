#!/usr/bin/env python3
"""The server's aggregate and per-stream decode speed against the number of concurrent clients
(--parallel: continuous batching), and how long running streams pause when a long prompt joins.

usage: concurrency.py -m MODEL [--clients 1,2,4,8] [--tokens 128] [--threads 2] [--np 1]
                      [--reps 3] [--join-prompt 2000] [--server-args FLAGS] [--out DIR]
                      [--build DIR]

One server, started with --parallel (the largest client count), -b 64 and --parallel-chunk --chunk.
For each client count C (the counts interleaved, --reps rounds) C completions start at once, each
with its own prompt, temperature 0, ignore_eos and --tokens tokens; the server's timings of each
answer (predicted_n tokens decoded in predicted_ms, ending when it arrived) give its decode span.
Aggregate tok/s: every answer's tokens over the span from the earliest decode start to the last
end; per-stream tok/s: each answer's own rate, averaged. The gain of C streams is their aggregate over one stream's.
The join: three streams decode, then a request with a --join-prompt-token prompt arrives; the
server's --timings rows give the forwards' times (each stream waits one forward per token): the
forwards that carried a chunk of the prompt (--parallel-chunk; median and longest) against the
median of the three alone.
Writes concurrency-<model>.md, .csv and .png to --out (default ~/r1pi-results/<date>-<host>)."""
import argparse
import atexit
import csv
import http.client
import json
import os
import socket
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
ap.add_argument("--tokens", type=int, default=128)
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--np", type=int, default=1, help="ranks (scripts/mpirun on this machine)")
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--join-prompt", type=int, default=2000, help="tokens of the joining prompt (0: no join test)")
ap.add_argument("--chunk", type=int, default=8, help="the server's --parallel-chunk")
ap.add_argument("--port", type=int, default=18790)
ap.add_argument("--server-args", default="", help="more flags for the server, e.g. '--spec'")
ap.add_argument("--out")
ap.add_argument("--build")
a = ap.parse_args()
counts = [int(c) for c in a.clients.split(",")]
build = runs.build_dir(a.build)
name = os.path.splitext(os.path.basename(a.model))[0]


def post(body, until=None, opened=None):
    """One completion. Whole: returns the answer's timings (llama.cpp's names: prompt_ms,
    predicted_n, predicted_ms) and when it ended. Streamed when `until` (a threading.Event) is
    given: read to its end, or until another thread shuts the connection (it goes into `opened`)
    once `until` is set (a random model's tokens may have no text, so events cannot tell when to
    stop); no timings then."""
    conn = http.client.HTTPConnection("127.0.0.1", a.port, timeout=3600)
    if opened is not None:
        opened.append(conn)
    conn.request("POST", "/v1/completions", json.dumps(dict(body, stream=until is not None)),
                 {"Content-Type": "application/json"})
    res = conn.getresponse()
    if res.status != 200:
        runs.die("the server answered %d: %s" % (res.status, res.read()[:200]))
    timings = None
    if until is None:
        timings = json.loads(res.read())["timings"]
    else:
        try:
            while res.read1(65536):
                pass
        except (OSError, http.client.HTTPException):
            if not until.is_set():
                raise
        res.close()  # (the response holds the socket open past conn.close())
    conn.close()
    return timings, time.perf_counter()


def call(method, path, body=None):
    """A request's answer as text."""
    conn = http.client.HTTPConnection("127.0.0.1", a.port, timeout=600)
    conn.request(method, path, body and json.dumps(body), {"Content-Type": "application/json"})
    text = conn.getresponse().read().decode()
    conn.close()
    return text


def forwards():
    """The batches the server has run (/metrics)."""
    return next(int(line.split()[1]) for line in call("GET", "/metrics").splitlines()
                if line.startswith("r1pi_batch_forwards_total "))


def n_tokens(text):
    return len(json.loads(call("POST", "/tokenize", {"content": text, "add_special": True}))["tokens"])


def concurrent(n, round_no):
    """n requests at once. A request's decode ran for its predicted_ms up to its end: the aggregate
    is every request's tokens over the span from the earliest such start to the last end; a
    stream's rate its own tokens over its own decode time (batches included)."""
    done = [None] * n

    def one(i):
        done[i] = post({"prompt": "Round %d, story %d: once upon a time" % (round_no, i), "max_tokens": a.tokens,
                        "temperature": 0, "ignore_eos": True})
    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    first = min(end - t["predicted_ms"] / 1e3 for t, end in done)
    last = max(end for _, end in done)
    aggregate = sum(t["predicted_n"] for t, _ in done) / (last - first)
    per_stream = statistics.mean(t["predicted_n"] / (t["predicted_ms"] / 1e3) for t, _ in done)
    return aggregate, per_stream


def join_test():
    """Three streams decode, then a long prompt joins: the forwards' times from the server's
    --timings rows (a stream waits one forward per token): the median of the three streams' own
    forwards before, the longest forward that carried a chunk of the prompt with them."""
    skip = sum(1 for _ in open(timings_csv)) - 1  # the rows of the rounds before (a row per line)
    stop = threading.Event()
    opened = []
    streams = [threading.Thread(target=post, args=({"prompt": "Join test, story %d" % i, "max_tokens": n_ctx - 32,
                                                    "temperature": 0, "ignore_eos": True},
                                                   stop, opened)) for i in range(3)]
    for t in streams:
        t.start()
    # A few forwards of the three alone (/slots counts text, which a random model may not give).
    while sum(slot["is_processing"] for slot in json.loads(call("GET", "/slots"))) < 3:
        time.sleep(0.2)
    first = forwards()
    while forwards() < first + 8:
        time.sleep(0.2)
    # A prompt of --join-prompt tokens or a few less (the server's tokenizer counts), one token back.
    prompt = " ".join("w%d" % (i % 97) for i in range(a.join_prompt))
    while True:
        n = n_tokens(prompt)
        if n <= a.join_prompt:
            break
        prompt = prompt[:int(len(prompt) * a.join_prompt / n) - 1]
    timings, _ = post({"prompt": prompt, "max_tokens": 1, "temperature": 0})
    time.sleep(0.3)
    stop.set()
    for conn in opened:  # the server sees them gone before its next token
        try:
            conn.sock.shutdown(socket.SHUT_RDWR)
        except (AttributeError, OSError):  # (already closed)
            pass
    for t in streams:
        t.join()
    rows = [(int(r["tokens"]), float(r["pred_ms"]) + float(r["sync_ms"])) for r in csv.DictReader(open(timings_csv))][skip:]
    decode = [ms for tokens, ms in rows if tokens == 3]
    joined = [ms for tokens, ms in rows if tokens > 3]
    return n, timings["prompt_ms"] / 1e3, statistics.median(decode), statistics.median(joined), max(joined), len(joined)


n_ctx = max(a.tokens + 64, a.join_prompt + 64)
out = report.results_dir(a.out)
base = os.path.join(out, "concurrency-%s" % name)
timings_csv = base + ".forwards.csv"
cmd = runs.mpirun(a.np) + [os.path.join(build, "r1pi"), "-m", a.model, "--serve", "--port", str(a.port), "-t",
                           str(a.threads), "--parallel", str(max(counts + [4])), "-c", str(n_ctx), "-b", "64",
                           "--parallel-chunk", str(a.chunk), "--timings", timings_csv] + a.server_args.split()
server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
atexit.register(server.terminate)  # also when a check below ends the script
line = b""
while b"listening on" not in line:
    line = server.stderr.readline()
    if not line:
        runs.die("the server did not start: " + " ".join(cmd))
threading.Thread(target=lambda: [None for _ in iter(server.stderr.readline, b"")], daemon=True).start()
post({"prompt": "Warm-up", "max_tokens": 8})

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
lines = ["# Concurrent clients on %s (--parallel %d, %d rank(s) x %d threads, %d tokens each)" %
         (name, max(counts + [4]), a.np, a.threads, a.tokens), "",
         "`bench/server/concurrency.py -m %s --clients %s --tokens %d --threads %d --np %d --reps %d --join-prompt %d --chunk %d%s`" %
         (a.model, a.clients, a.tokens, a.threads, a.np, a.reps, a.join_prompt, a.chunk,
          " --server-args '%s'" % a.server_args if a.server_args else ""), "",
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
    n, seconds, decode_ms, joined_ms, longest_ms, chunks = join
    lines += ["", ("A %d-token prompt joining three streams, prefilled in %d chunks of up to %d (--parallel-chunk) "
                   "beside them (%.2f s): the streams' forward alone took %.1f ms (median), with a chunk %.1f ms "
                   "(median; longest %.1f ms): a pause of %.1f of their token times (longest %.1f; the server's "
                   "--timings rows).") %
              (n, chunks, a.chunk, seconds, decode_ms, joined_ms, longest_ms, joined_ms / decode_ms, longest_ms / decode_ms)]
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
