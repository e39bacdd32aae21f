#!/usr/bin/env python3
"""A stand-in for the Hugging Face Hub on loopback, for r1pi-model pull's tests (Python's
standard library only; nothing leaves the machine).

It answers what pull asks of the Hub, as the Hub does:
  GET /api/models/OWNER/NAME/tree/main?recursive=true   the listing, a JSON array of
      {"type", "oid", "size", "path", "lfs": {"oid": sha256, "size", "pointerSize"}}, paged
      (page_size entries) with a Link: <...&cursor=N>; rel="next" header;
  GET /OWNER/NAME/resolve/main/PATH   302 to the "CDN": a second server on another port (another
      origin, as the Hub's CDN is), which serves the bytes with Range support (206, 416).
Errors as the Hub words them (X-Error-Code, X-Error-Message): 404 RepoNotFound / EntryNotFound,
401 for a repository with a token when the request lacks it, 403 for a gated one.

Faults, switched by the test between runs (Hub.faults):
  truncate: the next N file replies stop halfway through (the connection closes early);
  corrupt: file bytes served with one byte flipped (the listing's sha256 stays right);
  ignore_range: Range requests answered 200 with the whole file.
Hub.log records each request: (server "hub"/"cdn", path, Range header, Authorization header).

Standalone, to try pull by hand:
  stand_in_hub.py OWNER/NAME FILE...   serves the files as that repository, prints HF_ENDPOINT
"""
import hashlib
import http.server
import json
import os
import sys
import threading
import urllib.parse


class Repo:
    def __init__(self, token=None, gated=False):
        self.files = {}  # path -> (bytes, stored in LFS)
        self.token = token
        self.gated = gated


class Hub:
    def __init__(self, page_size=1000):
        self.repos = {}
        self.page_size = page_size
        self.faults = {"truncate": 0, "corrupt": False, "ignore_range": False}
        self.log = []
        self.lock = threading.Lock()
        self.servers = []

    def add_repo(self, name, files, lfs=True, token=None, gated=False):
        """files: {path: bytes}. lfs=False: kept in git (the listing gives the blob's SHA-1)."""
        repo = self.repos.setdefault(name, Repo(token, gated))
        for path, data in files.items():
            repo.files[path] = (data, lfs)
        return repo

    # ---- serving
    def start(self):
        """Starts the Hub and its CDN on free loopback ports; returns the Hub's endpoint."""
        for role in ("hub", "cdn"):
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(self, role))
            server.daemon_threads = True
            threading.Thread(target=server.serve_forever, daemon=True).start()
            self.servers.append(server)
        return self.url("hub")

    def stop(self):
        for server in self.servers:
            server.shutdown()
            server.server_close()

    def url(self, role):
        server = self.servers[0 if role == "hub" else 1]
        return "http://127.0.0.1:%d" % server.server_address[1]

    def listing(self, name):
        entries, dirs = [], set()
        for path, (data, lfs) in sorted(self.repos[name].files.items()):
            parts = path.split("/")
            for i in range(1, len(parts)):
                d = "/".join(parts[:i])
                if d not in dirs:
                    dirs.add(d)
                    entries.append({"type": "directory", "oid": "0" * 40, "size": 0, "path": d})
            blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
            entry = {"type": "file", "oid": blob, "size": len(data), "path": path}
            if lfs:
                entry["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
            entries.append(entry)
        return entries


def _handler(hub, role):
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet: the test prints what matters
            pass

        def send(self, status, body=b"", headers=()):
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def error(self, status, code, message):
            self.send(status, json.dumps({"error": message}).encode(),
                      [("Content-Type", "application/json"), ("X-Error-Code", code), ("X-Error-Message", message)])

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            path = urllib.parse.unquote(url.path)
            with hub.lock:
                hub.log.append((role, self.path, self.headers.get("Range"), self.headers.get("Authorization")))
            if role == "cdn":
                return self.cdn(path)
            if path.startswith("/api/models/") and "/tree/main" in path:
                name = path[len("/api/models/"):path.index("/tree/main")]
                if self.allowed(name):
                    self.tree(name, url)
                return
            if "/resolve/main/" in path:
                name, file = path.split("/resolve/main/", 1)
                name = name.lstrip("/")
                if self.allowed(name):
                    if file not in hub.repos[name].files:
                        return self.error(404, "EntryNotFound", "Entry not found")
                    # As the Hub: 302 to a signed URL on another host, which wants no token.
                    target = "%s/_cdn/%s/%s?Signature=x~y_z" % (hub.url("cdn"), name, urllib.parse.quote(file))
                    self.send(302, b"", [("Location", target)])
                return
            self.error(404, "NotFound", "Not found")

        def allowed(self, name):
            repo = hub.repos.get(name)
            if repo is None:
                self.error(404, "RepoNotFound", "Repository not found")
                return False
            if repo.token and self.headers.get("Authorization") != "Bearer " + repo.token:
                # As the Hub: a private repository is "not found" without a token that may read it.
                self.error(401, "RepoNotFound", "Invalid username or password.")
                return False
            if repo.gated:
                self.error(403, "GatedRepo", "Access to model %s is restricted." % name)
                return False
            return True

        def tree(self, name, url):
            entries = hub.listing(name)
            cursor = int(urllib.parse.parse_qs(url.query).get("cursor", ["0"])[0])
            page = entries[cursor:cursor + hub.page_size]
            headers = [("Content-Type", "application/json")]
            if cursor + hub.page_size < len(entries):
                headers.append(("Link", '<%s/api/models/%s/tree/main?recursive=true&cursor=%d>; rel="next"'
                                % (hub.url("hub"), name, cursor + hub.page_size)))
            self.send(200, json.dumps(page).encode(), headers)

        def cdn(self, path):
            owner, _, rest = path[len("/_cdn/"):].partition("/")
            name, _, file = rest.partition("/")
            repo = hub.repos.get(owner + "/" + name)
            if repo is None or file not in repo.files:
                return self.error(404, "EntryNotFound", "Entry not found")
            data, _ = repo.files[file]
            with hub.lock:
                truncate = hub.faults["truncate"] > 0
                if truncate:
                    hub.faults["truncate"] -= 1
                if hub.faults["corrupt"]:
                    middle = len(data) // 2
                    data = data[:middle] + bytes([data[middle] ^ 1]) + data[middle + 1:]
                ignore_range = hub.faults["ignore_range"]
            start, status, headers = 0, 200, [("Content-Type", "application/octet-stream")]
            wanted = self.headers.get("Range")
            if wanted and not ignore_range:
                start = int(wanted.split("=")[1].split("-")[0])
                if start >= len(data):
                    return self.send(416, b"", [("Content-Range", "bytes */%d" % len(data))])
                status = 206
                headers.append(("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data))))
            body = data[start:]
            if not truncate:
                return self.send(status, body, headers)
            # The whole length announced, half of it sent, the connection closed.
            self.send_response(status)
            for header in headers:
                self.send_header(*header)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.close_connection = True

    return Handler


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: stand_in_hub.py OWNER/NAME FILE...")
    hub = Hub()
    hub.add_repo(sys.argv[1], {os.path.basename(f): open(f, "rb").read() for f in sys.argv[2:]})
    print("HF_ENDPOINT=%s (Ctrl-C ends)" % hub.start(), flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        hub.stop()
