#!/bin/sh
# Playwright starts this instead of Chromium when a test needs the browser inside a network namespace
# (test/support/media-net.ts): it can only pass arguments after the executable, so the namespace comes from
# the environment. `exec` keeps Playwright's pipes and its child process id pointing at Chromium.
set -e
: "${BIMS_CHROMIUM_NETNS:?names the network namespace}"
exec ip netns exec "$BIMS_CHROMIUM_NETNS" /usr/bin/chromium "$@"
