#!/usr/bin/env bash
# The Python distribution (issue 41): the modelgate-cli wheel and sdist, built and tested as a
# user gets them.
#
#   scripts/python-wheel.sh TARGET      # e.g. x86_64-unknown-linux-gnu
#
# 1. `maturin build --profile dist --target TARGET`: the wheel around the dist build. Run with the
#    environment of the `cargo build --profile dist --target TARGET` before it (RUSTFLAGS, CC_*),
#    cargo finds everything fresh and only copies the binary; MG_WHEEL_FRESH=1 makes a compile of
#    modelgate itself an error (.ci/run sets it: the wheel must hold the binary it tested).
# 2. `maturin sdist`, then both checked: `twine check --strict` (metadata, README rendering) and
#    their file lists (the wheel: the binary as a script, the package, py.typed, the licence; the
#    sdist: what builds from source, no tests/fixtures/examples/bench/fuzz).
# 3. A fresh venv, `pip install` of the wheel, then as a user: `modelgate scan
#    examples/risky-model` exits 1, `python -m modelgate --version`, and the Python API tests
#    (python/tests, pytest from PyPI) against examples/ and tests/fixtures/; the README's
#    pre-commit hook (`repo: local`, `language: python`, the wheel); `uvx --from` and `pipx run
#    --spec` with the wheel; with a Python 3.8 from pyenv, the API once more under the oldest
#    supported interpreter.
#
# Environment: PYTHON (the interpreter for the venvs; default python3, >= 3.10 for twine),
# MG_WHEEL_DIR (where the wheel and sdist are written; default target/wheels). Prints the
# wheel's path and size. Needs PyPI (maturin hash-pinned by python/build-requirements.txt,
# twine, pytest, pre-commit, uv and pipx by version).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: scripts/python-wheel.sh TARGET" >&2
  exit 2
fi
target=$1
MATURIN_REQS=python/build-requirements.txt
PYTEST_VERSION=${PYTEST_VERSION:-8.3.5}
TWINE_VERSION=${TWINE_VERSION:-7.0.0}
PRE_COMMIT_VERSION=${PRE_COMMIT_VERSION:-4.3.0}
UV_VERSION=${UV_VERSION:-0.13.9}
PIPX_VERSION=${PIPX_VERSION:-1.18.4}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=${MG_WHEEL_DIR:-target/wheels}
rm -rf "$out"
mkdir -p "$out"

bindir=bin
exe=
case "$target" in *-windows-*) bindir=Scripts exe=.exe ;; esac

t0=$SECONDS
step() { echo "-- $1: $((SECONDS - t0)) s"; t0=$SECONDS; }

# maturin and twine in a venv of their own (not the interop scripts' shared one: twine's
# dependencies must not move theirs).
tools="$work/tools"
"${PYTHON:-python3}" -m venv "$tools"
pip_q() { "$1/$bindir/python" -m pip install -q --disable-pip-version-check "${@:2}"; }
pip_q "$tools" --require-hashes --only-binary :all: -r "$MATURIN_REQS"
pip_q "$tools" "twine==$TWINE_VERSION"

step "tools venv (maturin, twine)"

# 1. The wheel from the dist build. Linux: the binary is static, so it claims the manylinux2014
# baseline (glibc 2.17, as Rust's own minimum) rather than the manylinux_2_5 its lack of glibc
# symbol versions would allow; a musl build is tagged musllinux too, as release.yml does.
compat=()
case "$target" in
  *-linux-gnu) compat=(--compatibility manylinux2014) ;;
  *-linux-musl) compat=(--compatibility manylinux2014 musllinux_1_2) ;;
esac
"$tools/$bindir/maturin" build --locked --profile dist --target "$target" \
  ${compat[@]+"${compat[@]}"} --out "$out" 2>&1 | tee "$work/maturin.log"
step "maturin build"
if [ -n "${MG_WHEEL_FRESH:-}" ]; then
  if grep -E '^ *Compiling modelgate ' "$work/maturin.log"; then
    echo "maturin compiled modelgate again: the wheel would not hold the dist build's binary" >&2
    exit 1
  fi
