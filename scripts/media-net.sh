#!/usr/bin/env bash
# A host-local network for the real WebRTC test: a veth pair whose one end stays in this host's network
# namespace (where Janus and our API run) and whose other end is alone in a fresh namespace (where the test's
# Chromium runs). A veth pair is a virtual cable inside the kernel with no uplink, and neither side gets a
# route beyond its /30, so the media cannot leave the host. Why not loopback itself: Janus never gathers ICE
# candidates on an IFF_LOOPBACK interface (ice_enforce_list naming `lo` is ignored). Why not a `dummy` link
# with Chromium in this namespace: Chromium would also gather on eth0 and may pick that pair; and some kernels
# (e.g. Firecracker guests) ship without the dummy driver, while veth and network namespaces are everywhere.
#
#   scripts/media-net.sh up OWNER_PID    prints NETNS=, HOST_IF=, HOST_ADDR=, PEER_IF=, PEER_ADDR= lines
#   scripts/media-net.sh down OWNER_PID  removes that owner's network (nothing to do is fine)
#   scripts/media-net.sh ensure          as root, installs iproute2 if missing (npm test runs it up front)
#
# Idempotent: `up` for an owner that already has a network prints it again. Names carry the owner's process
# id (zero-padded, so no name is a prefix of another: Janus's enforce list matches by prefix), networks whose
# owner has died are removed by the next `up`, and a lock serialises the choice of a free /30 in 10.213.0.0/16.
# Needs root (CAP_NET_ADMIN) and iproute2, which it installs with apt-get when missing. Exit status 3: not
# possible here (the reason is on stderr); the caller then decides whether to fall back.
set -euo pipefail

die() { echo "media-net: $*" >&2; exit 3; }

cmd=${1:-}
owner=${2:-}
if [[ $cmd == ensure ]]; then
  # Not root: nothing to install; the test will run over the host's addresses and say so.
  [[ $(id -u) == 0 ]] || exit 0
else
  [[ $cmd == up || $cmd == down ]] && [[ $owner =~ ^[0-9]{1,7}$ ]] || { echo "usage: $0 up|down OWNER_PID | ensure" >&2; exit 2; }
  [[ $(id -u) == 0 ]] || die "not root: creating network namespaces and veth links needs CAP_NET_ADMIN"
fi

if ! command -v ip >/dev/null 2>&1; then
  echo "media-net: installing iproute2" >&2
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends iproute2; } >&2 \
    || die "iproute2 is missing and apt-get could not install it"
fi
[[ $cmd == ensure ]] && exit 0

names() { # owner pid -> netns, host-side link, namespace-side link
  local id; id=$(printf '%07d' "$((10#$1))")
  echo "bimsmedia$id bimsh$id bimsp$id"
}

remove() {
  local ns host peer
  read -r ns host peer < <(names "$1")
  # Deleting the host end deletes the pair; the namespace goes with its name once no process is left in it.
  ip link del "$host" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
}

if [[ $cmd == down ]]; then remove "$owner"; exit 0; fi

read -r ns host peer < <(names "$owner")
exec 9>/run/bims-media-net.lock
flock 9

# Leftovers of test runs that were killed before their teardown.
for stale in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^bimsmedia[0-9]{7}$' || true); do
  pid=$((10#${stale#bimsmedia}))
  [[ $pid == "$((10#$owner))" ]] || kill -0 "$pid" 2>/dev/null || remove "$pid"
done

print() { printf 'NETNS=%s\nHOST_IF=%s\nHOST_ADDR=%s\nPEER_IF=%s\nPEER_ADDR=%s\n' "$ns" "$host" "$1" "$peer" "$2"; }

# Already up for this owner: say so again.
if existing=$(ip -4 -o addr show dev "$host" 2>/dev/null | awk '{print $4}' | cut -d/ -f1) && [[ -n $existing ]]; then
  a=${existing%.*}; b=${existing##*.}
  print "$existing" "$a.$((b + 1))"
  exit 0
fi
remove "$owner"

# The first /30 in 10.213.0.0/16 that no interface of this namespace uses.
used=$(ip -4 -o addr show | awk '{print $4}' | cut -d/ -f1)
hostAddr=
for ((n = 0; n < 16384; n++)); do
  candidate="10.213.$((n / 64)).$((n % 64 * 4 + 1))"
  grep -qxF "$candidate" <<<"$used" || { hostAddr=$candidate; break; }
done
[[ -n $hostAddr ]] || die "no free /30 left in 10.213.0.0/16"
peerAddr="${hostAddr%.*}.$((${hostAddr##*.} + 1))"

fail() { remove "$owner"; die "$1"; }
ip netns add "$ns" 2>/dev/null || fail "cannot create a network namespace (no CAP_NET_ADMIN in this container?)"
ip link add "$host" type veth peer name "$peer" netns "$ns" 2>/dev/null || fail "cannot create a veth pair"
# IPv4 only (Janus runs with ipv6 = false): no IPv6 link-local addresses for either browser or Janus to gather.
sysctl -qw "net.ipv6.conf.$host.disable_ipv6=1" 2>/dev/null || true
ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$peer.disable_ipv6=1" 2>/dev/null || true
ip addr add "$hostAddr/30" dev "$host"
ip link set "$host" up
ip -n "$ns" addr add "$peerAddr/30" dev "$peer"
ip -n "$ns" link set "$peer" up
ip -n "$ns" link set lo up
print "$hostAddr" "$peerAddr"
