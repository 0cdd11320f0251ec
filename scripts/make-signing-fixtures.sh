#!/usr/bin/env bash
# Regenerates tests/fixtures/signing/ with the reference OpenSSF Model Signing tool
# (PyPI `model-signing`, sigstore/model-transparency) and Python `cryptography`.
#
#   scripts/make-signing-fixtures.sh            # needs python3 + network (PyPI, GitHub)
#   MS_VENV=/tmp/msvenv scripts/make-signing-fixtures.sh   # reuse a venv with model-signing
#
# What it writes (all small; see tests/fixtures/signing/README.md):
#   model/                 a tiny model tree (never modified by tests; they copy it)
#   keys/                  P-256 and P-384 key pairs, a test PKI (root, intermediate, signing
#                          certificate, an expired signing certificate, an unrelated root)
#   key-p256.sig  key-p384.sig  cert.sig  cert-expired.sig   reference-made signatures of model/
#   keyless/               the reference project's own v1.1.0 keyless test model and bundle
#                          (Apache-2.0, scripts/tests/v1.1.0-sigstore at the pinned commit) and
#                          Sigstore's public-good trusted root shipped in sigstore-python.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=tests/fixtures/signing
MS_VERSION=1.1.1
REF_COMMIT=e3430730bca924e672b2e59f10524a7ffb5adf79

VENV=${MS_VENV:-}
if [ -z "$VENV" ]; then
  VENV=$(mktemp -d)/venv
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "model-signing==$MS_VERSION"
fi
# model-signing 1.1.1 imports OpenSSL (pyOpenSSL) without declaring it.
"$VENV/bin/python" -c 'import OpenSSL' 2>/dev/null || "$VENV/bin/pip" install -q pyopenssl
MS="$VENV/bin/model_signing"

