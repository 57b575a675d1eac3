#!/usr/bin/env bash
# The media gateway tests and `npm start` (sidecar on) run Debian's Janus; install it when missing.
# Idempotent: a machine that already has /usr/bin/janus returns at once. CI runs as root.
set -euo pipefail
if command -v janus >/dev/null 2>&1; then exit 0; fi
echo "ensure-janus: installing Debian's janus" >&2
apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends janus >&2
