"""Running r1pi, r1pi-bench and r1pi-model, and reading what they print."""
import csv
import json
import os
import re
import shlex
import subprocess
import sys

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def die(message):
    print("error: " + message, file=sys.stderr)
    sys.exit(1)


def progress(message):
    print(message, file=sys.stderr, flush=True)


def build_dir(path=None):
    build = path or os.environ.get("R1PI_BUILD_DIR") or os.path.join(SOURCE, "build")
    for prog in ("r1pi", "r1pi-bench", "r1pi-model"):
        if not os.access(os.path.join(build, prog), os.X_OK):
            die("%s/%s is not built (scripts/build, or --build DIR)" % (build, prog))
    return build


def run(cmd, timeout=3600):
    """cmd: a list, or a shell line. Returns (exit status, stdout, stderr)."""
    shell = isinstance(cmd, str)
    try:
        p = subprocess.run(cmd if shell else list(map(str, cmd)), shell=shell, capture_output=True, text=True, errors="replace",
                           timeout=timeout, executable="/bin/bash" if shell else None)
    except subprocess.TimeoutExpired:
        die("timed out after %d s: %s" % (timeout, cmd if shell else shlex.join(map(str, cmd))))
    return p.returncode, p.stdout, p.stderr


def checked(cmd, timeout=3600):
    rc, out, err = run(cmd, timeout)
    if rc != 0:
        die("exit %d from %s:\n%s" % (rc, cmd if isinstance(cmd, str) else shlex.join(map(str, cmd)), err[-2000:]))
    return out, err


def r1pi_summary(stderr):
    """The summary lines of r1pi: prefill/decode tokens and tok/s, sha256, the kernels."""
    s = {}
    for phase in ("prefill", "decode"):
        m = re.search(r"^%s: (\d+) tokens, ([0-9.]+) tok/s" % phase, stderr, re.M)
        if m:
            s[phase + "_tokens"], s[phase] = int(m.group(1)), float(m.group(2))
    m = re.search(r"^sha256: ([0-9a-f]{64})$", stderr, re.M)
    s["sha256"] = m.group(1) if m else None
    m = re.search(r" ([a-z0-9-]+) kernels", stderr)
    s["kernels"] = m.group(1) if m else None
    return s


def llamacpp_arguments(description, tokens):
    """The command line shared by the scripts that run r1pi beside llama.cpp on the same files: the
    models, the build folder, threads, tokens per run (default `tokens`) and rounds."""
    import argparse
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-m", "--models", nargs="+", required=True)
    p.add_argument("--build", help="r1pi's build folder (default build/)")
    p.add_argument("-t", "--threads", type=int, default=2)
    p.add_argument("-n", type=int, default=tokens, help="tokens decoded per run (at most, where a schema ends)")
    p.add_argument("--rounds", type=int, default=3)
    return p


def llamacpp_script(build, name):
    """bench/NAME (a node script that runs llama.cpp through node-llama-cpp), ready to run: the pinned
    npm packages installed into the build folder once (tests/llamacpp/npm_install.sh), the script
    copied beside them, as node resolves an ES module's imports from its own folder."""
    npm = os.path.join(build, "test-scratch", "npm-llamacpp")
    checked(["bash", os.path.join(SOURCE, "tests", "llamacpp", "npm_install.sh"), npm])
    script = os.path.join(npm, name)
    with open(os.path.join(SOURCE, "bench", name)) as src, open(script, "w") as dst:
        dst.write(src.read())
    return script


def mpirun(np, hostfile=None):
    """scripts/mpirun's line for np ranks here (or over a hostfile); none for one local rank.
    $R1PI_MPIRUN names another launcher with the same command line (bench/mpi/netns_mpirun.sh:
    the ranks on the emulated 4-board network)."""
    if np == 1 and not hostfile:
        return []
    line = [os.environ.get("R1PI_MPIRUN") or os.path.join(SOURCE, "scripts", "mpirun"), "-np", str(np)]
    if hostfile:
        line += ["--hostfile", hostfile]
    return line + ["--"]


def bench_json(build, args, np=1, hostfile=None, timeout=3600):
    """r1pi-bench's records (-o json); a failed test (moved hash) ends the script."""
    out, _ = checked(mpirun(np, hostfile) + [os.path.join(build, "r1pi-bench")] + list(map(str, args)) + ["-o", "json"],
                     timeout)
    return json.loads(out)


def read_bandwidth(build, threads, reps=5, stat="best"):
    """GB/s of build/bench/read_bandwidth reading 1 GiB with that many threads, its best or median
    of reps (the decode roofline's denominator); None when the program is missing or says nothing."""
    prog = os.path.join(build, "bench", "read_bandwidth")
    if not os.access(prog, os.X_OK):
        return None
    out, _ = checked([prog, "--threads", threads, "--reps", reps])
    m = re.search(r"%s_GBps=([0-9.]+)" % stat, out)
    return float(m.group(1)) if m else None


def decode_timings(path, skip=0):
    """The rows of r1pi's --timings CSV at PATH that are decode forwards (one token each), after the
    first `skip` rows, and the number of rows in the file."""
    with open(path) as f:
        rows = list(csv.DictReader(f))
    return [r for r in rows[skip:] if r["tokens"] == "1"], len(rows)


def make_model(build, preset, path):
    if not os.path.exists(path):
        checked([os.path.join(build, "r1pi-model"), "make", "--preset", preset, "-o", path, "--no-progress"])
    return path


def model_info(build, model):
    """The llama.* metadata of `r1pi-model info` as a dict of strings."""
    out, _ = checked([os.path.join(build, "r1pi-model"), "info", model])
    return dict(re.findall(r"^\s+llama\.(\S+)\s+\S+\s+(\S+)", out, re.M))


def uptime():
    with open("/proc/loadavg") as f:
        return "load average " + ", ".join(f.read().split()[:3])
