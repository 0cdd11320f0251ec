#!/usr/bin/env bash
# Chat-template precision (issue 40): the real Jinja chat templates that two pinned PyPI sdists
# ship (llama.cpp's models/templates, vendored by llama-cpp-python: Llama 3.x, Qwen 2.5/3/QwQ,
# DeepSeek R1, Command R tool use, Hermes tool use, Functionary, Granite, Phi 3.5, Mistral,
# Gemma 2, Kimi K2, gpt-oss; vLLM's tool-calling examples and multimodal templates), each laid
# out as a Hugging Face model folder in every carrier modelgate reads (`chat_template` string in
# tokenizer_config.json, a named list with `tool_use`, chat_template.jinja, chat_template.json,
# processor_config.json) and scanned with the default policy. Fails on any deny: these templates
# use tool calls, raise_exception, namespace, macros, loops, tojson and strftime_now, and FMT005
# must pass them all.
#
# Downloads are cached in ${XDG_CACHE_HOME:-~/.cache}/modelgate-real-world and checked against
# the pinned SHA-256 (scripts/pinned_pypi.py). Usage: scripts/chat-templates.sh [path/to/modelgate]
# (default: builds target/debug/modelgate). Exit 0 when nothing is denied, 1 on a deny, 2 when a
# download, digest or the tool itself fails.
set -euo pipefail
cd "$(dirname "$0")/.."
# bin, cache, work (scripts/pinned-setup.sh)
. scripts/pinned-setup.sh "$@"

# name version file sha256 (PyPI's digest of that file)
cat >"$work/pins.txt" <<'PINS'
llama-cpp-python 0.3.16 llama_cpp_python-0.3.16.tar.gz 34ed0f9bd9431af045bb63d9324ae620ad0536653740e9bb163a2e1fcb973be6
vllm 0.10.1 vllm-0.10.1.tar.gz 99d00498f25b94767bb2696e88feb67730677dae605c9b8af99492dc3c34492d
PINS

python3 - "$cache" "$work" <<'PY' || exit 2
import json, os, sys, tarfile
sys.path.insert(0, "scripts")
import pinned_pypi

cache, work = sys.argv[1], sys.argv[2]
root = os.path.join(work, "models")
count = 0
for line in open(os.path.join(work, "pins.txt")):
    name, version, filename, digest = line.split()
    path = pinned_pypi.fetch(cache, name, version, filename, digest)
    with tarfile.open(path) as tar:
        for member in tar.getmembers():
            if not (member.isfile() and member.name.endswith(".jinja")):
                continue
            text = tar.extractfile(member).read().decode("utf-8")
            stem = f"{count:03d}-{name}--{os.path.basename(member.name)[:-len('.jinja')]}"
            layouts = {
                "string/tokenizer_config.json": {"chat_template": text},
                "named/tokenizer_config.json": {
                    "chat_template": [
                        {"name": "default", "template": text},
                        {"name": "tool_use", "template": text},
                    ]
                },
                "jinja/chat_template.jinja": None,
                "json/chat_template.json": {"chat_template": text},
                "processor/processor_config.json": {"processor_class": "AutoProcessor", "chat_template": text},
            }
            for rel, doc in layouts.items():
                dest = os.path.join(root, stem, rel)
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                with open(dest, "w", encoding="utf-8") as out:
                    if doc is None:
                        out.write(text)
                    else:
                        json.dump(doc, out, indent=2)
            count += 1
print(f"templates: {count} (each in 5 carriers)", file=sys.stderr)
with open(os.path.join(work, "count"), "w") as f:
    f.write(str(count))
PY

set +e
"$bin" scan "$work/models" --format json --no-git -o "$work/report.json"
code=$?
set -e
[ "$code" -le 1 ] || { echo "modelgate failed (exit $code)" >&2; exit 2; }
python3 - "$work/report.json" "$(cat "$work/count")" <<'PY'
import collections, json, sys
report = json.load(open(sys.argv[1]))
files = [f for f in report["files"]]
carriers = collections.Counter(f["format"] for f in files)
judged = sum(len(f.get("facts", {}).get("chat_templates", [])) for f in files)
denied = [f for f in report["findings"] if f["action"] == "deny"]
fmt005 = [f for f in report["findings"] if f["rule"] == "FMT005"]
print(f"templates: {sys.argv[2]}, files: {len(files)} {dict(sorted(carriers.items()))}, "
      f"templates judged: {judged}, FMT005: {len(fmt005)}, denied: {len(denied)}")
for f in denied[:40]:
    print(f"  DENY {f['rule']} {f['path']}: {f['message'][:200]}")
sys.exit(1 if denied else 0)
PY