fi
"$tools/$bindir/maturin" sdist --out "$out"
step "maturin sdist"
wheel=$(ls "$out"/*.whl)
sdist=$(ls "$out"/*.tar.gz)
[ "$(echo "$wheel" | wc -l)" = 1 ] || { echo "expected one wheel in $out: $wheel" >&2; exit 1; }

# 2. Metadata and contents.
"$tools/$bindir/twine" check --strict "$wheel" "$sdist"
dist_bin=
if [ -n "${MG_WHEEL_FRESH:-}" ]; then
  dist_bin="${CARGO_TARGET_DIR:-target}/$target/dist/modelgate$exe"
fi
"$tools/$bindir/python" - "$wheel" "$sdist" "$exe" "$dist_bin" <<'EOF'
import hashlib, re, sys, tarfile, zipfile
wheel, sdist, exe, dist_bin = sys.argv[1:]
names = zipfile.ZipFile(wheel).namelist()
data = [n for n in names if re.fullmatch(r"modelgate_cli-[^/]+\.data/scripts/modelgate" + re.escape(exe), n)]
assert len(data) == 1, names
if dist_bin:
    # The wheel holds the dist build's bytes: the binary .ci/run tested and packed.
    with zipfile.ZipFile(wheel) as z, open(dist_bin, "rb") as f:
        assert hashlib.sha256(z.read(data[0])).digest() == hashlib.sha256(f.read()).digest(), data
    print("the wheel's binary is the dist build's ({})".format(dist_bin))
for need in ["modelgate/__init__.py", "modelgate/__main__.py", "modelgate/_api.py",
             "modelgate/_find.py", "modelgate/py.typed"]:
    assert need in names, (need, names)
assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names
assert not [n for n in names if "/tests/" in n or n.startswith("tests/")], names
members = [m.split("/", 1)[1] for m in tarfile.open(sdist).getnames() if "/" in m]
for need in ["pyproject.toml", "Cargo.toml", "Cargo.lock", "src/main.rs", "src/lib.rs",
             "policies/default.toml", "python/modelgate/__init__.py", "python/modelgate/py.typed",
             "README.md", "LICENSE"]:
    assert need in members, (need, sorted(members))
bad = [m for m in members if re.match(r"(tests|fuzz|examples|bench|python/tests|target)/", m)]
assert not bad, bad
print("wheel: {} files; sdist: {} files; contents as expected".format(len(names), len(members)))
EOF

# The sdist unpacked is a crate cargo resolves against its own Cargo.lock (no compile here: a
# source build is the dist build again; release.yml's sdist is the same command's output).
mkdir "$work/sdist"
tar -xzf "$sdist" -C "$work/sdist"
(cd "$work/sdist"/*/ && cargo metadata --offline --locked --format-version 1 >/dev/null)
echo "sdist: cargo metadata --locked resolves it"
step "twine check, contents, sdist resolve"

# 3. A fresh venv, as a user.
venv="$work/venv"
"${PYTHON:-python3}" -m venv "$venv"
pip_q "$venv" "$wheel"
py="$venv/$bindir/python"
code=0
"$venv/$bindir/modelgate$exe" scan --quiet examples/risky-model >"$work/risky.txt" || code=$?
if [ "$code" != 1 ]; then
  cat "$work/risky.txt" >&2
  echo "modelgate scan examples/risky-model from the wheel exited $code, expected 1" >&2
  exit 1
fi
echo "modelgate scan examples/risky-model (wheel): exit 1 as expected"
"$py" -m modelgate --version
step "fresh venv, pip install of the wheel, scan"
pip_q "$venv" "pytest==$PYTEST_VERSION"
# -p no:cacheprovider: nothing written into the source tree.
"$py" -m pytest -q -p no:cacheprovider python/tests
step "pytest python/tests"

