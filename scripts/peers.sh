#!/usr/bin/env bash
# Peers side by side (issue 30): a measurement, not a gate (.ci/run does not run it). Runs Bandit
# and GuardDog (pinned, installed from PyPI into a temporary venv) and modelgate on every fixture
# folder under tests/fixtures/behaviour, and prints one Markdown table row per folder: the
# expected verdict (from tests/fixtures/behaviour/README.md), modelgate's verdict (deny/warn/pass
# with the rules behind it), what Bandit reports (severity counts and test ids) and what GuardDog
# reports (its risk label and the threat/capability rules that matched). Then a summary: each
# tool's catch rate on the malicious folders, malicious folders a peer flags that modelgate does
# not deny, and each tool's false alarms on benign and mention folders.
#
# What counts as "flagged": modelgate denies (exit 1 under the default policy); Bandit reports at
# least one MEDIUM or HIGH severity issue (its `-ll` threshold; LOW issues such as B404 "import
# subprocess" are listed but do not count); GuardDog 3 rates the folder medium_risk or high_risk
# (its capability-* rules alone describe what code can do and only count through that rating).
#
# Usage: scripts/peers.sh [path/to/modelgate]   (default: builds target/debug/modelgate)
# Environment: PEERS_VENV (reuse this venv instead of a temporary one; created when missing),
# PEERS_ONLY (a substring: only folders whose `capability/case` contains it), PEERS_JOBS
# (folders scanned in parallel, default 2), PEERS_CACHE (a directory keeping each peer's verdict per
# folder content and tool version, so a rerun for a new modelgate build only runs modelgate),
# PIP_INDEX_URL as pip reads it.
# GuardDog tries to refresh its typosquatting lists from GitHub; without that network it says so
# on stderr (discarded) and scans anyway. Exit 0 unless a tool fails to run.
set -euo pipefail
cd "$(dirname "$0")/.."
BANDIT_VERSION=1.9.4
GUARDDOG_VERSION=3.2.0
if [ -n "${1:-}" ]; then
  bin="$1"
else
  cargo build --quiet --bin modelgate
  bin="${CARGO_TARGET_DIR:-target}/debug/modelgate"
fi
[ -x "$bin" ] || { echo "no modelgate binary at $bin" >&2; exit 2; }
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
venv="${PEERS_VENV:-$work/venv}"
if [ ! -x "$venv/bin/guarddog" ] || [ ! -x "$venv/bin/bandit" ]; then
  echo "== installing bandit $BANDIT_VERSION and guarddog $GUARDDOG_VERSION into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    "bandit==$BANDIT_VERSION" "guarddog==$GUARDDOG_VERSION" >&2
fi

BANDIT_VERSION=$BANDIT_VERSION GUARDDOG_VERSION=$GUARDDOG_VERSION python3 - "$bin" "$venv" "$work" <<'PY'
import concurrent.futures, hashlib, json, os, re, subprocess, sys

binary, venv, work = sys.argv[1:4]
root = "tests/fixtures/behaviour"
only = os.environ.get("PEERS_ONLY", "")
jobs = int(os.environ.get("PEERS_JOBS", "2"))
row = re.compile(r"^\| `([^`]+)` \| (deny|pass) \|")
expected = {}
with open(os.path.join(root, "README.md")) as f:
    for line in f:
        if m := row.match(line):
            expected[m.group(1)] = m.group(2)
on_disk = sorted(f"{c}/{k}" for c in os.listdir(root) if os.path.isdir(os.path.join(root, c))
                 for k in os.listdir(os.path.join(root, c)))
missing = sorted(set(on_disk) ^ set(expected))
if missing:
    sys.exit(f"README.md and the folders disagree: {missing}")
cases = [c for c in on_disk if only in c]
cache = os.environ.get("PEERS_CACHE")
if cache:
    os.makedirs(cache, exist_ok=True)


def cached(tool, version, path, compute):
    """compute(path), or its earlier answer for the same tool version and folder content."""
    if not cache:
        return compute(path)
    h = hashlib.sha256(f"{tool} {version}".encode())
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames.sort()
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            h.update(os.path.relpath(full, path).encode() + b"\0")
            with open(full, "rb") as f:
                h.update(hashlib.sha256(f.read()).digest())
    entry = os.path.join(cache, f"{tool}-{h.hexdigest()[:32]}.json")
    if os.path.exists(entry):
        with open(entry) as f:
            return tuple(json.load(f))
    answer = compute(path)
    with open(entry, "w") as f:
        json.dump(answer, f)
    return answer


