#!/usr/bin/env bash
# Browser tests drive Debian's Chromium with playwright-core; install it when missing (CI runs as root).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
echo "ensure-chromium: installing Debian's chromium" >&2
apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
