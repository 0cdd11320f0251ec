#!/usr/bin/env bash
# Real code as model code (issue 37): the standard library of every Python on the machine and the
# transformers, diffusers and timm wheels, laid out so that every `.py` is judged as a model's own
# code (a `config.json` in every folder that holds one), scanned with the given binary. A code
# judge that can be killed by a few lines of Python is killed by real code sooner or later: this
# must finish with a report for every tree, never a crash, a signal or exit 2.
#
# Standard libraries: `$(pyenv root)/versions/3.X.*/lib/python3.X` for pyenv's 3.6 to 3.13 (else
# `python3.X` on PATH, asked for its `sysconfig` stdlib path); only `.py` files are copied, tests
# and their deliberately broken files included, `site-packages` and `__pycache__` left out. Nothing
# is imported or run from them. Wheels: pinned by version, file name and the SHA-256 PyPI records,
# fetched through scripts/pinned_pypi.py into ${XDG_CACHE_HOME:-~/.cache}/modelgate-real-world
# like scripts/real-world.sh (a digest mismatch is an error); their `.py` files are copied the same
# way.
#
# Printed per tree: `.py` files, files in the report, exit code, wall time, peak resident memory
# (the scan process's own, from wait4), SRC006 deny/warn counts and SCAN004 (limit) findings.
# Then the ten slowest files: the report records no per-file time, so the largest files of each
# tree (REAL_CODE_CANDIDATES of them) are each scanned alone in a folder of their own and timed;
# a small pathological file would be missed by that, which is what tests/fixtures/hostile-python
# is for.
#
# Usage: scripts/real-code.sh path/to/modelgate   (builds nothing)
# Environment (defaults in brackets):
#   REAL_CODE_PYTHONS     versions to take the standard library of, e.g. "3.11" or "3.6 3.13";
#                         "none" for none                                  [every 3.6-3.13 found]
#   REAL_CODE_WHEELS      wheels, e.g. "transformers"; "none" for none [transformers diffusers timm]
#   REAL_CODE_CANDIDATES  largest files per tree timed alone for the slowest list          [20]
#   REAL_CODE_TIMEOUT     seconds a scan may take before it is killed (a failure)         [1800]
#   REAL_CODE_MEMORY_MIB  address-space cap for each scan, so a memory bomb fails the scan
#                         instead of taking the machine down; 0 for none                  [4096]
#   REAL_CODE_KEEP        a directory to keep the laid-out trees and JSON reports in
# Exit 0 when every scan gave a report with exit 0 or 1; 1 when any crashed, was killed, exited 2
# or wrote no report; 2 on a setup problem (bad usage, a missing Python, a download or digest).
set -euo pipefail
cd "$(dirname "$0")/.."
# bin, cache, work (scripts/pinned-setup.sh); a binary must be given
MG_REQUIRE_BINARY=1 . scripts/pinned-setup.sh "$@"
pyenv_root="$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"

python3 - "$bin" "$cache" "$work" "$pyenv_root" <<'PY'
import glob, json, os, re, resource, shutil, subprocess, sys, threading, time, zipfile

binary, cache, work, pyenv_root = sys.argv[1:5]
sys.path.insert(0, "scripts")
from pinned_pypi import fetch as fetch_pinned  # noqa: E402

# name version file sha256 (PyPI's digest of that file)
WHEELS = {
    "transformers": ("transformers", "4.57.1", "transformers-4.57.1-py3-none-any.whl",
                     "b10d05da8fa67dc41644dbbf9bc45a44cb86ae33da6f9295f5fbf5b7890bd267"),
    "diffusers": ("diffusers", "0.42.1", "diffusers-0.42.1-py3-none-any.whl",
                  "9154faa704ce00e0b77f568e0d64786064368528aab5fc14eeea92f87d788014"),
    "timm": ("timm", "1.0.31", "timm-1.0.31-py3-none-any.whl",
             "5bd50f7d0fe6d09bf9285ac2523234a1b7e6bf075c0be3e7aed09139fcb617c7"),
}
CONFIG = json.dumps({"model_type": "real-code", "architectures": ["RealCode"]}) + "\n"
keep = os.environ.get("REAL_CODE_KEEP")
candidates = int(os.environ.get("REAL_CODE_CANDIDATES", "20"))
timeout = float(os.environ.get("REAL_CODE_TIMEOUT", "1800"))
memory_mib = int(os.environ.get("REAL_CODE_MEMORY_MIB", "4096"))
base = keep or work
os.makedirs(base, exist_ok=True)


