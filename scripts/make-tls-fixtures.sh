#!/usr/bin/env bash
# Regenerates tests/fixtures/tls/: a test-only private CA and a server certificate for
# 127.0.0.1 that the remote-scan tests serve from a TLS mock Hub (tests/remote). Needs only
# the `openssl` command line (1.1.1 or 3.x). The keys are throwaway test keys: never use them,
# or the CA, anywhere else.
#
#   scripts/make-tls-fixtures.sh
#
# What it writes:
#   ca.pem        the CA certificate (P-256, CA:TRUE), the bundle the tests point
#                 REQUESTS_CA_BUNDLE / SSL_CERT_FILE at
#   server.pem    the server certificate (P-256, subjectAltName IP:127.0.0.1, serverAuth),
#                 issued by the CA
#   server.key    its PKCS#8 private key
# Both certificates are valid from 2020-01-01 to 2120-01-01 (backdated, so a machine whose clock
# is behind the day they were made still accepts them). The CA key is not kept.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=tests/fixtures/tls
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"

# `openssl ca` is the one subcommand that sets an arbitrary notBefore on every OpenSSL version.
mkdir "$WORK/db"
: >"$WORK/db/index.txt"
echo 1000 >"$WORK/db/serial"
cat >"$WORK/ca.cnf" <<EOF
[ca]
default_ca = test_ca
[test_ca]
database = $WORK/db/index.txt
serial = $WORK/db/serial
new_certs_dir = $WORK/db
default_md = sha256
policy = any
unique_subject = no
copy_extensions = none
[any]
commonName = supplied
[v3_ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[v3_server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF
DATES=(-startdate 20200101000000Z -enddate 21200101000000Z)

openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$WORK/ca.key"
openssl req -new -key "$WORK/ca.key" -subj "/CN=modelgate test CA (test only)" -out "$WORK/ca.csr"
openssl ca -batch -config "$WORK/ca.cnf" -selfsign -keyfile "$WORK/ca.key" -in "$WORK/ca.csr" \
  -extensions v3_ca "${DATES[@]}" -notext -out "$OUT/ca.pem" 2>/dev/null

openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$OUT/server.key"
openssl req -new -key "$OUT/server.key" -subj "/CN=127.0.0.1" -out "$WORK/server.csr"
openssl ca -batch -config "$WORK/ca.cnf" -cert "$OUT/ca.pem" -keyfile "$WORK/ca.key" \
  -in "$WORK/server.csr" -extensions v3_server "${DATES[@]}" -notext -out "$OUT/server.pem" 2>/dev/null

openssl verify -CAfile "$OUT/ca.pem" "$OUT/server.pem"
