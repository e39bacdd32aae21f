#!/usr/bin/env python3
"""r1pi-model pull against the stand-in Hub (stand_in_hub.py) on loopback: the default and an
explicit quantisation, split files, resume (within a run and across runs, and a server that does
not resume), the sha256 check, the token, and each error a user meets. Prints PASS:/FAIL: lines;
exits 1 on any failure. No timing is asserted; every wait is bounded.

usage: test_pull.py BUILD_DIR SCRATCH_DIR
"""
import hashlib
import os
import shutil
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stand_in_hub  # noqa: E402

build, scratch = sys.argv[1], sys.argv[2]
model_tool = os.path.join(build, "r1pi-model")
shutil.rmtree(scratch, ignore_errors=True)
os.makedirs(scratch)
failures = 0


def check(name, ok, detail=""):
    global failures
    print("%s: %s%s" % ("PASS" if ok else "FAIL", name, "" if ok else " -- " + detail), flush=True)
    failures += not ok


def pull(spec, out, token=None, endpoint=None, extra=()):
    env = {k: v for k, v in os.environ.items() if k not in ("HF_TOKEN", "HF_ENDPOINT")}
    env["HF_ENDPOINT"] = endpoint or hub_url + "/"  # a trailing slash, dropped as huggingface_hub does
    if token is not None:
        env["HF_TOKEN"] = token
    return subprocess.run([model_tool, "pull", spec, "-o", os.path.join(scratch, out), *extra],
                          env=env, capture_output=True, text=True, timeout=60)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def pulled_alone(result, out, name, data):
    """The run printed out/name, the one file in out, and it holds data."""
    path = os.path.join(scratch, out, name)
    return (result.returncode == 0 and result.stdout == path + "\n" and
            os.listdir(os.path.join(scratch, out)) == [name] and read(path) == data)


def requests(role=None):
    with hub.lock:
        return [r for r in hub.log if role is None or r[0] == role]


# The served model: a tiny GGUF; the other files are its bytes with a mark, to tell them apart.
tiny_path = os.path.join(scratch, "tiny.gguf")
subprocess.run([model_tool, "make", "--preset", "tiny", "-o", tiny_path], check=True, capture_output=True,
               timeout=60)
tiny = read(tiny_path)
half = len(tiny) // 2

hub = stand_in_hub.Hub(page_size=3)  # pages of 3 entries: every listing takes the Link header's pages
hub.add_repo("test/Tiny-GGUF", {
    "README.md": b"# tiny\n",
    "tiny-Q4_K_M.gguf": tiny,
    "tiny-Q4_K.gguf": tiny + b"Q4_K",
    "tiny-Q4_K_S.gguf": tiny + b"Q4_K_S",
    "tiny-Q8_0.gguf": tiny + b"Q8_0",
    "mmproj-tiny-Q4_K_M.gguf": b"projector",
})
hub.add_repo("test/Tiny-GGUF", {"tiny-F16.gguf": tiny + b"F16"}, lfs=False)  # in git: a blob SHA-1
hub.add_repo("test/Q4_0-only", {"m.Q4_0_4_4.gguf": b"repacked", "m.Q4_0.gguf": tiny, "m.Q8_0.gguf": b"q8"})
hub.add_repo("test/Split", {"Q8_0/tiny-Q8_0-00001-of-00002.gguf": tiny[:half],
                            "Q8_0/tiny-Q8_0-00002-of-00002.gguf": tiny[half:],
                            "tiny-Q4_K_M.gguf": tiny})
