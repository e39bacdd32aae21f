"""What the chat's pty tests share: the chat in a pseudo-terminal, the CLI's answers they compare
with (greedy, the same conversation rendered with DeepSeek-R1's template), and PASS:/FAIL: lines."""
import os
import pty
import re
import select
import signal
import subprocess
import termios
import time

ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
failures = 0


def check(ok, what, detail=""):
    global failures
    print(("PASS: " if ok else "FAIL: ") + what + ("" if ok else ": " + detail), flush=True)
    failures += 0 if ok else 1


def finish(name):
    """The summary line; the exit status for sys.exit."""
    print(("FAIL: %s: %d check(s) failed" % (name, failures)) if failures else "PASS: %s (all checks)" % name)
    return 1 if failures else 0


def cli(base, prompt, n):
    """The CLI's greedy answer to a raw prompt (run as base, which names the program and model).
    An answer may cut a character (a random model's tokens): its bytes are kept as they are
    (surrogateescape), to be compared and passed on byte for byte."""
    out = subprocess.run(base + ["-p", prompt, "-n", str(n), "--temp", "0"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, timeout=120, check=True).stdout
    return out[:-1].decode("utf-8", "surrogateescape")


def split(text):
    end = text.find("</think>")
    return (text, "") if end < 0 else (text[:end], text[end + 8:])


def turn(user, answer):
    return f"<｜User｜>{user}<｜Assistant｜>{answer}<｜end▁of▁sentence｜>"


def ask(user):
    return f"<｜User｜>{user}<｜Assistant｜><think>\n"


def shown(text):
    """An answer as a terminal shows it: the reasoning (dimmed), then the answer, no "</think>"."""
    reasoning, content = split(text)
    return (reasoning + content).encode("utf-8", "surrogateescape")


class Terminal:
    def __init__(self, args, env=None):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            try:
                if env is None:
                    os.execv(args[0], args)
                else:
                    os.execve(args[0], args, env)
            finally:
                os._exit(127)  # the child must never go on running this script
        self.raw = b""

    def text(self, since=None):
        """The output so far (after the last since, when given), escape sequences removed, line
        ends as "\\n"."""
        raw = self.raw if since is None else self.raw[self.raw.rfind(since) + len(since):] if since in self.raw else b""
        return ANSI.sub(b"", raw).replace(b"\r\n", b"\n").replace(b"\r", b"")

    def read_until(self, pattern, count=1, timeout=120, since=None):
        """Reads until the output (escape sequences removed) holds pattern count times."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.text(since).count(pattern) >= count:
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

    def line_mode(self, on, timeout=60):
        """Waits until the terminal's line mode (ICANON, which the pty's master side reads too) is
        on or off. Off: libedit reads the keys (it prints the prompt a moment before it turns the
        line mode off, and a Ctrl-C or Ctrl-D the terminal gets before that is the terminal's).
        On again: libedit has returned the line, so the answer to it is being made."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if bool(termios.tcgetattr(self.fd)[3] & termios.ICANON) == on:
                return True
            time.sleep(0.01)
        return False

    def prompt(self):
        """Waits for the first prompt and for libedit to read the keys."""
        return self.read_until(b"> ") and self.line_mode(False)

    def wait(self):
        deadline = time.time() + 60
        while time.time() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            try:
                if select.select([self.fd], [], [], 0.2)[0]:
                    self.raw += os.read(self.fd, 65536)
            except OSError:
                pass
        os.kill(self.pid, signal.SIGKILL)  # a failed check must not leave the chat running
        os.waitpid(self.pid, 0)
        return None