def die(message):
    """A setup problem (not modelgate's): exit 2."""
    print(message, file=sys.stderr)
    sys.exit(2)


def words(var, default):
    value = os.environ.get(var)
    if value is None:
        return default
    return [] if value.strip() == "none" else value.replace(",", " ").split()


def pyenv_stdlibs():
    """{"3.X": path} for pyenv's interpreters 3.6 to 3.13 (the newest patch release of each)."""
    found = {}
    for d in sorted(glob.glob(os.path.join(pyenv_root, "versions", "3.*")),
                    key=lambda p: [int(x) for x in re.findall(r"\d+", os.path.basename(p))]):
        m = re.fullmatch(r"3\.(\d+)\.\d+", os.path.basename(d))
        lib = m and os.path.join(d, "lib", f"python3.{m.group(1)}")
        if m and 6 <= int(m.group(1)) <= 13 and os.path.isdir(lib):
            found[f"3.{m.group(1)}"] = lib
    return found


def stdlib_of(version, found):
    if version in found:
        return found[version]
    exe = shutil.which(f"python{version}")
    if exe:
        out = subprocess.run([exe, "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"],
                             capture_output=True, text=True)
        if out.returncode == 0 and os.path.isdir(out.stdout.strip()):
            return out.stdout.strip()
    die(f"no Python {version}: not in {pyenv_root}/versions and no python{version} on PATH")


