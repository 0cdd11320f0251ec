#!/usr/bin/env bash
# Package one built modelgate binary as a release archive.
#
#   scripts/package.sh TARGET            # e.g. x86_64-unknown-linux-musl
#
# Layout (the action's installer and the README's install blocks rely on it):
#
#   modelgate-<version>-<target>.tar.gz      (.zip for *-windows-* targets)
#   └── modelgate-<version>-<target>/
#       ├── modelgate                        (modelgate.exe on Windows)
#       ├── README.md
#       ├── LICENSE
#       └── SECURITY.md
#
# Environment (defaults in brackets):
#   MG_BINARY    the binary to package  [$CARGO_TARGET_DIR/<target>/dist/modelgate, else
#                                        $CARGO_TARGET_DIR/dist/modelgate when TARGET is the host]
#   MG_DIST_DIR  where the archive goes [dist]
#   SOURCE_DATE_EPOCH  timestamp of every entry [the last commit's time, else 0], so the same
#                binary always gives the same archive bytes (and the same SHA256SUMS line).
#
# Prints the archive's path on stdout. Needs bash, GNU tar and gzip (zip for Windows targets);
# release.yml runs it on Linux for every target.
set -euo pipefail

if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: scripts/package.sh TARGET" >&2
  exit 2
fi
target=$1
case "$target" in
  *[!A-Za-z0-9_.-]*)
    echo "package.sh: bad target name '$target'" >&2
    exit 2
    ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^version = "\([^"]*\)".*/\1/p' "$root/Cargo.toml" | head -n 1)
[ -n "$version" ] || { echo "package.sh: no version in Cargo.toml" >&2; exit 1; }

exe=
archive_ext=tar.gz
case "$target" in *-windows-*)
  exe=.exe
  archive_ext=zip
  ;;
esac

target_dir=${CARGO_TARGET_DIR:-$root/target}
bin=${MG_BINARY:-}
if [ -z "$bin" ]; then
  bin="$target_dir/$target/dist/modelgate$exe"
  host=$(rustc -vV 2>/dev/null | sed -n 's/^host: //p' || true)
  if [ ! -f "$bin" ] && [ "$target" = "$host" ]; then
    bin="$target_dir/dist/modelgate$exe"
  fi
fi
[ -f "$bin" ] || { echo "package.sh: no binary at $bin (build with cargo build --profile dist --target $target)" >&2; exit 1; }

if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
  SOURCE_DATE_EPOCH=$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)
fi

name="modelgate-$version-$target"
out_dir=${MG_DIST_DIR:-dist}
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)
archive="$out_dir/$name.$archive_ext"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/$name"
cp "$bin" "$stage/$name/modelgate$exe"
chmod 0755 "$stage/$name/modelgate$exe"
for doc in README.md LICENSE SECURITY.md; do
  cp "$root/$doc" "$stage/$name/$doc"
  chmod 0644 "$stage/$name/$doc"
done
chmod 0755 "$stage/$name"
find "$stage/$name" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

rm -f "$archive"
if [ "$archive_ext" = zip ]; then
  # -X: no extra attributes (uid/gid, atime), so only the names, modes, times and bytes count.
  (cd "$stage" && LC_ALL=C find "$name" -print | LC_ALL=C sort | zip -q -X -@ "$archive")
else
  # gzip -n: no name or time in the gzip header.
  (cd "$stage" && LC_ALL=C tar --sort=name --owner=0 --group=0 --numeric-owner \
    --mtime="@$SOURCE_DATE_EPOCH" --format=ustar -cf - "$name") | gzip -9 -n >"$archive"
fi
echo "$archive"