# The README's pre-commit recipe: a `repo: local`, `language: python` hook whose environment is
# the wheel (from PyPI in real use: `modelgate-cli==VERSION`; this build's file here). A staged
# pickle that runs code blocks the commit; a clean safetensors file passes.
pip_q "$tools" "pre-commit==$PRE_COMMIT_VERSION"
hook_files=$(sed -n "s/^  files: '\(.*\)'$/\1/p" .pre-commit-hooks.yaml | head -n 1)
repo="$work/pre-commit-repo"
git init -q "$repo"
cat >"$repo/.pre-commit-config.yaml" <<EOF
repos:
  - repo: local
    hooks:
      - id: modelgate
        name: modelgate
        entry: modelgate scan --quiet --no-git
        language: python
        additional_dependencies: ["$(cd "$(dirname "$wheel")" && pwd)/$(basename "$wheel")"]
        files: '$hook_files'
EOF
cp examples/clean-model/model.safetensors examples/risky-model/pytorch_model.bin "$repo/"
pre_commit() { (cd "$repo" && git add -A && PRE_COMMIT_HOME="$work/pre-commit-home" \
  "$tools/$bindir/pre-commit" run --all-files >"$work/pre-commit.out" 2>&1); }
if pre_commit; then
  cat "$work/pre-commit.out" >&2
  echo "pre-commit (wheel hook) let a pickle that runs os.system through" >&2
  exit 1
fi
grep -q "PKL001" "$work/pre-commit.out" || { cat "$work/pre-commit.out" >&2; exit 1; }
rm "$repo/pytorch_model.bin"
pre_commit || { cat "$work/pre-commit.out" >&2; echo "pre-commit (wheel hook) failed on a clean model" >&2; exit 1; }
echo "pre-commit, repo: local + language: python + the wheel: the pickle blocked, the clean model passed"
step "pre-commit hook"

# The README's runners without an install: uv's `uvx --from` and `pipx run --spec` (the
# distribution's name is not the command's), each with this build's wheel for the PyPI name.
pip_q "$tools" "uv==$UV_VERSION" "pipx==$PIPX_VERSION"
wheel_abs="$(cd "$(dirname "$wheel")" && pwd)/$(basename "$wheel")"
code=0
UV_CACHE_DIR="$work/uv-cache" "$tools/$bindir/uvx" --from "$wheel_abs" modelgate scan --quiet \
  examples/risky-model >"$work/uvx.out" 2>&1 || code=$?
[ "$code" = 1 ] || { cat "$work/uvx.out" >&2; echo "uvx ... scan examples/risky-model exited $code, expected 1" >&2; exit 1; }
PIPX_HOME="$work/pipx" "$tools/$bindir/pipx" run --spec "$wheel_abs" modelgate scan --quiet \
  examples/clean-model >"$work/pipx.out" 2>&1 || { cat "$work/pipx.out" >&2; echo "pipx run ... scan examples/clean-model failed" >&2; exit 1; }
echo "uvx --from <wheel> modelgate scan examples/risky-model: exit 1; pipx run --spec <wheel> modelgate scan examples/clean-model: exit 0"
step "uvx and pipx run"

# The oldest Python the package supports (requires-python >= 3.8), when pyenv has one.
py38="$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")/versions/3.8.18/bin/python3"
for c in "$py38" "$HOME"/.pyenv/versions/3.8.*/bin/python3; do
  if [ -x "$c" ]; then
    "$c" -m venv "$work/venv38"
    pip_q "$work/venv38" "$wheel"
    "$work/venv38/$bindir/python" - <<'EOF'
import sys, modelgate
r = modelgate.scan("examples/risky-model", git=False)
assert r.verdict == "deny" and len(r.denied) == r.summary.denied > 0, r
assert modelgate.check_before_load("examples/clean-model").passed
print("Python {}.{}: the API works (risky-model {}, clean-model pass)".format(*sys.version_info[:2], r.verdict))
EOF
    break
  fi
done

step "Python 3.8"
size=$(wc -c <"$wheel")
echo "wheel: $wheel $size bytes ($((size / 1024)) KiB); sdist: $(wc -c <"$sdist") bytes"