def modelgate(path, key):
    out = os.path.join(work, key.replace("/", "__") + ".json")
    run = subprocess.run([binary, "scan", "--no-git", "--format", "json", "-o", out, path],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if run.returncode not in (0, 1):
        raise RuntimeError(f"modelgate {path}: exit {run.returncode}: {run.stderr}")
    with open(out) as f:
        findings = json.load(f)["findings"]
    deny = sorted({x["rule"] for x in findings if x["action"] == "deny"})
    warn = sorted({x["rule"] for x in findings if x["action"] == "warn"})
    if run.returncode == 1:
        return True, "deny " + ",".join(deny)
    if warn:
        return False, "warn " + ",".join(warn)
    return False, "pass"


def bandit(path):
    run = subprocess.run([os.path.join(venv, "bin", "bandit"), "-r", path, "-f", "json", "-q"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if run.returncode not in (0, 1):
        raise RuntimeError(f"bandit {path}: exit {run.returncode}: {run.stderr}")
    results = json.loads(run.stdout)["results"]
    sev = {"HIGH": 0, "MEDIUM": 0, "LOW": 0}
    ids = {}
    for r in results:
        sev[r["issue_severity"]] += 1
        ids.setdefault(r["test_id"], r["issue_severity"][0])
    flagged = sev["HIGH"] + sev["MEDIUM"] > 0
    text = f"H{sev['HIGH']} M{sev['MEDIUM']} L{sev['LOW']}"
    if ids:
        text += " " + ",".join(f"{k}{v}" for k, v in sorted(ids.items()))
    return flagged, text


def guarddog(path):
    run = subprocess.run([os.path.join(venv, "bin", "guarddog"), "pypi", "scan", path, "--output-format", "json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        r = json.loads(run.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(f"guarddog {path}: exit {run.returncode}: {run.stderr[-2000:]}")
    label = (r.get("risk_score") or {}).get("label", "none")
    rules = sorted(k for k, v in (r.get("results") or {}).items() if v)
    threats = [k.removeprefix("threat-") for k in rules if k.startswith("threat-")]
    caps = [k.removeprefix("capability-") for k in rules if k.startswith("capability-")]
    other = [k for k in rules if not k.startswith(("threat-", "capability-"))]
    flagged = label in ("medium_risk", "high_risk")
    text = label
    if threats or other:
        text += " T:" + ",".join(threats + other)
    if caps:
        text += " C:" + ",".join(caps)
    return flagged, text


def one(key):
    path = os.path.join(root, key)
    return (key, modelgate(path, key),
            cached("bandit", os.environ["BANDIT_VERSION"], path, bandit),
            cached("guarddog", os.environ["GUARDDOG_VERSION"], path, guarddog))


with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
    rows = list(pool.map(one, cases))

print(f"modelgate `{binary}`, Bandit {os.environ['BANDIT_VERSION']}, GuardDog {os.environ['GUARDDOG_VERSION']}: "
      f"{len(rows)} folders of {root}\n")
print("| folder | expected | modelgate | Bandit | GuardDog |")
print("|---|---|---|---|---|")
mark = lambda flagged, text: ("**" + text + "**") if flagged else text
for key, mg, bd, gd in rows:
    print(f"| `{key}` | {expected[key]} | {mark(*mg)} | {mark(*bd)} | {mark(*gd)} |")

mal = [r for r in rows if expected[r[0]] == "deny"]
good = [r for r in rows if expected[r[0]] == "pass"]
tools = (("modelgate", 1), ("Bandit", 2), ("GuardDog", 3))
print(f"\n{len(mal)} malicious folders, {len(good)} benign or mention folders (flagged = bold).\n")
print("| tool | malicious flagged | benign/mention flagged (false alarms) |")
print("|---|---|---|")
for name, i in tools:
    print(f"| {name} | {sum(r[i][0] for r in mal)}/{len(mal)} | {sum(r[i][0] for r in good)}/{len(good)} |")
for name, i in tools[1:]:
    missed = [r[0] for r in mal if r[i][0] and not r[1][0]]
    print(f"\nmalicious folders {name} flags and modelgate does not deny ({len(missed)}): " + (", ".join(missed) or "none"))
for name, i in tools:
    fa = [r[0] for r in good if r[i][0]]
    print(f"\nfalse alarms of {name} ({len(fa)}): " + (", ".join(fa) or "none"))
missed_all = [r[0] for r in mal if not r[1][0]]
print(f"\nmalicious folders modelgate does not deny ({len(missed_all)}): " + (", ".join(missed_all) or "none"))
PY

# Chat templates side by side (issue 40): the template scanners on PyPI, pinned (all three exist
# there: `pip download --no-deps` found glyphhound 0.1.0, c4nary 0.3.1 and ggufdoctor 0.3.0),
# on the template corpus of tests/fixtures/chat_templates (real templates, published SSTI
# payloads). glyphhound reads a raw template file; c4nary and ggufdoctor read only GGUF files, so
# each template is also written as a minimal GGUF (version 3, no tensors, one
# `tokenizer.chat_template` string). modelgate scans a folder holding the template as
# `chat_template.jinja`. Flagged: a non-zero exit (glyphhound's default threshold, c4nary
# `--fail-on fail`, ggufdoctor `--fail-on error`, modelgate's deny). PEERS_SKIP_TEMPLATES=1 skips.
if [ "${PEERS_SKIP_TEMPLATES:-}" != 1 ]; then
  tvenv="${PEERS_VENV:-$work/venv}"
  if [ ! -x "$tvenv/bin/glyphhound" ] || [ ! -x "$tvenv/bin/c4nary" ] || [ ! -x "$tvenv/bin/ggufdoctor" ]; then
    echo "== installing glyphhound 0.1.0, c4nary 0.3.1, ggufdoctor 0.3.0 into $tvenv" >&2
    [ -x "$tvenv/bin/pip" ] || python3 -m venv "$tvenv"
    "$tvenv/bin/pip" install --quiet --disable-pip-version-check \
      glyphhound==0.1.0 c4nary==0.3.1 ggufdoctor==0.3.0 >&2
  fi
  python3 - "$bin" "$tvenv" "$work" <<'PY'
import os, struct, subprocess, sys

binary, venv, work = sys.argv[1:4]
root = "tests/fixtures/chat_templates"

def gguf(template):
    def s(text):
        b = text.encode("utf-8")
        return struct.pack("<Q", len(b)) + b
    return (b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + s("tokenizer.chat_template")
            + struct.pack("<I", 8) + s(template))

def flagged(cmd):
    r = subprocess.run(cmd, capture_output=True, timeout=300)
    return r.returncode != 0

rows = []
for label in ("benign", "malicious"):
    with open(os.path.join(root, f"{label}.txt"), encoding="utf-8") as f:
        corpus = f.read().split("\n=====\n")
    for i, template in enumerate(corpus):
        case = os.path.join(work, "templates", f"{label}-{i:02d}")
        os.makedirs(case, exist_ok=True)
        with open(os.path.join(case, "chat_template.jinja"), "w", encoding="utf-8") as f:
            f.write(template)
        with open(os.path.join(work, "templates", f"{label}-{i:02d}.gguf"), "wb") as f:
            f.write(gguf(template))
        jinja = os.path.join(case, "chat_template.jinja")
        model = case + ".gguf"
        rows.append((label, i, (
            flagged([binary, "scan", case, "--no-git"]),
            flagged([f"{venv}/bin/glyphhound", "scan", "--source", "file", jinja]),
            flagged([f"{venv}/bin/c4nary", "scan", "--fail-on", "fail", model]),
            flagged([f"{venv}/bin/ggufdoctor", "--fail-on", "error", model]),
        )))
tools = ("modelgate", "glyphhound", "c4nary", "ggufdoctor")
mal = [r for r in rows if r[0] == "malicious"]
good = [r for r in rows if r[0] == "benign"]
print(f"\nchat templates: {len(mal)} malicious, {len(good)} benign ({root})\n")
print("| tool | malicious flagged | benign flagged (false alarms) |")
print("|---|---|---|")
for i, name in enumerate(tools):
    print(f"| {name} | {sum(r[2][i] for r in mal)}/{len(mal)} | {sum(r[2][i] for r in good)}/{len(good)} |")
for i, name in enumerate(tools[1:], 1):
    missed = [f"malicious-{r[1]:02d}" for r in mal if r[2][i] and not r[2][0]]
    print(f"\nmalicious templates {name} flags and modelgate does not deny: " + (", ".join(missed) or "none"))
PY
fi
