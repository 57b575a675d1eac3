#!/usr/bin/env bash
# The QR payload test (test/http/qr-payload-layout.test.ts) scans the codes BIMS draws with a real reader,
# Debian's zbarimg (package zbar-tools), as docs/qr-code.md tells integrators to; install it when missing.
# Idempotent; CI runs as root.
set -euo pipefail
if command -v zbarimg >/dev/null 2>&1; then exit 0; fi
echo "ensure-zbar: installing Debian's zbar-tools" >&2
apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends zbar-tools >&2
