# Sourced (never run) by the scripts that scan pinned PyPI downloads: real-world.sh,
# transformers-precision.sh, chat-templates.sh, real-code.sh and sevenz-interop.sh. From the repository root, with
# the caller's first argument: sets `bin` (that modelgate binary, made absolute; without one, a
# debug build, unless MG_REQUIRE_BINARY is set, then it is a usage error), `cache` (the download
# cache shared by all of them, ${XDG_CACHE_HOME:-~/.cache}/modelgate-real-world, whose files
# scripts/pinned_pypi.py checks against the pinned SHA-256 before use) and `work` (a scratch
# directory removed on exit). Exit 2 when there is no binary.
if [ -n "${1:-}" ]; then
  bin="$1"
elif [ -n "${MG_REQUIRE_BINARY:-}" ]; then
  echo "usage: $0 path/to/modelgate" >&2
  exit 2
else
  cargo build --quiet --bin modelgate
  bin="${CARGO_TARGET_DIR:-target}/debug/modelgate"
fi
[ -x "$bin" ] || { echo "no modelgate binary at $bin" >&2; exit 2; }
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/modelgate-real-world"
mkdir -p "$cache"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
