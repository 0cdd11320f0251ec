"""Pinned PyPI downloads for the interop scripts (real-world.sh, transformers-precision.sh).

A file is named by package, version, file name and the SHA-256 PyPI records for it; it is
downloaded once into the cache folder (the URL comes from PyPI's JSON API at PYPI_URL, default
https://pypi.org, so a mirror works) and checked against the pinned digest on every use. A
mismatch is an error, never silently refetched over.
"""

import hashlib
import json
import os
import shutil
import sys
import urllib.parse
import urllib.request

PYPI = os.environ.get("PYPI_URL", "https://pypi.org").rstrip("/")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch(cache, name, version, filename, digest):
    """The pinned file from the cache, downloading it first when it is not there."""
    path = os.path.join(cache, filename)
    if not os.path.exists(path):
        meta_url = f"{PYPI}/pypi/{name}/json"
        with urllib.request.urlopen(meta_url, timeout=60) as r:
            meta = json.load(r)
        files = [f for f in meta["releases"].get(version, []) if f["filename"] == filename]
        if not files:
            sys.exit(f"{name} {version}: PyPI lists no file {filename}")
        url = urllib.parse.urljoin(meta_url, files[0]["url"])
        part = path + ".part"
        with urllib.request.urlopen(url, timeout=300) as r, open(part, "wb") as out:
            shutil.copyfileobj(r, out, 1 << 20)
        os.replace(part, path)
    got = sha256(path)
    if got != digest:
        sys.exit(f"{filename}: sha256 {got}, pinned {digest} (delete {path} to refetch)")
    return path