def lay_out(pairs, root):
    """Copies (relative path, bytes-or-source-path) pairs of .py files under root and puts a
    config.json into every folder that holds one. Returns the number of .py files."""
    folders = set()
    n = 0
    for rel, src in pairs:
        dest = os.path.join(root, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        if isinstance(src, bytes):
            with open(dest, "wb") as f:
                f.write(src)
        else:
            shutil.copyfile(src, dest)
        folders.add(os.path.dirname(dest))
        n += 1
    folders.add(root)
    for folder in folders:
        with open(os.path.join(folder, "config.json"), "w") as f:
            f.write(CONFIG)
    return n


def stdlib_files(lib):
    for dirpath, dirnames, filenames in os.walk(lib):
        dirnames[:] = sorted(d for d in dirnames if d not in ("site-packages", "__pycache__"))
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if name.endswith(".py") and os.path.isfile(path) and not os.path.islink(path):
                yield os.path.relpath(path, lib), path


def wheel_files(path):
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            name = info.filename
            if not name.endswith(".py") or ".dist-info/" in name or name.startswith("/") or ".." in name.split("/"):
                continue
            yield name, z.read(info)


def limit_memory():
    if memory_mib:
        cap = memory_mib << 20
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def scan(root, report):
    """Runs one JSON scan; (exit code or -signal, wall seconds, peak RSS in MiB, killed)."""
    started = time.monotonic()
    proc = subprocess.Popen([binary, "scan", "--no-git", "--quiet", "--format", "json", "-o", report, root],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=limit_memory)
    killed = []
    timer = threading.Timer(timeout, lambda: (killed.append(1), proc.kill()))
    timer.start()
    # stderr is small (a panic message at most); read it before reaping so the pipe never fills.
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - started
    if proc.returncode not in (0, 1) and err:
        sys.stderr.write(err.decode("utf-8", "replace")[-2000:])
    return proc.returncode, wall, usage.ru_maxrss / 1024, bool(killed)


failures = []
trees = []  # (label, root)
found = pyenv_stdlibs()
for version in words("REAL_CODE_PYTHONS", sorted(found, key=lambda v: int(v.split(".")[1]))):
    lib = stdlib_of(version, found)
    root = os.path.join(base, f"stdlib-{version}")
    n = lay_out(stdlib_files(lib), root)
    trees.append((f"stdlib {version}", root, n))
for name in words("REAL_CODE_WHEELS", list(WHEELS)):
    if name not in WHEELS:
        die(f"REAL_CODE_WHEELS: {name} is not one of {', '.join(WHEELS)}")
    pin = WHEELS[name]
    try:
        wheel = fetch_pinned(cache, *pin)
    except (SystemExit, OSError) as e:
        die(f"{name}: {e}")
    root = os.path.join(base, f"{name}-{pin[1]}")
    n = lay_out(wheel_files(wheel), root)
    trees.append((f"{name} {pin[1]}", root, n))
if not trees:
    die("nothing to scan (REAL_CODE_PYTHONS and REAL_CODE_WHEELS are both empty)")

print(f"{'tree':<22} {'.py':>6} {'files':>6} {'exit':>5} {'wall s':>8} {'peak MB':>8} "
      f"{'SRC006 d/w':>11} {'SCAN004':>8}")
timed = []
total_py = total_wall = 0
for label, root, n in trees:
    report = os.path.join(base, label.replace(" ", "-") + ".json")
    code, wall, peak, killed = scan(root, report)
    total_py += n
    total_wall += wall
    files = deny = warn = limits = "-"
    try:
        with open(report) as f:
            r = json.load(f)
        files = len(r["files"])
        s6 = [f for f in r["findings"] if f["rule"] == "SRC006"]
        deny = sum(f["action"] == "deny" for f in s6)
        warn = sum(f["action"] == "warn" for f in s6)
        limits = sum(f["rule"] == "SCAN004" for f in r["findings"])
    except (OSError, ValueError, KeyError) as e:
        if code in (0, 1):
            failures.append(f"{label}: no readable report ({e})")
    if code not in (0, 1) or killed:
        failures.append(f"{label}: {'killed after the timeout' if killed else f'exit {code}'}")
    print(f"{label:<22} {n:>6} {files:>6} {code:>5} {wall:>8.2f} {peak:>8.0f} {f'{deny}/{warn}':>11} {limits:>8}",
          flush=True)
    # The largest files, each alone in a folder of its own with a config.json.
    sizes = []
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            if name.endswith(".py"):
                p = os.path.join(dirpath, name)
                sizes.append((os.path.getsize(p), p))
    for size, path in sorted(sizes, reverse=True)[:candidates]:
        alone = os.path.join(work, "alone")
        shutil.rmtree(alone, ignore_errors=True)
        os.makedirs(alone)
        shutil.copyfile(path, os.path.join(alone, os.path.basename(path)))
        with open(os.path.join(alone, "config.json"), "w") as f:
            f.write(CONFIG)
        code, wall, peak, killed = scan(alone, os.path.join(work, "alone.json"))
        rel = f"{label}: {os.path.relpath(path, root)}"
        if code not in (0, 1) or killed:
            failures.append(f"{rel} alone: {'killed after the timeout' if killed else f'exit {code}'}")
        timed.append((wall, peak, size, rel))

print(f"\n{len(trees)} trees, {total_py} .py files, {total_wall:.1f} s of scans")
print(f"ten slowest of the {candidates} largest files per tree, each scanned alone "
      f"(process wall time, startup included):")
for wall, peak, size, rel in sorted(timed, reverse=True)[:10]:
    print(f"  {wall:7.2f} s {peak:7.0f} MB {size:>9} B  {rel}")
if failures:
    print("FAILED (each one is a crash, a kill or exit 2 on real code):")
    for f in failures:
        print("  " + f)
    sys.exit(1)
PY
