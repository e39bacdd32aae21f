#!/usr/bin/env python3
"""Time to first token and decode speed through the server's API against the CLI, on one model,
and the server's memory idle and under concurrent clients.

usage: api_vs_cli.py R1PI MODEL [--reps N] [--tokens N] [--threads N] [--clients N]

The same prompt both ways: a one-message chat rendered with DeepSeek-R1's template (the model
must have R1's special tokens) given to the CLI with -p, and sent to /v1/chat/completions with
stream: true at temperature 0 (so the answers are the same tokens). Each run has a prompt of its
own, so that the server's prompt cache holds only BOS and <｜User｜> of it. CLI: TTFT is the prefill
time it prints (the first token is shown as soon as the prefill has chosen it), tok/s its decode
line. API: TTFT is measured by the client from sending the request to the first streamed delta,
tok/s from the tokens after the first and the time to the last; the server's own timings are
shown beside them. The runs alternate (CLI, API, API, CLI, ...); each side is given as its mean with
a 95% CI, and API / CLI as the ratio of the means with its 95% CI and Welch's p (bench/r1pibench).
Both sides run with --timings, which times each forward: a decode token's time less its forward's
(Pred + Sync) is what the loop around the forwards adds (the CLI: printing; the server: the text
split, stop strings, the hand-over to the HTTP thread and that thread's work where it takes a
core). Unlike the rates, this difference leaves out how fast the forwards themselves ran, which
moves by 10% from run to run on a busy 2-core machine.
Memory: VmRSS of the server process after loading, and its VmHWM after N clients at once (each
asks for --tokens)."""
import argparse
import http.client
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from r1pibench import runs, stats  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("r1pi")
ap.add_argument("model")
ap.add_argument("--reps", type=int, default=10)
ap.add_argument("--tokens", type=int, default=64)
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--clients", type=int, default=20)
ap.add_argument("--port", type=int, default=18765)
a = ap.parse_args()
question = "Why is the sky blue? Explain it to a child in a few sentences."


def rendered(user):
    return f"<｜User｜>{user}<｜Assistant｜><think>\n"


scratch = tempfile.mkdtemp(prefix="api_vs_cli.")
cli_timings, server_timings = os.path.join(scratch, "cli.csv"), os.path.join(scratch, "server.csv")


def forward_ms(rows):
    return statistics.mean(float(r["pred_ms"]) + float(r["sync_ms"]) for r in rows)


def cli_once(user):
    err = subprocess.run([a.r1pi, "-m", a.model, "-p", rendered(user), "-n", str(a.tokens), "--temp", "0", "-t", str(a.threads),
                          "--timings", cli_timings],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True).stderr.decode()
    prefill_n, prefill_tps = re.search(r"prefill: (\d+) tokens, ([0-9.]+) tok/s", err).groups()
    decode_n, decode_tps = re.search(r"decode: (\d+) tokens, ([0-9.]+) tok/s", err).groups()
    rows, _ = runs.decode_timings(cli_timings)
    return {"ttft_ms": 1e3 * int(prefill_n) / float(prefill_tps), "tok_s": float(decode_tps),
            "between_ms": 1e3 / float(decode_tps) - forward_ms(rows)}


def api_once(user, max_tokens=None):
    conn = http.client.HTTPConnection("127.0.0.1", a.port, timeout=600)
    body = {"messages": [{"role": "user", "content": user}], "temperature": 0, "max_tokens": max_tokens or a.tokens,
            "stream": True, "stream_options": {"include_usage": True}}
    start = time.perf_counter()
    conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    res = conn.getresponse()
    first = last = None
    pieces, timings, buffer = 0, None, b""
    while True:
        chunk = res.read1(65536)
        if not chunk:
            break
        buffer += chunk
        while b"\n\n" in buffer:
            event, buffer = buffer.split(b"\n\n", 1)
            data = event[6:]
            if data == b"[DONE]":
                continue
            j = json.loads(data)
            if j.get("timings"):
                timings = j["timings"]
            if j["choices"] and (j["choices"][0]["delta"].get("reasoning_content") or j["choices"][0]["delta"].get("content")):
                now = time.perf_counter()
                first = first or now
                last = now
                pieces += 1
    n = timings["predicted_n"]
    return {"ttft_ms": 1e3 * (first - start), "tok_s": (n - 1) / (last - first),
            "server_prompt_ms": timings["prompt_ms"], "server_tok_s": timings["predicted_per_second"]}


