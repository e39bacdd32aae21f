#!/usr/bin/env python3
"""r1pi --chat as a person meets it: through a pseudo-terminal (line editing, dimmed reasoning),
or with its input piped (mpirun passing it on), and on several ranks also at a terminal (rank 0
reads it itself). Every answer must be the CLI's text
for the same conversation rendered with the same template (greedy), a second turn must come
partly from the KV cache (/stats), /reset must give the first answer again, Ctrl-C must stop an
answer without ending the chat, /quit must end it with status 0. Commands match after trimming
("/quit ", CRLF input) and any other line that starts with '/' ("/reset now", "/nonsense") is
refused, never sent to the model; a Ctrl-D typed while an answer is printed must not keep the
Ctrl-D at the next prompt from ending the chat.

usage: chat_pty.py R1PI MODEL NP [MPIRUN]   (the model has DeepSeek-R1's specials)"""
import os
import re
import signal
import subprocess
import sys

from chat_terminal import ANSI, Terminal, ask, check, cli, finish, shown, split, turn

r1pi, model, np = sys.argv[1], sys.argv[2], int(sys.argv[3])
mpirun = sys.argv[4] if len(sys.argv) > 4 else None
prefix = [mpirun, "-np", str(np), "--"] if np > 1 else []
base = prefix + [r1pi, "-m", model, "-t", "1"]

# The CLI's answers: the first turn, then the second after it (R1 keeps only the answer's text
# after </think> in the history).
first = cli(base, ask("Hi there"), 12)
second = cli(base, turn("Hi there", split(first)[1]) + ask("And then?"), 12)

if np == 1:
    t = Terminal(base + ["--chat", "-n", "12", "--temp", "0"])
    check(t.read_until(b"> "), "the chat prompts on a terminal", t.raw[-300:].decode("utf-8", "replace"))
    t.send("Hi there\r")
    check(t.read_until(b"Hi there\n" + shown(first) + b"\n> "), "turn 1 is the CLI's answer",
          repr(t.raw[-400:]))
    check(b"\x1b[2m" in t.raw, "the reasoning is dimmed on a terminal")
    # Refused, not sent: the second answer below would differ with them in the conversation.
    t.send("/reset now\r")
    check(t.read_until(b"chat: /reset takes nothing after it; commands: /reset starts over"),
          "'/reset now' is refused with the commands", repr(t.raw[-300:]))
    t.send("/nonsense\r")
    check(t.read_until(b"chat: unknown command /nonsense; commands: "), "an unknown command is refused",
          repr(t.raw[-300:]))
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
    t.send("/quit \r")
    check(t.wait() == 0, "'/quit ' (a trailing space) ends the chat with status 0")

    # Ctrl-C stops an answer (no -n: it would run to a full context) and the chat goes on.
    t = Terminal(base + ["--chat", "--temp", "0", "--hide-think"])
    t.prompt()
    t.send("Go on forever\r")
    t.read_until(b"Go on forever\n")
    t.line_mode(True)  # the line is read: a Ctrl-C from here on is the answer's
    t.send("\x03")
    check(t.read_until(b" [stopped]\n> "), "Ctrl-C stops the answer and the chat goes on", repr(t.raw[-300:]))
    check(b"\x1b[2m" not in t.raw, "--hide-think shows no reasoning")
    # Ctrl-D while an answer runs: the terminal, in its line mode, keeps it as an end-of-file mark,
    # which libedit used to read as a NUL that quoted the next key, so the Ctrl-D typed at the next
    # prompt became a character. Ctrl-R after it (the line mode's "reprint", which it echoes as
    # "^R" and keeps from the program) shows that the terminal has taken the Ctrl-D. The answer is
    # then stopped with SIGINT sent to the process, not with Ctrl-C, which would flush the
    # terminal's input and the mark with it.
    t.line_mode(False)
    t.send("Go on again\r")
    t.read_until(b"Go on again\n")
    t.line_mode(True)
    t.send("\x04\x12")
    t.read_until(b"^R")
    os.kill(t.pid, signal.SIGINT)
    check(t.read_until(b" [stopped]\n> ", count=2), "the second answer stopped", repr(t.raw[-300:]))
    t.line_mode(False)
    t.send("\x04")
    check(t.wait() == 0, "after a Ctrl-D typed during an answer, Ctrl-D at the prompt ends the chat with status 0",
          repr(t.raw[-300:]))

# Piped input (under mpirun rank 0's input is a pipe): plain lines in, the text exactly as
# generated out (NO_COLOR: under mpirun the output is Open MPI's pseudo-terminal, which isatty
# cannot tell from ours). CRLF lines and stray spaces: the commands still match, the refused
# lines and the line after /quit never reach the model (the answers would differ).
lines = b"/reset now\r\n/nonsense\r\nHi there\r\n \r\nAnd then? \r\n/quit \r\nNot asked\r\n"
run = subprocess.run(base + ["--chat", "-n", "12", "--temp", "0"], input=lines,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300,
                     env=dict(os.environ, NO_COLOR="1"))
out, err = run.stdout.decode("utf-8", "replace"), run.stderr.decode("utf-8", "replace")
check(run.returncode == 0, f"the piped chat on {np} ranks ends with status 0", err[-500:])
check(out == first + "\n" + second + "\n", f"both turns on {np} ranks are the CLI's answers on {np} ranks",
      repr(out) + " vs " + repr(first + "\n" + second + "\n"))
check("chat: /reset takes nothing after it" in err and "chat: unknown command /nonsense" in err,
      "the piped '/reset now' and '/nonsense' are refused", err[-500:])
if np > 1:
    check(len(re.findall(r"^rank \d+: shard", err, re.M)) == np, "every rank ended cleanly", err[-500:])

    # Typed at a terminal under scripts/mpirun (which then passes --stdin none): rank 0 reads the
    # terminal itself, with its prompt and line editing; Ctrl-D ends the chat on a new line.
    t = Terminal(base + ["--chat", "-n", "12", "--temp", "0"])
    check(t.read_until(b"> ") and t.line_mode(False), f"the chat on {np} ranks prompts and edits lines",
          t.raw[-300:].decode("utf-8", "replace"))
    t.send("Hi there\r")
    check(t.read_until(shown(first)) and t.read_until(b"> ", count=2), f"turn 1 on {np} ranks at a terminal",
          repr(t.raw[-400:]))
    t.line_mode(False)
    t.send("\x04")
    check(t.wait() == 0, f"Ctrl-D ends the chat on {np} ranks with status 0", repr(t.raw[-300:]))
    # The ranks' closing lines go to stderr, which Open MPI forwards apart from stdout: they may
    # come before the chat's own last line, so they are taken out first.
    tail = re.sub(rb"rank \d+: shard [^\n]*\n", b"", ANSI.sub(b"", t.raw.split(shown(first))[-1]))
    check(re.search(rb"> (\^D)?\r?\n", tail) is not None, "the chat ends on a new line", repr(t.raw[-200:]))

sys.exit(finish("chat"))
