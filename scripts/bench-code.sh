#!/usr/bin/env bash
# Benchmark modelgate on code-heavy trees against plain hashing of the same files (issue 22:
# "Python and notebooks at <= 2x the hashing time").
#
# Needs cargo, coreutils, findutils, openssl and python3 (only to find the standard library and
# to unpack the wheel; nothing is imported from the scanned trees). pip downloads the training-
# code tree unless BENCH_CODE_TREES names the trees.
#
#   scripts/bench-code.sh [TREE]...
#
# Trees (default: the local Python's standard library, and the `transformers` wheel unpacked):
# each TREE argument is scanned instead. Environment (defaults in brackets):
#   BENCH_DIR     where the downloaded tree goes                         [/tmp/modelgate-bench-code]
#   BENCH_WHEEL   the PyPI project whose wheel is the training-code tree [transformers]
#   BENCH_RUNS    runs per measurement; medians are reported             [5]
#   BENCH_KEEP    1 to keep BENCH_DIR afterwards (it is deleted otherwise) [0]
#   BENCH_BIN     a modelgate binary to measure instead of building one  [target/release/modelgate]
#                 (to compare two builds back to back on a busy machine)
#   BENCH_PYC     .pyc files to time one by one, each alone in a folder with a config.json (so
#                 it is judged as model code) and its source beside it when there is one   []
#
# The standard library tree holds the interpreter's __pycache__: its "code excluded" row is the
# bytecode reader and the .pyc-to-source match on ~15k .pyc files (issue 37 asked for 1.5x
# sha256sum; docs/performance.md, "Compiled Python and the library folder", says where it
# stands). A large real one to pass in BENCH_PYC: sympy's
# polys/benchmarks/__pycache__/bench_solvers.cpython-311.pyc (1.5 MB; sympy==1.13.3).
#
# Every tree is read once (cat > /dev/null) before the timed runs, so all tools are measured on
# a warm page cache: the numbers compare hashing and parsing, not the disk. The hashing tools
# run over exactly the files modelgate reads (find -type f), batched and in parallel
# (xargs -n200 -P$(nproc)); one process per file would measure fork+exec, not hashing.
set -euo pipefail

DIR=${BENCH_DIR:-/tmp/modelgate-bench-code}
WHEEL=${BENCH_WHEEL:-transformers}
RUNS=${BENCH_RUNS:-5}
CORES=$(nproc)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}

if [ -n "${BENCH_BIN:-}" ]; then
  MG=$BENCH_BIN
else
  echo "== building (release)" >&2
  (cd "$ROOT" && cargo build --release --quiet --bin modelgate)
  MG=$TARGET/release/modelgate
fi

mkdir -p "$DIR"
if [ "${BENCH_KEEP:-0}" != 1 ]; then
  trap 'rm -rf "$DIR"' EXIT
fi

TREES=("$@")
if [ ${#TREES[@]} -eq 0 ]; then
  TREES+=("$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')")
  if [ ! -d "$DIR/$WHEEL" ]; then
    echo "== downloading the $WHEEL wheel" >&2
    python3 -m pip download --quiet --no-deps --dest "$DIR/wheel" "$WHEEL"
    python3 -m zipfile -e "$(ls "$DIR"/wheel/*.whl | head -n1)" "$DIR/$WHEEL"
  fi
  TREES+=("$DIR/$WHEEL")
fi

calc() { awk "BEGIN { print $* }"; }

# measure CMD...: runs CMD $RUNS times (stdout discarded; exit 1 = policy denial is fine) and
# sets MED (median wall seconds) and ALL (every run).
measure() {
  local walls=() i t0 t1 rc
  for ((i = 0; i < RUNS; i++)); do
    t0=$(date +%s.%N)
    rc=0; "$@" > /dev/null 2> "$DIR/.err" || rc=$?
    t1=$(date +%s.%N)
    if [ "$rc" -gt 1 ]; then
      echo "failed (exit $rc): $*" >&2; cat "$DIR/.err" >&2; exit 1
    fi
    walls+=("$(calc "$t1 - $t0")")
  done
  MED=$(printf '%s\n' "${walls[@]}" | sort -g | sed -n "$(((RUNS + 1) / 2))p")
  ALL=$(printf '%.2f ' "${walls[@]}")
}

hash_all() { find "$2" -type f -print0 | xargs -0 -r -n200 -P"$CORES" $1; }
export -f hash_all
export CORES

scan() { "$MG" scan --no-git -q --format json -o /dev/null "$@"; }
export -f scan
export MG

row() {
  printf '| %-34s | %8.2f | %6.2fx | %s|\n' "$1" "$MED" "$(calc "$MED / $2")" "$ALL"
}

echo
echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -n1), $CORES cores; $(uname -sr)"
echo "wall = median of $RUNS runs (warm cache); ratio = wall / sha256sum (xargs -P$CORES) on the same files"

for TREE in "${TREES[@]}"; do
  echo "== warming the page cache: $TREE" >&2
  find "$TREE" -type f -print0 | xargs -0 cat > /dev/null
  files=$(find "$TREE" -type f | wc -l)
  bytes=$(find "$TREE" -type f -printf '%s\n' | awk '{s += $1} END {print s}')
  py=$(find "$TREE" -type f \( -name '*.py' -o -name '*.ipynb' \) | wc -l)
  echo
  echo "### $TREE"
  echo
  echo "$files files, $(calc "$bytes / 1e6") MB, $py .py/.ipynb"
  echo
  echo '| command                            | wall (s) | ratio   | runs (s) |'
  echo '|------------------------------------|----------|---------|----------|'
  measure bash -c "hash_all sha256sum '$TREE'"; BASE=$MED; row "sha256sum, xargs -P$CORES" "$BASE"
  measure bash -c "hash_all 'openssl dgst -sha256' '$TREE'"; row "openssl dgst -sha256, xargs -P$CORES" "$BASE"
  measure bash -c "scan '$TREE'"; row "modelgate scan" "$BASE"
  RATIO=$(calc "$MED / $BASE")
  measure bash -c "scan --exclude '**/*.py' --exclude '**/*.ipynb' '$TREE'"; row "modelgate scan, code excluded" "$BASE"
  echo
  echo "modelgate scan / sha256sum = $(printf '%.2f' "$RATIO") (goal <= 2.0). One run with --verbose:"
  echo
  # Exit 1 (denied findings) is expected; only the timings matter here.
  { "$MG" scan --no-git --verbose --format json -o /dev/null "$TREE" 2>&1 >/dev/null || true; } |
    grep -E '^(walk|read stage|provenance|policy|render|files):' | sed 's/^/    /'
done

# Single .pyc files (BENCH_PYC): the time of one scan of each, with its source when it is there.
for PYC in ${BENCH_PYC:-}; do
  ONE=$DIR/pyc-one
  rm -rf "$ONE"; mkdir -p "$ONE/__pycache__"
  cp "$PYC" "$ONE/__pycache__/"
  SRC=$(dirname "$(dirname "$PYC")")/$(basename "$PYC" | cut -d. -f1).py
  [ -f "$SRC" ] && cp -p "$SRC" "$ONE/"
  echo '{}' > "$ONE/config.json"
  measure bash -c "scan --exclude '**/*.py' '$ONE'"
  echo
  echo "$(basename "$PYC") ($(stat -c %s "$PYC") bytes$([ -f "$SRC" ] && echo ", source beside it")): $(printf '%.2f' "$MED") s (runs: $ALL)"
done
