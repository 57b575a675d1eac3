#!/usr/bin/env bash
# The sidecar decodes the media of capture sessions (RTP that Janus forwards on loopback) with Debian's ffmpeg,
# and the capture test makes its fake-camera clip with it; install it when missing. Idempotent; CI runs as root.
set -euo pipefail
if command -v ffmpeg >/dev/null 2>&1; then exit 0; fi
echo "ensure-ffmpeg: installing Debian's ffmpeg" >&2
apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ffmpeg >&2
