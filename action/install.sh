#!/usr/bin/env bash
# The action's installer: download the release archive for this runner, check its SHA-256 against
# the table committed next to this script (action/checksums.txt), and only then unpack it. Never
# trusts a checksum fetched from the same place as the archive: whoever can replace the archive on
# the server (or in between) could replace a SHA256SUMS file there too.
#
# Decides, writes to $GITHUB_OUTPUT, and exits 0:
#   method=binary  binary=<path>   a verified release binary is installed
#   method=source                  no release for this version/platform (or version "source"):
#                                  the action's cached `cargo install` build takes over
# Fails (exit 2, one ::error line) on a digest mismatch, a download error, or a bad version input.
#
# Environment:
#   MG_VERSION       "" (this action's own version), X.Y.Z or vX.Y.Z, or "source"
#   MG_DIR           a private temporary directory (the setup step's)
#   RUNNER_OS, RUNNER_ARCH, GITHUB_OUTPUT   set by the runner
#   MODELGATE_RELEASE_URL     base URL of the releases (a mirror; tests use a loopback server)
#                             [https://github.com/modelgate/modelgate/releases/download]
#   MODELGATE_CHECKSUMS_FILE  a checksum table on the runner (tests; mirrors of your own builds)
#                             [action/checksums.txt next to this script]
#   MODELGATE_DOWNLOAD_RETRIES  curl retries on transient errors [3]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
action_root=$(cd "$here/.." && pwd)

esc() { local s="${1//%/%25}"; s="${s//$'\r'/%0D}"; printf '%s' "${s//$'\n'/%0A}"; }
fail() {
  echo "::error title=modelgate install::$(esc "$1")"
  exit 2
}
out() { echo "$1" >>"$GITHUB_OUTPUT"; }
use_source() {
  echo "modelgate: $1; building from source instead"
  out "method=source"
  exit 0
}

version=${MG_VERSION:-}
if [ -z "$version" ]; then
  version=$(sed -n 's/^version = "\([^"]*\)".*/\1/p' "$action_root/Cargo.toml" | head -n 1)
fi
version=${version#v}
if [ "$version" = source ]; then
  use_source "version: source"
fi
# A version becomes part of a URL and a file name: digits, dots and a plain pre-release tag only.
if ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$ ]]; then
  fail "input version must be X.Y.Z, vX.Y.Z or source, got '$version'"
fi

case "${RUNNER_OS:-}/${RUNNER_ARCH:-}" in
  Linux/X64) target=x86_64-unknown-linux-musl ;;
  Linux/ARM64) target=aarch64-unknown-linux-musl ;;
  macOS/X64) target=x86_64-apple-darwin ;;
  macOS/ARM64) target=aarch64-apple-darwin ;;
  Windows/X64) target=x86_64-pc-windows-msvc ;;
  *) use_source "no release binary for ${RUNNER_OS:-?}/${RUNNER_ARCH:-?}" ;;
esac
exe=
ext=tar.gz
case "$target" in *-windows-*)
  exe=.exe
  ext=zip
  ;;
esac
name="modelgate-$version-$target"
file="$name.$ext"

table=${MODELGATE_CHECKSUMS_FILE:-$here/checksums.txt}
[ -f "$table" ] || fail "checksum table $table is missing"
# Lines are `<64 hex>  <file name>` (sha256sum's format, as in a release's SHA256SUMS).
want=$(awk -v f="$file" '$2 == f || $2 == "*" f { print $1; exit }' "$table" | tr 'A-F' 'a-f')
if [ -z "$want" ]; then
  use_source "no checksum for $file in the action's table (no release of $version for $target)"
fi
[[ "$want" =~ ^[0-9a-f]{64}$ ]] || fail "malformed checksum for $file in $table"

base=${MODELGATE_RELEASE_URL:-https://github.com/modelgate/modelgate/releases/download}
base=${base%/}
# Plain http only to this machine (tests, a local mirror): the digest protects the bytes either
# way, but a network attacker should not even see which version a runner fetches.
case "$base" in
  https://*) proto='=https' ;;
  http://127.0.0.1:* | http://127.0.0.1/* | http://localhost:* | http://localhost/*) proto='=http' ;;
  *) fail "MODELGATE_RELEASE_URL must be an https:// URL, got '$base'" ;;
esac
url="$base/v$version/$file"

command -v curl >/dev/null 2>&1 || fail "curl is required to download modelgate"
work=$(mktemp -d "${MG_DIR:-${RUNNER_TEMP:-/tmp}}/download.XXXXXX")
archive="$work/$file"
echo "modelgate: downloading $url"
if ! curl --fail --silent --show-error --location --proto "$proto" --proto-redir "$proto" \
  --retry "${MODELGATE_DOWNLOAD_RETRIES:-3}" --connect-timeout 20 --max-time 600 \
  --max-filesize 268435456 --output "$archive" "$url" 2>"$work/curl.err"; then
  fail "download of $url failed: $(tr '\n' ' ' <"$work/curl.err")"
fi

if command -v sha256sum >/dev/null 2>&1; then
  got=$(sha256sum "$archive" | cut -d ' ' -f 1)
elif command -v shasum >/dev/null 2>&1; then
  got=$(shasum -a 256 "$archive" | cut -d ' ' -f 1)
else
  got=$(openssl dgst -sha256 -r "$archive" | cut -d ' ' -f 1)
fi
if [ "$got" != "$want" ]; then
  rm -f "$archive"
  fail "SHA-256 mismatch for $file: expected $want (action/checksums.txt), got $got; the download was discarded and nothing was run"
fi
echo "modelgate: $file verified (sha256 $got)"

# Unpacked only after the digest matched: the archive is exactly the one the table names.
unpack="$work/unpack"
mkdir "$unpack"
if [ "$ext" = zip ]; then
  if command -v unzip >/dev/null 2>&1; then
    unzip -q "$archive" -d "$unpack"
  elif command -v 7z >/dev/null 2>&1; then
    7z x -bd -y "-o$unpack" "$archive" >/dev/null
  else
    pwsh -NoProfile -Command 'Expand-Archive -LiteralPath $args[0] -DestinationPath $args[1]' "$archive" "$unpack"
  fi
else
  tar -xzf "$archive" -C "$unpack"
fi
bin_dir="$work/bin"
mkdir "$bin_dir"
[ -f "$unpack/$name/modelgate$exe" ] || fail "$file does not hold $name/modelgate$exe"
mv "$unpack/$name/modelgate$exe" "$bin_dir/modelgate$exe"
chmod +x "$bin_dir/modelgate$exe"
reported=$("$bin_dir/modelgate$exe" --version | tr -d '\r')
[ "$reported" = "modelgate $version" ] || fail "$file reports '$reported', expected 'modelgate $version'"
echo "modelgate: installed $reported ($target) at $bin_dir/modelgate$exe"
out "method=binary"
out "binary=$bin_dir/modelgate$exe"
