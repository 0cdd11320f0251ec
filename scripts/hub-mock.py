#!/usr/bin/env python3
"""A loopback stand-in for the Hugging Face Hub API, for `.ci/run`'s container stage.

Serves one local folder as the model repository NS/NAME, with the request shapes modelgate's
remote client uses (the same ones tests/remote mocks):
  GET /api/models/NS/NAME/revision/REV          -> {"id": "NS/NAME", "sha": COMMIT}
  GET /api/models/NS/NAME/tree/COMMIT?...        -> the file list (LFS entries carry the SHA-256)
  GET /NS/NAME/resolve/COMMIT/PATH               -> the bytes (a `Range: bytes=a-b` gets a 206)
Plain HTTP on 127.0.0.1 only; standard library only; nothing from the folder is interpreted.
Stops by itself after --seconds (default 600) so a failed CI run leaves nothing listening.

Usage: hub-mock.py --root DIR --repo NS/NAME --port-file FILE [--seconds N]
"""
import argparse
import hashlib
import json
import os
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LFS_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".pkl", ".ckpt", ".gguf", ".onnx", ".h5")


def files_of(root):
    out = []
    for d, dirs, names in os.walk(root):
        dirs.sort()
        for n in sorted(names):
            p = os.path.join(d, n)
            if os.path.isfile(p) and not os.path.islink(p):
                out.append(os.path.relpath(p, root).replace(os.sep, "/"))
    return sorted(out)


def entry(root, rel):
    data = open(os.path.join(root, rel), "rb").read()
    e = {"type": "file", "path": rel}
    if rel.endswith(LFS_SUFFIXES):
        e.update(oid="b" * 40, size=134,
                 lfs={"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134})
    else:
        blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        e.update(oid=blob, size=len(data))
    return e


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--seconds", type=int, default=600)
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    listing = files_of(root)
    commit = hashlib.sha1(json.dumps(listing).encode()).hexdigest()
    repo = a.repo

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def send(self, status, body=b"", headers=()):
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_HEAD(self):
            self.do_GET()

        def do_GET(self):
            path = self.path.split("?", 1)[0]
            if path == f"/api/models/{repo}/revision/main" or path == f"/api/models/{repo}/revision/{commit}":
                return self.send(200, json.dumps({"id": repo, "sha": commit}).encode(),
                                 [("Content-Type", "application/json")])
            if path == f"/api/models/{repo}/tree/{commit}":
                body = json.dumps([entry(root, r) for r in listing]).encode()
                return self.send(200, body, [("Content-Type", "application/json")])
            prefix = f"/{repo}/resolve/{commit}/"
            if path.startswith(prefix) and path[len(prefix):] in listing:
                data = open(os.path.join(root, path[len(prefix):]), "rb").read()
                m = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
                if m:
                    start = int(m.group(1))
                    end = min(int(m.group(2)) if m.group(2) else len(data) - 1, len(data) - 1)
                    if start >= len(data):
                        return self.send(416, b"", [("Content-Range", f"bytes */{len(data)}")])
                    return self.send(206, data[start:end + 1],
                                     [("Content-Range", f"bytes {start}-{end}/{len(data)}")])
                return self.send(200, data)
            return self.send(404, b'{"error":"Not found"}')

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(a.port_file + ".tmp", a.port_file)
    threading.Timer(a.seconds, server.shutdown).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