hub.add_repo("test/No-GGUF", {"README.md": b"#", "config.json": b"{}"})
hub.add_repo("private/Tiny", {"tiny-Q4_K_M.gguf": tiny}, token="hf_stand_in_token")
hub.add_repo("test/Gated", {"tiny-Q4_K_M.gguf": tiny}, gated=True)
hub_url = hub.start()
try:
    # ---- the choice
    r = pull("test/Tiny-GGUF", "default")
    path = os.path.join(scratch, "default", "tiny-Q4_K_M.gguf")
    check("default quantisation is Q4_K_M", r.returncode == 0 and r.stdout == path + "\n", r.stdout + r.stderr)
    check("pulled bytes equal the served file", os.path.exists(path) and read(path) == tiny)
    info = subprocess.run([model_tool, "info", path], capture_output=True, text=True, timeout=60)
    check("pulled file reads as a GGUF (r1pi-model info)", info.returncode == 0, info.stderr)
    check("listing followed its pages", sum("/tree/main" in q[1] for q in requests("hub")) >= 3)
    check("download went through the 302 to the CDN", any("/_cdn/test/Tiny-GGUF/tiny-Q4_K_M.gguf" in q[1]
                                                          for q in requests("cdn")))

    r = pull("test/Tiny-GGUF:q8_0", "q8")
    check("explicit :q8_0 (any case)", pulled_alone(r, "q8", "tiny-Q8_0.gguf", tiny + b"Q8_0"), r.stderr)
    r = pull("test/Tiny-GGUF:Q4_K", "q4k")
    check(":Q4_K is not Q4_K_M nor Q4_K_S", pulled_alone(r, "q4k", "tiny-Q4_K.gguf", tiny + b"Q4_K"), r.stderr)
    r = pull("test/Tiny-GGUF:F16", "f16")
    check("a file kept in git, checked by its blob SHA-1", pulled_alone(r, "f16", "tiny-F16.gguf", tiny + b"F16"),
          r.stderr)
    r = pull("test/Q4_0-only", "q40")
    check("no Q4_K_M: Q4_0 (not Q4_0_4_4)", pulled_alone(r, "q40", "m.Q4_0.gguf", tiny), r.stderr)
    r = pull("test/Tiny-GGUF:Q5_K_M", "none")
    check("missing quantisation refused, the available listed",
          r.returncode == 1 and "no .gguf file names Q5_K_M; available: F16, Q4_K, Q4_K_M, Q4_K_S, Q8_0" in r.stderr
          and not os.path.exists(os.path.join(scratch, "none", "tiny-Q4_K_M.gguf")), r.stderr)

    # ---- split files: every part, in order, beside each other
    r = pull("test/Split:Q8_0", "split")
    parts = [os.path.join(scratch, "split", "tiny-Q8_0-0000%d-of-00002.gguf" % i) for i in (1, 2)]
    check("split GGUF: all parts, paths printed", r.returncode == 0 and r.stdout.split() == parts, r.stdout + r.stderr)
    check("split GGUF: the parts join to the served bytes",
          all(map(os.path.exists, parts)) and read(parts[0]) + read(parts[1]) == tiny)

    # ---- resume
    hub.log.clear()
    hub.faults["truncate"] = 1
    r = pull("test/Tiny-GGUF", "resume-in-run")
    ranges = [q[2] for q in requests("cdn")]
    check("a broken transfer is resumed in the same run", r.returncode == 0 and "resuming" in r.stderr and
          ranges[0] is None and ranges[1] == "bytes=%d-" % half and
          read(os.path.join(scratch, "resume-in-run", "tiny-Q4_K_M.gguf")) == tiny, "%s %s" % (ranges, r.stderr))

    hub.faults["truncate"] = 100  # every reply breaks: the run gives up, the part file stays
    r = pull("test/Tiny-GGUF", "resume-later")
    part = os.path.join(scratch, "resume-later", "tiny-Q4_K_M.gguf.part")
    kept = os.path.getsize(part) if os.path.exists(part) else 0
    check("a run that cannot finish keeps the part file and says so", r.returncode == 1 and
          "run the command again to resume" in r.stderr and 0 < kept < len(tiny) and
          not os.path.exists(part[:-5]), r.stderr)
    hub.faults["truncate"] = 0
    hub.log.clear()
    r = pull("test/Tiny-GGUF", "resume-later")
    check("the next run resumes from the part file", r.returncode == 0 and
          requests("cdn")[0][2] == "bytes=%d-" % kept and read(part[:-5]) == tiny and not os.path.exists(part),
          "%s %s" % (requests("cdn"), r.stderr))

    os.makedirs(os.path.join(scratch, "no-range"))
    part = os.path.join(scratch, "no-range", "tiny-Q4_K_M.gguf.part")
    with open(part, "wb") as f:
        f.write(b"\0" * 1000)  # wrong bytes: the server sends everything again, so they go
    hub.faults["ignore_range"] = True
    r = pull("test/Tiny-GGUF", "no-range")
    hub.faults["ignore_range"] = False
    check("a server that answers 200 to a range: starting over", r.returncode == 0 and "starting over" in r.stderr
          and read(part[:-5]) == tiny, r.stderr)

    # ---- the hash
    hub.faults["corrupt"] = True
    r = pull("test/Tiny-GGUF", "corrupt")
    hub.faults["corrupt"] = False
    check("sha256 mismatch refused, the part file removed", r.returncode == 1 and "SHA-256 mismatch" in r.stderr
          and os.listdir(os.path.join(scratch, "corrupt")) == [], r.stderr)
    os.makedirs(os.path.join(scratch, "bad-part"))
    with open(os.path.join(scratch, "bad-part", "tiny-Q4_K_M.gguf.part"), "wb") as f:
        f.write(b"\0" * 1000)  # a part that is no prefix of the file, continued by a server that resumes
    r = pull("test/Tiny-GGUF", "bad-part")
    check("a wrong part file fails the hash and goes", r.returncode == 1 and "mismatch" in r.stderr and
          os.listdir(os.path.join(scratch, "bad-part")) == [], r.stderr)
    r = pull("test/Tiny-GGUF", "default")
    check("a verified file already there is kept", r.returncode == 0 and "already" in r.stderr, r.stderr)
    with open(os.path.join(scratch, "default", "tiny-Q4_K_M.gguf"), "ab") as f:
        f.write(b"x")
    r = pull("test/Tiny-GGUF", "default")
    check("a different file of that name is not overwritten", r.returncode == 1 and "exists" in r.stderr, r.stderr)

    # ---- the token
    r = pull("private/Tiny", "private")
    check("401 without a token names HF_TOKEN", r.returncode == 1 and "401" in r.stderr and "HF_TOKEN" in r.stderr,
          r.stderr)
    r = pull("private/Tiny", "private", token="hf_wrong")
    check("401 with a refused token says so", r.returncode == 1 and "refused HF_TOKEN" in r.stderr, r.stderr)
    hub.log.clear()
    r = pull("private/Tiny", "private", token="hf_stand_in_token")
    hub_auth = {q[3] for q in requests("hub")}
    cdn_auth = {q[3] for q in requests("cdn")}
    check("HF_TOKEN sent as a bearer token to the Hub, not to its CDN", r.returncode == 0 and
          hub_auth == {"Bearer hf_stand_in_token"} and cdn_auth == {None}, "%s %s %s" % (hub_auth, cdn_auth, r.stderr))
    r = pull("test/Gated", "gated", token="hf_stand_in_token")
    check("403 names HF_TOKEN", r.returncode == 1 and "403" in r.stderr and "HF_TOKEN" in r.stderr, r.stderr)

    # ---- the other errors
    r = pull("test/Missing", "missing")
    check("404 repository", r.returncode == 1 and "repository test/Missing: not found" in r.stderr, r.stderr)
    r = pull("test/No-GGUF", "no-gguf")
    check("a repository without a .gguf", r.returncode == 1 and "has no .gguf" in r.stderr, r.stderr)
    r = pull("not a repo", "bad")
    check("a malformed repository id", r.returncode == 1 and "not a Hugging Face repository" in r.stderr, r.stderr)
    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = "http://127.0.0.1:%d" % s.getsockname()[1]
    r = pull("test/Tiny-GGUF", "offline", endpoint=closed)
    check("no server: a clear error, no crash", r.returncode == 1 and "cannot connect to " + closed in r.stderr,
          r.stderr)
    r = pull("test/Tiny-GGUF", "offline", endpoint="ftp://example")
    check("an HF_ENDPOINT that is no http(s) URL", r.returncode == 1 and "HF_ENDPOINT" in r.stderr, r.stderr)
finally:
    hub.stop()

print("hub_pull: %d failure(s)" % failures)
sys.exit(1 if failures else 0)
