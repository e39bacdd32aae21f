"""Where results go and how they are drawn: ~/r1pi-results/<date>-<host>/, markdown, gnuplot PNGs."""
import datetime
import os
import socket
import subprocess

from . import runs


def results_dir(out=None):
    """--out, else $R1PI_RESULTS_DIR/<date>-<host>, else ~/r1pi-results/<date>-<host>: outside the
    source tree, so that a run leaves the checkout clean; results worth keeping are copied to
    bench/results/ by hand, with a README that says what they show."""
    base = os.environ.get("R1PI_RESULTS_DIR") or os.path.join(os.path.expanduser("~"), "r1pi-results")
    path = out or os.path.join(base, "%s-%s" % (datetime.date.today().isoformat(), socket.gethostname()))
    os.makedirs(path, exist_ok=True)
    return path


def write(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    runs.progress("wrote " + path)


def plot(png, body, data=None, title=None):
    """Runs gnuplot on body (after the terminal, output and title lines); data: {name: rows}
    written as whitespace-separated files beside the PNG for the script to read as '<name>'. Small
    PNGs: 640x400. Every plot has a title: a PNG is often seen without its report."""
    files = {}
    for name, rows in (data or {}).items():
        files[name] = png[:-4] + "." + name + ".dat"
        with open(files[name], "w") as f:
            f.writelines(" ".join(str(v) for v in row) + "\n" for row in rows)
    if title is None:
        runs.die("a plot needs a title: " + png)
    script = 'set terminal pngcairo size 640,400 font ",9"\nset output "%s"\nset title "%s" noenhanced\n%s\n' % (
        png, title.replace('"', "'"), body)
    for name, path in files.items():
        script = script.replace("'<%s>'" % name, "'%s'" % path)
    p = subprocess.run(["gnuplot"], input=script, capture_output=True, text=True)
    for path in files.values():
        os.remove(path)
    if p.returncode != 0:
        runs.die("gnuplot failed on %s:\n%s" % (png, p.stderr))
    runs.progress("wrote " + png)


def fmt(x, digits=2):
    return "%.*f" % (digits, x)
