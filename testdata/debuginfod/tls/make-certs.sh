#!/usr/bin/env bash
# Regenerates the TLS fixtures for the HTTPS debuginfod test: a test CA and a
# certificate for 127.0.0.1/localhost signed by it (EC P-256, 100 years).
# Test-only keys; they protect nothing.
set -euo pipefail
cd "$(dirname "$0")"
openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
  -keyout ca.key -out ca.pem -days 36500 -subj "/CN=symfilter test CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
  -keyout server.key -out server.csr -subj "/CN=127.0.0.1"
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem \
  -days 36500 -extfile <(printf '%s\n' \
    "subjectAltName=IP:127.0.0.1,DNS:localhost" \
    "basicConstraints=critical,CA:FALSE" \
    "keyUsage=critical,digitalSignature" \
    "extendedKeyUsage=serverAuth")
# The server key in PKCS#8, which rustls reads.
openssl pkcs8 -topk8 -nocrypt -in server.key -out server.key.pk8 && mv server.key.pk8 server.key
rm -f server.csr ca.srl ca.key
