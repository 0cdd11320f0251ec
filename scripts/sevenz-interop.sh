#!/usr/bin/env bash
# Reads 7z archives made by py7zr (a pure-Python 7-Zip writer, PyPI) with modelgate (issue 40):
# one archive per coder chain py7zr writes, each holding a pickle that calls `os.system`, a text
# file, an empty file, a directory and a 200 KiB x86-like binary (many E8/E9 branches, so BCJ
# really converts). The header is encoded (py7zr's default, like 7-Zip's). Expected:
#   decoded chains (default BCJ x86 + LZMA2, LZMA2, LZMA, Copy, Deflate, BZip2, BCJ + LZMA,
#   Delta + LZMA2): format 7z, every member listed, PKL001 on the pickle, no ARC001 (so every
#   member's stored CRC-32 matched what modelgate decoded);
#   not decoded (ARM + LZMA2, Zstandard, AES with and without an encrypted header): ARC001
#   naming the coder or the encryption, no PKL001.
# With SEVENZ_FIXTURE=path, also writes an archive made the way the unit tests' embedded one was
# (src/inspect/sevenz/tests.rs, PY7ZR_DEFAULT; py7zr stores modification times, so the bytes
# differ run to run, the contents do not).
# Usage: scripts/sevenz-interop.sh [path/to/modelgate]   (default: builds target/debug/modelgate)
# Environment: PYTHON (interpreter for the throwaway venv), MODELGATE_VENV (an existing venv to
# install py7zr into instead), PY7ZR_VERSION (default 1.1.4). Exit 1 when any check fails.
set -euo pipefail
cd "$(dirname "$0")/.."
# The binary and scratch preamble shared with the pinned-download scripts: sets bin and work.
# shellcheck source=scripts/pinned-setup.sh
source scripts/pinned-setup.sh
venv="${MODELGATE_VENV:-$work/venv}"
if [ ! -x "$venv/bin/python" ]; then
  "${PYTHON:-python3}" -m venv "$venv"
fi
"$venv/bin/pip" install --quiet "py7zr==${PY7ZR_VERSION:-1.1.4}"

cd "$work"
MODELGATE="$bin" SEVENZ_FIXTURE="${SEVENZ_FIXTURE:-}" "$venv/bin/python" - <<'PY'
import json, os, random, subprocess, sys
import py7zr

random.seed(7)
os.makedirs("src/sub", exist_ok=True)
os.makedirs("src/dir", exist_ok=True)
open("src/weights.bin", "wb").write(
    b"\x80\x04\x95\x15\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x8c\x06system\x93\x8c\x02id\x85R.")
open("src/sub/readme.txt", "w").write("hello\n" * 1000)
open("src/empty.txt", "w").close()
code = bytearray()
while len(code) < 200_000:
    if random.random() < 0.05:
        code += bytes([random.choice([0xE8, 0xE9])])
        code += random.randrange(-70000, 70000).to_bytes(4, "little", signed=True)
    else:
        code.append(random.randrange(256))
open("src/sub/prog.so", "wb").write(bytes(code))

decoded = {
    "default": None,
    "lzma2": [{"id": py7zr.FILTER_LZMA2, "preset": 9}],
    "lzma": [{"id": py7zr.FILTER_LZMA}],
    "copy": [{"id": py7zr.FILTER_COPY}],
    "deflate": [{"id": py7zr.FILTER_DEFLATE}],
    "bzip2": [{"id": py7zr.FILTER_BZIP2}],
    "bcj-lzma": [{"id": py7zr.FILTER_X86}, {"id": py7zr.FILTER_LZMA}],
    "delta-lzma2": [{"id": py7zr.FILTER_DELTA, "dist": 4}, {"id": py7zr.FILTER_LZMA2}],
}
refused = {
    "arm-lzma2": ([{"id": py7zr.FILTER_ARM}, {"id": py7zr.FILTER_LZMA2}], None, "ARM"),
    "zstd": ([{"id": py7zr.FILTER_ZSTD}], None, "Zstandard"),
    "aes": (None, "pw", "AES-256"),
}
for name, filters in decoded.items():
    with py7zr.SevenZipFile(f"{name}.7z", "w", filters=filters) as z:
        z.writeall("src", "src")
for name, (filters, password, _) in refused.items():
    with py7zr.SevenZipFile(f"{name}.7z", "w", filters=filters, password=password) as z:
        z.writeall("src", "src")
with py7zr.SevenZipFile("aes-header.7z", "w", password="pw", header_encryption=True) as z:
    z.writeall("src", "src")
refused["aes-header"] = (None, "pw", "AES-256")

fixture = os.environ.get("SEVENZ_FIXTURE")
if fixture:
    # The unit tests' PY7ZR_DEFAULT: py7zr's default filters over a small x86-like file and the
    # pickle.
    os.makedirs("small", exist_ok=True)
    r = random.Random(3)
    small = bytearray()
    for _ in range(60):
        small += bytes([0x55, 0x89, 0xE5, 0xE8]) + r.randrange(-3000, 3000).to_bytes(4, "little", signed=True)
    open("small/code.bin", "wb").write(bytes(small))
    open("small/model.pkl", "wb").write(open("src/weights.bin", "rb").read())
    with py7zr.SevenZipFile(fixture, "w") as z:
        z.writeall("small", "small")

members = sorted(["src", "src/dir", "src/empty.txt", "src/sub", "src/sub/prog.so",
                  "src/sub/readme.txt", "src/weights.bin"])
failed = 0


def inspect(path):
    out = subprocess.run([os.environ["MODELGATE"], "inspect", path, "--format", "json"],
                         capture_output=True, check=False)
    return json.loads(out.stdout)


for name in list(decoded) + list(refused):
    r = inspect(f"{name}.7z")
    f = r["file"]
    rules = sorted(x["rule"] for x in r["findings"])
    names = sorted(f["facts"].get("archive_member_names", []))
    coders = f["facts"].get("archive_coders")
    ok = f["format"] == "7z"
    if name in decoded:
        ok = ok and rules == ["PKL001"] and names == members
    else:
        want = refused[name][2]
        arc = [x for x in r["findings"] if x["rule"] == "ARC001"]
        ok = ok and "PKL001" not in rules and any(want in x["message"] for x in arc)
        # Names stay listed unless the header itself is encrypted.
        ok = ok and (names == members or name == "aes-header")
    print(f"{'ok  ' if ok else 'FAIL'} {name:12} coders={coders} rules={rules}")
    if not ok:
        failed += 1
        print(json.dumps(r, indent=1)[:3000])
print(f"py7zr {py7zr.__version__}: {len(decoded) + len(refused)} archives, {failed} failed")
sys.exit(1 if failed else 0)
PY
