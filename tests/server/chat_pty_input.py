#!/usr/bin/env python3
"""r1pi --chat typed in every language, and messages of several lines, through a pseudo-terminal.

Typed text: Latin (é, ß), CJK, emoji (one a ZWJ sequence) and right-to-left scripts, with a
backspace and a cursor move between characters of several bytes and a history recall (up arrow),
under each LANG / LC_ALL setting a person may have (unset, C, C.UTF-8, one whose locale is not
installed). What reaches the model is checked by the answer: every answer must be the CLI's
greedy answer to the same conversation, and the model must answer differently when the letters
beyond ASCII are lost (as they were: "héllo" arrived as "hllo"), so that the check can tell. What
the screen shows is checked by Ctrl-L (libedit clears the screen and draws the prompt and the
line again) after the edits.

Several lines: a bracketed paste of three lines (after words typed before it) is one user turn,
sent by the Enter after it; a line ending with '\\' goes on in the next; a \"\"\" block; the
terminal's bracketed paste is on at the prompt and off again whenever the chat ends (/quit,
Ctrl-D, Ctrl-C at the prompt). Piped, '\\' and \"\"\" work alike, and an input that ends inside a
block is not sent, with a note.

usage: chat_pty_input.py R1PI MODEL   (the model has DeepSeek-R1's specials)"""
import fcntl
import os
import struct
import subprocess
import sys
import termios

from chat_terminal import Terminal, ask, check, cli, finish, shown

r1pi, model = sys.argv[1], sys.argv[2]
base = [r1pi, "-m", model, "-t", "1"]
chat = base + ["--chat", "-n", "12", "--temp", "0"]

BACKSPACE, LEFT, UP, END_OF_LINE, REDRAW = "\x7f", "\x1b[D", "\x1b[A", "\x05", "\x0c"
PASTE_ON, PASTE_OFF = b"\x1b[?2004h", b"\x1b[?2004l"

# Typed keys and the message they make. Latin and CJK: a backspace takes the whole 本 (3 bytes),
# then the cursor goes back over 語本日 (3 characters, 9 bytes) for the ß. Emoji and right-to-left:
# a backspace takes a whole 🙂 (4 bytes); 👨‍👩‍👧 is one ZWJ sequence of five code points.
TYPED = [
    ("Grüße, héllo 日本語本" + BACKSPACE + LEFT * 3 + "ß", "Grüße, héllo ß日本語"),
    ("🙂🙂" + BACKSPACE + " 👨\u200d👩\u200d👧 שלום مرحبا", "🙂 👨\u200d👩\u200d👧 שלום مرحبا"),
]
answers = {message: cli(base, ask(message), 12) for _, message in TYPED}
for _, message in TYPED:
    ascii_only = message.encode("ascii", "ignore").decode()
    check(answers[message] != cli(base, ask(ascii_only), 12),
          f"the model answers {message!r} and {ascii_only!r} differently (the checks below can tell)")

LOCALES = [{}, {"LANG": "C"}, {"LC_ALL": "C", "LANG": "C.UTF-8"}, {"LANG": "C.UTF-8"},
           {"LANG": "en_US.UTF-8"}, {"LC_ALL": "en_US.UTF-8"}]


CLEAR = b"\x1b[2J"  # what libedit's Ctrl-L sends for TERM=xterm, before it draws the line again


