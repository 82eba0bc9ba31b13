#!/usr/bin/python3
"""A real HTTP webhook receiver for the notify tests, on 127.0.0.1.

    httpd.py DIR [SECRET]

Writes its port to DIR/port, records every request as DIR/req-N.json (path,
headers, body, whether the body is valid JSON, whether X-Nextbot-Signature is the
HMAC-SHA256 of the body under SECRET) and answers as DIR/mode says, one word per
line; each request takes the first line, the last one stays (missing file: 200):
    200 | 404 | 500   that status
    429:SECS          429 with Retry-After: SECS
    redirect          302 to /elsewhere
    big               200 with a 10 MB body
    hang              never answer
With a SECRET, a request whose signature does not verify gets 401.
"""
import hashlib
import hmac
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIR = sys.argv[1]
SECRET = sys.argv[2].encode() if len(sys.argv) > 2 else None
lock = threading.Lock()
count = 0


def write_json(name, obj):
    path = os.path.join(DIR, name)
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f, indent=1)
    os.rename(path + ".tmp", path)


def next_mode():
    path = os.path.join(DIR, "mode")
    try:
        with open(path) as f:
            lines = [l.strip() for l in f if l.strip()]
    except FileNotFoundError:
        return "200"
    if not lines:
        return "200"
    if len(lines) > 1:
        with open(path + ".tmp", "w") as f:
            f.write("\n".join(lines[1:]) + "\n")
        os.rename(path + ".tmp", path)
    return lines[0]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        global count
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        sig = self.headers.get("X-Nextbot-Signature")
        sig_ok = None
        if SECRET is not None:
            want = "sha256=" + hmac.new(SECRET, body, hashlib.sha256).hexdigest()
            sig_ok = sig is not None and hmac.compare_digest(sig, want)
        try:
            json.loads(body.decode("utf-8"))
            json_ok = True
        except Exception:
            json_ok = False
        with lock:
            count += 1
            n = count
            mode = next_mode()
        write_json("req-%d.json" % n, {
            "path": self.path, "headers": dict(self.headers.items()),
            "body": body.decode("utf-8", "replace"), "json_ok": json_ok,
            "sig_ok": sig_ok, "mode": mode})
        if sig_ok is False:
            return self.answer(401, b"bad signature")
        if mode == "hang":
            time.sleep(60)
            return
        if mode.startswith("429:"):
            self.send_response(429)
            self.send_header("Retry-After", mode[4:])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if mode == "redirect":
            self.send_response(302)
            self.send_header("Location", "/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if mode == "big":
            self.send_response(200)
            self.send_header("Content-Length", str(10 << 20))
            self.end_headers()
            try:
                for _ in range(10 << 4):
                    self.wfile.write(b"x" * (64 << 10))
            except OSError:
                pass
            return
        self.answer(int(mode), b"status %s\n" % mode.encode())

    def answer(self, code, text):
        self.send_response(code)
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
write_json("port.json", server.server_address[1])
os.rename(os.path.join(DIR, "port.json"), os.path.join(DIR, "port"))
server.serve_forever()
