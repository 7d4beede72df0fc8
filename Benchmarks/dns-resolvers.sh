#!/usr/bin/env bash
# The resolvers UVNetworking could use, side by side (issue #15): uv_getaddrinfo on libuv's
# threadpool (4 threads, then UV_THREADPOOL_SIZE=64 and 128) and c-ares with its sockets polled by
# libuv (the library's choice). Each runs in a network and mount namespace of
# its own (root), where resolv.conf names 127.0.0.1 and dnsbench's scripted DNS server listens on
# 127.0.0.1:53, so nothing leaves the machine and every resolver asks the same server:
#   rate      20,000 distinct names (A and AAAA each), 64 in flight: look-ups per second
#   slowfast  64 names answered after 3 s (below glibc's 5 s timeout) asked first, then 20 answered at once
# Settings: DNS_NAMES (default 20000), DNS_IN_FLIGHT (64), DNS_SLOW_DELAY (seconds, 3), DNS_ROUNDS (3).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
names=${DNS_NAMES:-20000}
inflight=${DNS_IN_FLIGHT:-64}
delay=${DNS_SLOW_DELAY:-3}
rounds=${DNS_ROUNDS:-3}

[ "$(id -u)" -eq 0 ] || { echo "dns-resolvers: needs root (unshare -mn)" >&2; exit 1; }
swift build --package-path "$here" -c release --product dnsbench >/dev/null
bin="$(swift build --package-path "$here" -c release --show-bin-path)/dnsbench"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'nameserver 127.0.0.1\n' > "$work/resolv.conf"
printf '127.0.0.1 localhost\n' > "$work/hosts"
# hosts: files dns, nothing else (no mdns, no systemd-resolved).
printf 'hosts: files dns\n' > "$work/nsswitch.conf"

run() {  # env-assignments... -- dnsbench arguments
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  unshare -mn /bin/sh -c 'set -e; ip link set lo up; mount --bind "$1" /etc/resolv.conf; mount --bind "$2" /etc/hosts;
    mount --bind "$3" /etc/nsswitch.conf; shift 3; exec "$@"' sh "$work/resolv.conf" "$work/hosts" "$work/nsswitch.conf" \
    env "${envs[@]}" "$bin" "$@"
}

for round in $(seq "$rounds"); do
  echo "== round $round"
  run UV_THREADPOOL_SIZE=4 -- uv rate "$names" "$inflight"
  run UV_THREADPOOL_SIZE=64 -- uv rate "$names" "$inflight"
  run UV_THREADPOOL_SIZE=128 -- uv rate "$names" "$inflight"
  run X=1 -- cares rate "$names" "$inflight"
done
echo "== slow names in front of fast ones"
run UV_THREADPOOL_SIZE=4 -- uv slowfast 0 0 "$delay"
run UV_THREADPOOL_SIZE=64 -- uv slowfast 0 0 "$delay"
run UV_THREADPOOL_SIZE=128 -- uv slowfast 0 0 "$delay"
run X=1 -- cares slowfast 0 0 "$delay"
