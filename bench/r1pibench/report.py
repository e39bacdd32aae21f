"""Where results go and how they are drawn: bench/results/<date>-<host>/, markdown, gnuplot PNGs."""
import datetime
import os
import socket
import subprocess

from . import runs


def results_dir(out=None):
    path = out or os.path.join(runs.SOURCE, "bench", "results", "%s-%s" % (
        datetime.date.today().isoformat(), socket.gethostname()))
    os.makedirs(path, exist_ok=True)
    return path


def write(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    runs.progress("wrote " + path)


def plot(png, body, data=None):
    """Runs gnuplot on body (after the terminal and output lines); data: {name: rows} written as
    whitespace-separated files beside the PNG for the script to read as '<name>'. Small PNGs:
    640x400."""
    files = {}
    for name, rows in (data or {}).items():
        files[name] = png[:-4] + "." + name + ".dat"
        with open(files[name], "w") as f:
            f.writelines(" ".join(str(v) for v in row) + "\n" for row in rows)
    script = 'set terminal pngcairo size 640,400 font ",9"\nset output "%s"\n%s\n' % (png, body)
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