def start(settings):
    env = {k: v for k, v in os.environ.items() if k not in ("LANG", "LANGUAGE") and not k.startswith("LC_")}
    env.update(settings, TERM="xterm")
    t = Terminal(chat, env)
    fcntl.ioctl(t.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
    t.prompt()
    return t


def keys(t, text):
    """Types once libedit reads the keys (before, the terminal's line mode would take a backspace)."""
    t.line_mode(False)
    t.send(text)


def on_screen(message):
    """What libedit draws of a line: all but the zero-width joiners (its display gives each
    character a cell, and the next one takes that of a character of width 0)."""
    return message.replace("\u200d", "").encode()


def drawn(t, typed, expected):
    """Types, then End and Ctrl-L; what libedit draws after clearing the screen, once it shows
    the expected line (or the wait ends)."""
    t.raw = b""
    keys(t, typed + END_OF_LINE + REDRAW)
    t.read_until(b"> " + expected, since=CLEAR, timeout=20)
    return t.text(since=CLEAR)


def sent(t, typed, message):
    """Types and waits for the answer, which must be the CLI's to the message."""
    t.raw = b""
    keys(t, typed)
    return t.read_until(shown(answers[message]) + b"\n> ")


def command(t, line):
    t.raw = b""
    keys(t, line + "\r")
    t.read_until(b"> ")  # the next prompt, after the command's reply


for settings in LOCALES:
    name = " ".join(f"{k}={v}" for k, v in settings.items()) or "no LANG or LC_*"
    t = start(settings)
    for typed, message in TYPED:
        screen = drawn(t, typed, on_screen(message))
        check(screen.startswith(b"> " + on_screen(message)), f"{name}: the screen shows {message!r}", repr(screen[-200:]))
        check(sent(t, "\r", message), f"{name}: {message!r} reaches the model", repr(t.raw[-300:]))
        command(t, "/reset")
    # The history: the last message, two entries back (a /reset after it), drawn and sent again.
    recalled = TYPED[-1][1]
    screen = drawn(t, UP * 2, on_screen(recalled))
    check(screen.startswith(b"> " + on_screen(recalled)), f"{name}: the up arrow recalls {recalled!r}",
          repr(screen[-200:]))
    check(sent(t, "\r", recalled), f"{name}: the recalled line reaches the model", repr(t.raw[-300:]))
    keys(t, "/quit\r")
    check(t.wait() == 0, f"{name}: /quit ends the chat with status 0")

# ---- several lines
pasted = "first line\nsecond line\nthird line"
two_lines = "one line\nand another"
for message in ("Read this: " + pasted, pasted, two_lines):
    answers[message] = cli(base, ask(message), 12)
check(answers[pasted] != cli(base, ask("third line"), 12), "the model answers the paste and its last line differently")
t = start({})
check(PASTE_ON in t.raw, "the prompt turns the terminal's bracketed paste on", repr(t.raw[-200:]))
keys(t, "Read this: \x1b[200~" + pasted.replace("\n", "\r") + "\x1b[201~")
check(t.read_until(b"> Read this: first line\n... second line\n... third line"),
      "a paste shows its lines, the next ones after '... '", repr(t.raw[-300:]))
check(sent(t, "\r", "Read this: " + pasted), "a pasted paragraph after typed words is one message, sent by Enter",
      repr(t.raw[-300:]))
command(t, "/reset")
# A line break at the end too: the Enter after it is typed on an empty '... ' line.
check(sent(t, "\x1b[200~" + pasted.replace("\n", "\r") + "\r\x1b[201~\r", pasted),
      "a paste ending with a line break is one message too", repr(t.raw[-300:]))
command(t, "/reset")
keys(t, "one line\\\r")
check(t.read_until(b"... "), "a line ending with '\\' asks for more with '... '", repr(t.raw[-200:]))
check(sent(t, "and another\r", two_lines), "a line ending with '\\' goes on in the next", repr(t.raw[-300:]))
command(t, "/reset")
keys(t, '"""\rone line\r')
t.read_until(b"... one line")
check(sent(t, 'and another\r"""\r', two_lines), 'a """ block is one message', repr(t.raw[-300:]))
# The whole block is one entry of the history: recalled, it is the same message again.
command(t, "/reset")
check(sent(t, UP * 2 + "\r", two_lines), 'a """ block recalled with the up arrow is the same message',
      repr(t.raw[-300:]))
command(t, "/help")
check(b'between two """' in t.text() and b"a paste is one message" in t.text(), "/help tells how to type several lines",
      repr(t.raw[-400:]))
keys(t, "\x04")
check(t.wait() == 0 and t.raw.rfind(PASTE_OFF) > t.raw.rfind(PASTE_ON), "Ctrl-D turns bracketed paste off",
      repr(t.raw[-100:]))
t = start({})
keys(t, "\x03")
check(t.wait() == 0 and t.raw.rfind(PASTE_OFF) > t.raw.rfind(PASTE_ON) > 0, "Ctrl-C at the prompt turns it off",
      repr(t.raw[-100:]))
t = start({})
keys(t, "/quit\r")
check(t.wait() == 0 and t.raw.rfind(PASTE_OFF) > t.raw.rfind(PASTE_ON) > 0, "/quit turns it off", repr(t.raw[-100:]))

# ---- piped: the same rules, without a terminal
lines = 'one line\\\nand another\n/reset\n"""\none line\nand another\n"""\n"""\nnot sent\n'
run = subprocess.run(chat, input=lines.encode(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
err = run.stderr.decode("utf-8", "replace")
check(run.returncode == 0 and run.stdout == shown(answers[two_lines] + "\n") * 2,
      "piped, '\\' and a \"\"\" block make one message each", repr(run.stdout) + err[-300:])
check("ended inside a message of several lines; it was not sent" in err, "piped, an unclosed block is not sent",
      err[-300:])

sys.exit(finish("chat input"))