def rss(pid, field):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field):
            return int(line.split()[1]) / 1024
    return 0.0


server = subprocess.Popen([a.r1pi, "-m", a.model, "--serve", "--port", str(a.port), "-t", str(a.threads),
                           "--timings", server_timings],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
while b"listening on" not in server.stderr.readline():
    pass
api_once("Hello", 4)  # the server's first request: pages of the model mapped in, as the CLI's runs have them cached
idle = rss(server.pid, "VmRSS")


def api_timed(user):
    _, before = runs.decode_timings(server_timings)
    run = api_once(user)
    rows, _ = runs.decode_timings(server_timings, before)
    run["between_ms"] = 1e3 / run["tok_s"] - forward_ms(rows)
    return run


cli_runs, api_runs = [], []
for rep in range(a.reps):  # interleaved (ABBA), so that drifts in the machine's load hit both
    user = f"Question {rep + 1}. {question}"
    if rep % 2 == 0:
        cli_runs.append(cli_once(user))
        api_runs.append(api_timed(user))
    else:
        api_runs.append(api_timed(user))
        cli_runs.append(cli_once(user))


def side(runs, k, digits=2):
    s = stats.summary([r[k] for r in runs])
    return f"{s['mean']:.{digits}f} ({s['ci95'][0]:.{digits}f} .. {s['ci95'][1]:.{digits}f})"


def versus(k):
    cli, api = [r[k] for r in cli_runs], [r[k] for r in api_runs]
    r = stats.ratio_ci(cli, api)
    return f"{r['ratio']:.3f} ({r['ci95'][0]:.3f} .. {r['ci95'][1]:.3f}), Welch's p {stats.welch(cli, api)['p']:.2g}"


med = lambda runs, k: statistics.median(r[k] for r in runs)
print(f"prompt: {len(rendered(question).encode())} bytes and a number, {a.tokens} tokens generated, -t {a.threads}, "
      f"{a.reps} runs each, interleaved (means with 95% CIs)")
print(f"CLI: TTFT {side(cli_runs, 'ttft_ms')} ms, decode {side(cli_runs, 'tok_s')} tok/s")
print(f"API: TTFT {side(api_runs, 'ttft_ms')} ms (server prefill median {med(api_runs, 'server_prompt_ms'):.1f} ms), "
      f"decode {side(api_runs, 'tok_s')} tok/s at the client, median {med(api_runs, 'server_tok_s'):.2f} in the server")
print(f"API / CLI: TTFT {versus('ttft_ms')}; decode tok/s {versus('tok_s')}")
token_ms = statistics.mean(1e3 / r["tok_s"] for r in cli_runs)
extra = statistics.mean(r["between_ms"] for r in api_runs) - statistics.mean(r["between_ms"] for r in cli_runs)
print(f"per decode token outside its forward (--timings): CLI {side(cli_runs, 'between_ms', 3)} ms, "
      f"API {side(api_runs, 'between_ms', 3)} ms; the API's extra {extra:.3f} ms is "
      f"{100 * extra / token_ms:.2f}% of the CLI's {token_ms:.2f} ms token")
threads = [threading.Thread(target=api_once, args=(f"Client {i}. {question}",)) for i in range(a.clients)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(f"server memory: idle {idle:.1f} MB RSS, peak {rss(server.pid, 'VmHWM'):.1f} MB after {a.clients} concurrent clients")
server.terminate()
server.wait()
shutil.rmtree(scratch)
