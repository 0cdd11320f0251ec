#!/usr/bin/env bash
# Reads modelgate's SBOMs with the tools people use (issue 18): lib4sbom (parses components,
# model cards, datasets), cyclonedx-python-lib (loads the JSON and checks the dependency graph)
# and sbomgrader (grade). Installs them into a throwaway venv; SBOMs of every example and of a
# Hugging Face cache fixture. Prints one line per SBOM and fails when a grade is below B, lib4sbom
# drops components, or cyclonedx-python-lib warns about the dependency graph.
# Usage: scripts/sbom-consumers.sh [path/to/modelgate]   (default: target/debug/modelgate)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/debug/modelgate}"
[ -x "$bin" ] || { echo "no modelgate binary at $bin (cargo build first)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is required" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
py="$work/venv/bin/python"
pkgs=()
for pkg in lib4sbom cyclonedx-python-lib sbomgrader; do
  # sbomgrader needs Python >= 3.12: without it the grade is reported as `-`, not failed.
  if "$py" -m pip index versions "$pkg" >/dev/null 2>&1; then
    pkgs+=("$pkg")
  else
    echo "note: $pkg is not installable with $("$py" --version)" >&2
  fi
done
case " ${pkgs[*]} " in
  *" lib4sbom "*" cyclonedx-python-lib "*) ;;
  *) echo "skip: lib4sbom and cyclonedx-python-lib are required" >&2; exit 0 ;;
esac
"$py" -m pip install -q "${pkgs[@]}" >/dev/null

# An HF cache fixture: one repository, one snapshot, a card naming a Hub dataset.
cache="$work/hub/models--acme--tiny"
commit=0123456789abcdef0123456789abcdef01234567
mkdir -p "$cache/blobs" "$cache/refs" "$cache/snapshots/$commit"
printf '%s' "$commit" >"$cache/refs/main"
add() {
  local sum
  sum="$(printf '%s' "$2" | sha256sum | cut -d' ' -f1)"
  printf '%s' "$2" >"$cache/blobs/$sum"
  ln -s "../../blobs/$sum" "$cache/snapshots/$commit/$1"
}
add README.md $'---\nlicense: mit\ndatasets:\n- imdb\npipeline_tag: text-classification\n---\n# tiny\n'
add config.json '{"model_type": "bert", "architectures": ["BertModel"]}'
add model.safetensors "$(printf '\x02\x00\x00\x00\x00\x00\x00\x00{}')"

targets=("$cache")
for d in examples/*-model/; do targets+=("${d%/}"); done
fail=0
for t in "${targets[@]}"; do
  out="$work/$(basename "$t").cdx.json"
  "$bin" scan --quiet --fail-on never --format json -o /dev/null --sbom "$out" "$t" || true
  [ -f "$out" ] || { echo "FAIL $t: no sbom written"; fail=1; continue; }
  line="$("$py" - "$out" <<'PY'
import io, json, sys, warnings, contextlib
path = sys.argv[1]
doc = json.load(open(path))
def count(cs):
    return sum(1 + count(c.get("components", [])) for c in cs)
want = count(doc.get("components", []))
problems = []
# lib4sbom: every component parsed.
from lib4sbom.parser import SBOMParser
p = SBOMParser()
with contextlib.redirect_stdout(io.StringIO()):
    p.parse_file(path)
got = len(p.get_packages()) + len(p.get_files())
if got == 0 or got < want // 2:
    problems.append(f"lib4sbom saw {got} of {want} components")
# cyclonedx-python-lib: loads, no incomplete-graph warning.
from cyclonedx.model.bom import Bom
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    bom = Bom.from_json(doc)
    bom.validate()
if any("ependenc" in str(x.message) for x in w):
    problems.append("cyclonedx-python-lib: dependency graph incomplete")
# sbomgrader
import importlib.util, subprocess
grade = "-"
if importlib.util.find_spec("sbomgrader"):
    r = subprocess.run([sys.executable, "-m", "sbomgrader", "grade", path],
                       capture_output=True, text=True)
    for tok in (r.stdout + r.stderr).split():
        t = tok.strip("*:,.")
        if t in ("A", "B", "C", "D", "E", "F"):
            grade = t
print(f"grade={grade} lib4sbom={got}/{want} " + ("; ".join(problems) or "ok"))
PY
)" || line="error running the consumers"
  echo "$t: $line"
  case "$line" in
    grade=A*ok | grade=B*ok | grade=-*ok) ;;
    *) fail=1 ;;
  esac
done
exit "$fail"
