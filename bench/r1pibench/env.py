"""The environment a measurement ran in, recorded before every run: what could make two runs
incomparable (another CPU governor, a throttled core, another Open MPI) beside what the run was
(commit, backend, model). Fields that are unreadable here say "n/a"."""
import datetime
import glob
import hashlib
import os
import platform
import socket
import subprocess

# What must not change within one comparison; frequency, temperature and load are reported.
STATIC = ("host", "cpu_model", "cores", "governor", "thp", "kernel", "openmpi", "hostfile", "git_commit",
          "backend")


def _read(path, default="n/a"):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def _output(cmd, cwd=None):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def cpu_model():
    for line in _read("/proc/cpuinfo", "").splitlines():
        if line.startswith(("model name", "Model")):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "n/a"


def frequency_mhz():
    """Mean current frequency over the cores: cpufreq where the kernel has it, else /proc/cpuinfo."""
    cur = [int(_read(p, "0")) / 1000 for p in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_cur_freq")]
    if not cur:
        cur = [float(line.split(":")[1]) for line in _read("/proc/cpuinfo", "").splitlines()
               if line.startswith("cpu MHz")]
    return round(sum(cur) / len(cur), 1) if cur else "n/a"


def temperature_c():
    """The hottest thermal zone, in degrees C."""
    temps = [int(t) / 1000 for t in (_read(p, "") for p in glob.glob("/sys/class/thermal/thermal_zone*/temp"))
             if t.lstrip("-").isdigit()]
    return max(temps) if temps else "n/a"


def _thp():
    text = _read("/sys/kernel/mm/transparent_hugepage/enabled")
    return text[text.find("[") + 1:text.find("]")] if "[" in text else text


_sha_cache = {}


def file_sha256(path):
    key = (os.path.abspath(path), os.path.getsize(path), os.path.getmtime(path))
    if key not in _sha_cache:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 24), b""):
                h.update(block)
        _sha_cache[key] = h.hexdigest()
    return _sha_cache[key]


def _hostfile(path):
    launcher = os.environ.get("R1PI_MPIRUN")
    where = "local" if not path else "%s (sha256 %s)" % (path, file_sha256(path)[:16])
    return where if not launcher else "%s through %s" % (where, os.path.basename(launcher))


def record(source_dir, model=None, hostfile=None):
    """Everything at once (the model's sha256 once per process: the 8B file takes seconds)."""
    mpirun = _output(["mpirun", "--version"]).splitlines()
    return {
        "time_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S"),
        "host": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "governor": _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        "frequency_mhz": frequency_mhz(),
        "max_frequency_mhz": (int(_read("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "0")) / 1000
                              or "n/a"),
        "temperature_c": temperature_c(),
        "load": " ".join(_read("/proc/loadavg").split()[:3]),
        "thp": _thp(),
        "kernel": platform.release(),
        "openmpi": mpirun[0] if mpirun else "n/a",
        "hostfile": _hostfile(hostfile),
        "git_commit": _output(["git", "describe", "--always", "--dirty", "--abbrev=12"], cwd=source_dir) or "n/a",
        "backend": os.environ.get("R1PI_BACKEND", "default (best for this CPU)"),
        "model_sha256": file_sha256(model) if model else "n/a",
    }


def changes(before, after, fields=STATIC):
    """The fields that differ, as 'field: old -> new'."""
    return ["%s: %s -> %s" % (k, before.get(k), after.get(k)) for k in fields if before.get(k) != after.get(k)]


def markdown(env):
    lines = ["| field | value |", "| --- | --- |"]
    lines += ["| %s | %s |" % (k, v) for k, v in env.items()]
    return lines
