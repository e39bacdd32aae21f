#!/usr/bin/env python3
# stream_client.py PORT MAX_TOKENS [TIMEOUT_S]: one streamed /v1/completions request to the r1pi
# server on 127.0.0.1:PORT, as a client sees a server that fails under it. Prints "first event"
# when the first event arrives (the request is in flight), then how it ended, one of:
#   done            data: [DONE] came (the server finished)
#   closed: WHY     the connection ended without [DONE] (reset, or the server's process gone)
#   error event     the server sent an error event instead of the rest
#   timeout         nothing for TIMEOUT_S seconds (default 120): the server hangs
import http.client
import json
import socket
import sys

port, max_tokens = int(sys.argv[1]), int(sys.argv[2])
timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 120.0
body = json.dumps({"prompt": "hi", "max_tokens": max_tokens, "temperature": 0, "stream": True})
try:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
    res = conn.getresponse()
    first = True
    while True:
        line = res.readline()
        if not line:
            print("closed: end of stream without [DONE]", flush=True)
            break
        line = line.strip()
        if not line.startswith(b"data: "):
            continue
        if first:
            print("first event", flush=True)
            first = False
        if line == b"data: [DONE]":
            print("done", flush=True)
            break
        if b'"error"' in line:
            print("error event", flush=True)
            break
except socket.timeout:
    print("timeout", flush=True)
except (ConnectionError, http.client.HTTPException, OSError) as e:
    print("closed: " + type(e).__name__, flush=True)
