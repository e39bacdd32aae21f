#!/usr/bin/env python3
"""r1pi --chat as a person meets it: through a pseudo-terminal (line editing, dimmed reasoning),
or with its input piped (under mpirun rank 0 reads a pipe). Every answer must be the CLI's text
for the same conversation rendered with the same template (greedy), a second turn must come
partly from the KV cache (/stats), /reset must give the first answer again, Ctrl-C must stop an
answer without ending the chat, /quit must end it with status 0.

usage: chat_pty.py R1PI MODEL NP [MPIRUN]   (the model has DeepSeek-R1's specials)"""
import os
import pty
import re
import select
import subprocess
import sys
import time

r1pi, model, np = sys.argv[1], sys.argv[2], int(sys.argv[3])
mpirun = sys.argv[4] if len(sys.argv) > 4 else None
prefix = [mpirun, "-np", str(np), "--"] if np > 1 else []
base = prefix + [r1pi, "-m", model, "-t", "1"]
failures = 0
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def check(ok, what, detail=""):
    global failures
    print(("PASS: " if ok else "FAIL: ") + what + ("" if ok else ": " + detail))
    failures += 0 if ok else 1


def cli(prompt, n):
    out = subprocess.run(base + ["-p", prompt, "-n", str(n), "--temp", "0"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, timeout=120, check=True).stdout
    return out[:-1].decode("utf-8", "replace")


def split(text):
    end = text.find("</think>")
    return (text, "") if end < 0 else (text[:end], text[end + 8:])


def turn(user, answer):
    return f"<｜User｜>{user}<｜Assistant｜>{answer}<｜end▁of▁sentence｜>"


def ask(user):
    return f"<｜User｜>{user}<｜Assistant｜><think>\n"


# The CLI's answers: the first turn, then the second after it (R1 keeps only the answer's text
# after </think> in the history).
first = cli(ask("Hi there"), 12)
second = cli(turn("Hi there", split(first)[1]) + ask("And then?"), 12)


class Terminal:
    def __init__(self, args):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execv(args[0], args)
        self.raw = b""

    def read_until(self, pattern, count=1, timeout=120):
        """Reads until the output (escape sequences removed) holds pattern count times."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            text = ANSI.sub(b"", self.raw).replace(b"\r\n", b"\n").replace(b"\r", b"")
            if text.count(pattern) >= count:
                return True
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if ready:
                try:
                    self.raw += os.read(self.fd, 65536)
                except OSError:
                    return False
        return False

    def send(self, text):
        os.write(self.fd, text.encode())

    def wait(self):
        deadline = time.time() + 60
        while time.time() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            try:
                select.select([self.fd], [], [], 0.2)
                os.read(self.fd, 65536)
            except OSError:
                pass
        return None


def shown(text):
    # On a terminal: the reasoning (dimmed), then the answer, no "</think>".
    reasoning, content = split(text)
    return (reasoning + content).encode()


if np == 1:
    t = Terminal(base + ["--chat", "-n", "12", "--temp", "0"])
    check(t.read_until(b"> "), "the chat prompts on a terminal", t.raw[-300:].decode("utf-8", "replace"))
    t.send("Hi there\r")
    check(t.read_until(b"Hi there\n" + shown(first) + b"\n> "), "turn 1 is the CLI's answer",
          repr(t.raw[-400:]))
    check(b"\x1b[2m" in t.raw, "the reasoning is dimmed on a terminal")
    t.send("And then?\r")
    check(t.read_until(b"And then?\n" + shown(second) + b"\n> "), "turn 2 is the CLI's answer to the whole conversation",
          repr(t.raw[-400:]))
    t.send("/stats\r")
    check(t.read_until(b"from the cache"), "/stats", repr(t.raw[-300:]))
    cached = re.findall(rb"prompt (\d+) tokens \((\d+) from the cache", ANSI.sub(b"", t.raw))
    check(bool(cached) and int(cached[-1][1]) > 0, "turn 2 reused the KV cache", repr(cached))
    t.send("/reset\r")
    t.send("Hi there\r")
    check(t.read_until(b"Hi there\n" + shown(first) + b"\n> ", count=2), "after /reset the first answer again",
          repr(t.raw[-300:]))
    t.send("/quit\r")
    check(t.wait() == 0, "/quit ends the chat with status 0")

    # Ctrl-C stops an answer (no -n: it would run to a full context) and the chat goes on.
    t = Terminal(base + ["--chat", "--temp", "0", "--hide-think"])
    t.read_until(b"> ")
    t.send("Go on forever\r")
    t.read_until(b"Go on forever\n")
    time.sleep(0.5)  # not a measurement: only so that the answer has begun when Ctrl-C comes
    t.send("\x03")
    check(t.read_until(b" [stopped]\n> "), "Ctrl-C stops the answer and the chat goes on", repr(t.raw[-300:]))
    check(b"\x1b[2m" not in t.raw, "--hide-think shows no reasoning")
    t.send("/quit\r")
    check(t.wait() == 0, "and /quit ends it with status 0")
else:
    # Under mpirun rank 0's input is a pipe: plain lines in, the text exactly as generated out
    # (NO_COLOR: its output is Open MPI's pseudo-terminal, which isatty cannot tell from ours).
    run = subprocess.run(base + ["--chat", "-n", "12", "--temp", "0"], input=b"Hi there\nAnd then?\n/quit\n",
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300,
                         env=dict(os.environ, NO_COLOR="1"))
    out = run.stdout.decode("utf-8", "replace")
    check(run.returncode == 0, f"the chat on {np} ranks ends with status 0", run.stderr.decode()[-500:])
    check(out == first + "\n" + second + "\n", f"both turns on {np} ranks are the CLI's answers on {np} ranks",
          repr(out) + " vs " + repr(first + "\n" + second + "\n"))
    check(len(re.findall(r"^rank \d+: shard", run.stderr.decode(), re.M)) == np, "every rank ended cleanly",
          run.stderr.decode()[-500:])

print(("FAIL: chat: %d check(s) failed" % failures) if failures else "PASS: chat (all checks)")
sys.exit(1 if failures else 0)
