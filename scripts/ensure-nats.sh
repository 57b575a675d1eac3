#!/usr/bin/env bash
# The matcher cluster tests (test/cluster/) start their own NATS servers (Debian's nats-server, on free ports:
# the machine may run one of its own on 4222, which they leave alone); install it when missing. Prints the
# server's path on stdout. Idempotent; CI runs as root.
set -euo pipefail
find_server() { command -v nats-server 2>/dev/null || { [ -x /usr/sbin/nats-server ] && echo /usr/sbin/nats-server; }; }
if server=$(find_server); then echo "$server"; exit 0; fi
echo "ensure-nats: installing Debian's nats-server" >&2
apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nats-server >&2
find_server