rm -rf "$OUT/model" "$OUT/keys" "$OUT"/*.sig "$OUT/keyless"
mkdir -p "$OUT/model/sub" "$OUT/keys" "$OUT/keyless/model"

# The model: a config, some "weights", a nested file, an empty file, and a git file the
# reference ignores by default.
printf '{"architectures": ["TinyModel"], "hidden_size": 4}\n' > "$OUT/model/config.json"
printf 'WEIGHTS-0123456789abcdef-not-a-real-model\n' > "$OUT/model/weights.bin"
printf 'hello\nworld\n' > "$OUT/model/sub/tokenizer.txt"
: > "$OUT/model/empty.txt"
printf '# fixture: ignored by model signing\n' > "$OUT/model/.gitattributes"

"$VENV/bin/python" - "$OUT/keys" <<'PY'
import datetime as dt, sys, pathlib
from cryptography import x509
from cryptography.x509.oid import NameOID, ExtendedKeyUsageOID
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

out = pathlib.Path(sys.argv[1])
def key(curve, name):
    k = ec.generate_private_key(curve)
    (out / f"{name}.pem").write_bytes(k.private_bytes(serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()))
    (out / f"{name}.pub.pem").write_bytes(k.public_key().public_bytes(serialization.Encoding.PEM,
        serialization.PublicFormat.SubjectPublicKeyInfo))
    return k
def name(cn):
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "modelgate test"),
                      x509.NameAttribute(NameOID.COMMON_NAME, cn)])
def cert(subject_key, subject, issuer_key, issuer, ca, start, end, fname, eku=True):
    b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
         .public_key(subject_key.public_key()).serial_number(x509.random_serial_number())
         .not_valid_before(start).not_valid_after(end)
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if ca:
        b = b.add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
    else:
        b = b.add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True)
        if eku:
            b = b.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=False)
    c = b.sign(issuer_key, hashes.SHA384() if isinstance(issuer_key.curve, ec.SECP384R1) else hashes.SHA256())
    (out / fname).write_bytes(c.public_bytes(serialization.Encoding.PEM))
    return c

key(ec.SECP256R1(), "p256")
key(ec.SECP384R1(), "p384")
key(ec.SECP256R1(), "other")
t0 = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)
t1 = dt.datetime(2045, 1, 1, tzinfo=dt.timezone.utc)
root_k = key(ec.SECP384R1(), "root-ca")
int_k = key(ec.SECP384R1(), "int-ca")
leaf_k = key(ec.SECP256R1(), "signer")
root = cert(root_k, name("root"), root_k, name("root"), True, t0, t1, "root-ca.crt")
cert(int_k, name("intermediate"), root_k, name("root"), True, t0, t1, "int-ca.crt")
cert(leaf_k, name("signer"), int_k, name("intermediate"), False, t0, t1, "signer.crt")
cert(leaf_k, name("expired signer"), int_k, name("intermediate"), False,
     dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc), dt.datetime(2021, 1, 1, tzinfo=dt.timezone.utc),
     "signer-expired.crt")
other_k = key(ec.SECP384R1(), "other-root-ca")
cert(other_k, name("other root"), other_k, name("other root"), True, t0, t1, "other-root-ca.crt")
for f in ["root-ca.pub.pem", "int-ca.pub.pem", "other-root-ca.pub.pem", "signer.pub.pem",
          "other-root-ca.pem"]:
    (out / f).unlink()
PY
# The CA private keys are not needed by any test.
rm -f "$OUT/keys/root-ca.pem" "$OUT/keys/int-ca.pem"

"$MS" sign key "$OUT/model" --private_key "$OUT/keys/p256.pem" --signature "$OUT/key-p256.sig"
"$MS" sign key "$OUT/model" --private_key "$OUT/keys/p384.pem" --signature "$OUT/key-p384.sig"
"$MS" sign certificate "$OUT/model" --private_key "$OUT/keys/signer.pem" \
  --signing_certificate "$OUT/keys/signer.crt" --certificate_chain "$OUT/keys/int-ca.crt" \
  --signature "$OUT/cert.sig"
"$MS" sign certificate "$OUT/model" --private_key "$OUT/keys/signer.pem" \
  --signing_certificate "$OUT/keys/signer-expired.crt" --certificate_chain "$OUT/keys/int-ca.crt" \
  --signature "$OUT/cert-expired.sig"
"$MS" sign key "$OUT/model" --private_key "$OUT/keys/p256.pem" --signature "$OUT/key-p256-shards.sig" 2>/dev/null || true
rm -f "$OUT/key-p256-shards.sig"
# Sharded signature via the library API (the CLI has no sharding option).
"$VENV/bin/python" - "$OUT" <<'PY'
import sys, model_signing
out = sys.argv[1]
(model_signing.signing.Config()
 .use_elliptic_key_signer(private_key=f"{out}/keys/p256.pem")
 .set_hashing_config(model_signing.hashing.Config().use_shard_serialization(shard_size=16))
 .sign(f"{out}/model", f"{out}/key-p256-shards.sig"))
PY

# Keyless: the reference project's own test data, verified upstream with
# --identity stefanb@us.ibm.com --identity_provider https://sigstore.verify.ibm.com/oauth2.
# MT_GIT_DIR: a local clone (git dir) of sigstore/model-transparency to copy from instead.
fetch_ref() {
  if [ -n "${MT_GIT_DIR:-}" ]; then
    git --git-dir "$MT_GIT_DIR" show "$REF_COMMIT:$1" > "$2"
  else
    curl -fsSL "https://raw.githubusercontent.com/sigstore/model-transparency/$REF_COMMIT/$1" -o "$2"
  fi
}
for f in signme-1 signme-2; do fetch_ref "scripts/tests/v1.1.0-sigstore/$f" "$OUT/keyless/model/$f"; done
fetch_ref scripts/tests/v1.1.0-sigstore/model.sig "$OUT/keyless/model.sig"
fetch_ref LICENSE "$OUT/keyless/LICENSE"
root=$("$VENV/bin/python" -c 'import sigstore, pathlib; print(next(pathlib.Path(sigstore.__file__).parent.glob("_store/*tuf-repo-cdn.sigstore.dev/trusted_root.json")))')
cp "$root" "$OUT/keyless/trusted_root.json"

# The reference must accept its own fixtures.
"$MS" verify key "$OUT/model" --public_key "$OUT/keys/p256.pub.pem" --signature "$OUT/key-p256.sig"
"$MS" verify certificate "$OUT/model" --certificate_chain "$OUT/keys/root-ca.crt" --signature "$OUT/cert.sig"
echo "fixtures written to $OUT"
