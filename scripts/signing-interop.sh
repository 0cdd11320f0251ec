#!/usr/bin/env bash
# Interoperability with the reference OpenSSF Model Signing tool (PyPI `model-signing`):
#   modelgate sign  -> model_signing verify   (key P-256, key P-384, certificate, shards)
#   model_signing sign -> modelgate verify    (key, certificate)
# Installs the reference into a temporary venv (or MODELGATE_VENV, the venv .ci/run shares between
# the interop scripts; or uses MS_VENV as it is), builds modelgate (or MODELGATE).
# Needs python3 and PyPI; .ci/run calls it when python3 is available (SKIP_INTEROP=1 skips).
set -euo pipefail
cd "$(dirname "$0")/.."
MS_VERSION=${MS_VERSION:-1.1.1}
FX=tests/fixtures/signing
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

VENV=${MS_VENV:-}
if [ -z "$VENV" ] && [ -n "${MODELGATE_VENV:-}" ]; then
  # The venv .ci/run shares between the interop scripts: add the reference to it.
  VENV=$MODELGATE_VENV
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "model-signing==$MS_VERSION"
elif [ -z "$VENV" ]; then
  VENV="$WORK/venv"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "model-signing==$MS_VERSION"
fi
"$VENV/bin/python" -c 'import OpenSSL' 2>/dev/null || "$VENV/bin/pip" install -q pyopenssl
MS="$VENV/bin/model_signing"
if [ -z "${MODELGATE:-}" ]; then
  cargo build --quiet --bin modelgate
  MODELGATE="${CARGO_TARGET_DIR:-target}/debug/modelgate"
fi

pass=0
check() { # description, command...
  local what=$1; shift
  if "$@" >"$WORK/out" 2>&1; then
    echo "ok    $what"; pass=$((pass + 1))
  else
    echo "FAIL  $what"; cat "$WORK/out"; exit 1
  fi
}
refuse() { # description, command... (must fail)
  local what=$1; shift
  if "$@" >"$WORK/out" 2>&1; then
    echo "FAIL  $what (accepted)"; cat "$WORK/out"; exit 1
  else
    echo "ok    $what"; pass=$((pass + 1))
  fi
}

fresh() { rm -rf "$WORK/m"; cp -r "$FX/model" "$WORK/m"; }

# modelgate -> reference
fresh
check "modelgate sign key P-256 (signature inside the tree) -> reference verify key" \
  bash -c "'$MODELGATE' sign '$WORK/m' --key '$FX/keys/p256.pem' && '$MS' verify key '$WORK/m' --public_key '$FX/keys/p256.pub.pem' --signature '$WORK/m/model.sig'"
fresh
check "modelgate sign key P-384 -> reference verify key" \
  bash -c "'$MODELGATE' sign '$WORK/m' --key '$FX/keys/p384.pem' -o '$WORK/p384.sig' && '$MS' verify key '$WORK/m' --public_key '$FX/keys/p384.pub.pem' --signature '$WORK/p384.sig'"
check "modelgate sign certificate -> reference verify certificate" \
  bash -c "'$MODELGATE' sign '$WORK/m' --key '$FX/keys/signer.pem' --certificate-chain '$FX/keys/signer.crt' --certificate-chain '$FX/keys/int-ca.crt' -o '$WORK/cert.sig' && '$MS' verify certificate '$WORK/m' --certificate_chain '$FX/keys/root-ca.crt' --signature '$WORK/cert.sig'"
# The reference CLI always verifies with file serialization; its library API reads the
# serialization from the signature, so shards are checked through the API.
ref_verify_api() { # model, signature, public key
  "$VENV/bin/python" -c 'import sys, model_signing
model_signing.verifying.Config().use_elliptic_key_verifier(public_key=sys.argv[3]).verify(sys.argv[1], sys.argv[2])' "$@"
}
check "modelgate sign --shard-size 16 -> reference verify (library API)" \
  bash -c "'$MODELGATE' sign '$WORK/m' --key '$FX/keys/p256.pem' --shard-size 16 -o '$WORK/shards.sig'" 
check "  ... verified by the reference" ref_verify_api "$WORK/m" "$WORK/shards.sig" "$FX/keys/p256.pub.pem"
printf 'x' >> "$WORK/m/weights.bin"
refuse "reference rejects a tampered tree signed by modelgate" \
  ref_verify_api "$WORK/m" "$WORK/shards.sig" "$FX/keys/p256.pub.pem"

# reference -> modelgate
fresh
check "reference sign key -> modelgate verify --key" \
  bash -c "'$MS' sign key '$WORK/m' --private_key '$FX/keys/p384.pem' --signature '$WORK/m/model.sig' && '$MODELGATE' verify '$WORK/m' --signature '$WORK/m/model.sig' --key '$FX/keys/p384.pub.pem'"
check "reference sign certificate -> modelgate verify --certificate-chain" \
  bash -c "'$MS' sign certificate '$WORK/m' --private_key '$FX/keys/signer.pem' --signing_certificate '$FX/keys/signer.crt' --certificate_chain '$FX/keys/int-ca.crt' --signature '$WORK/rc.sig' && '$MODELGATE' verify '$WORK/m' --signature '$WORK/rc.sig' --certificate-chain '$FX/keys/root-ca.crt'"
rm "$WORK/m/empty.txt"
refuse "modelgate rejects a tree missing a file the reference signed" \
  "$MODELGATE" verify "$WORK/m" --signature "$WORK/rc.sig" --certificate-chain "$FX/keys/root-ca.crt"
echo "signing interop: $pass checks passed (model-signing $("$VENV/bin/pip" show model-signing | sed -n 's/^Version: //p'))"
