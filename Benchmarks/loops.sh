#!/usr/bin/env bash
# Loops per core (issue #15): uvfetch with --loops 1, 2, ... over many origins, in rounds that
# take turns, against a private nginx on 127.0.0.1 listening on LOOPS_ORIGINS https ports and as
# many plain ones (each port an origin, so a session over N loops spreads them).
#
#   handshakes: every request `Connection: close` over https, nginx with session tickets and its
#               session cache off, so each request pays a full TLS 1.3 handshake (no resumption)
#   keep-alive: plain http GETs on kept-alive connections (requests/s)
#
# Reports, per loop count and round: the rate, the client's CPU (user+sys, /usr/bin/time) per
# request, the two busiest threads' CPU (from /proc, sampled every 0.2 s: the loops), the rate at
# which the busiest would be saturated on a core of its own, and the machine's load average,
# which says how far the rates can be trusted; the CPU per request and the ceiling are the
# measures that a busy machine disturbs least.
#
# Settings (environment): LOOPS_LIST ("1 2"), LOOPS_ROUNDS (3), LOOPS_ORIGINS (16),
# LOOPS_HANDSHAKES (4000 requests per run), LOOPS_REQUESTS (100000 per run), LOOPS_CONCURRENCY
# (32), LOOPS_NGINX_WORKERS (2), LOOPS_SERVER_CPUS / LOOPS_CLIENT_CPUS (taskset lists, e.g. 0 and
# 1; empty: not pinned), LOOPS_SKIP_BUILD=1 (use Apps/.build/release/uvfetch as built).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
loops_list=${LOOPS_LIST:-"1 2"}
rounds=${LOOPS_ROUNDS:-3}
origins=${LOOPS_ORIGINS:-16}
handshakes=${LOOPS_HANDSHAKES:-4000}
requests=${LOOPS_REQUESTS:-100000}
concurrency=${LOOPS_CONCURRENCY:-32}
workers=${LOOPS_NGINX_WORKERS:-2}
server_cpus=${LOOPS_SERVER_CPUS:-}
client_cpus=${LOOPS_CLIENT_CPUS:-}

if [ "${LOOPS_SKIP_BUILD:-0}" != 1 ]; then
  # shellcheck source=release-build.sh
  source "$here/release-build.sh"
  release_build "$root/Apps" loops --product uvfetch
fi
uvfetch="$root/Apps/.build/release/uvfetch"
[ -x "$uvfetch" ] || { echo "loops: $uvfetch not built" >&2; exit 1; }
command -v nginx >/dev/null || { echo "loops: nginx not found" >&2; exit 1; }

dir=$(mktemp -d /tmp/uvloops.XXXXXX)
nginx_pid=
cleanup() {
  [ -n "$nginx_pid" ] && kill -TERM "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A throwaway CA and a server certificate it signed (P-256, IP:127.0.0.1), as uvbench makes.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$dir/ca.key" -out "$dir/ca.pem" \
  -days 2 -subj "/CN=uvloops throwaway CA" 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$dir/server.key" -out "$dir/server.csr" \
  -subj "/CN=localhost" 2>/dev/null
printf 'basicConstraints = critical, CA:FALSE\nkeyUsage = critical, digitalSignature\nextendedKeyUsage = serverAuth\nsubjectAltName = DNS:localhost, IP:127.0.0.1\n' > "$dir/server.ext"
openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -out "$dir/server.pem" \
  -days 2 -extfile "$dir/server.ext" 2>/dev/null

pin() { if [ -n "$1" ]; then echo "taskset -c $1"; fi; }
# Writes nginx.conf for the ports from $base on and starts nginx; fails when a port is taken.
start_nginx() {
  local https_listen="" plain_listen="" i
  for i in $(seq 0 $((origins - 1))); do
    https_listen+="        listen 127.0.0.1:$((base + i)) ssl backlog=1024;"$'\n'
    plain_listen+="        listen 127.0.0.1:$((base + origins + i)) backlog=1024;"$'\n'
  done
  cat > "$dir/nginx.conf" <<EOF
worker_processes $workers;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 8192; }
http {
    access_log off;
    keepalive_requests 1000000;
    keepalive_timeout 60s;
    client_body_temp_path $dir/body;
    server {
$https_listen
        ssl_certificate $dir/server.pem;
        ssl_certificate_key $dir/server.key;
        ssl_protocols TLSv1.3;
        ssl_session_tickets off;
        ssl_session_cache off;
        location / { return 200 "hello world\n"; }
    }
    server {
$plain_listen
        location / { return 200 "hello world\n"; }
    }
}
EOF
  # shellcheck disable=SC2046
  $(pin "$server_cpus") nginx -p "$dir" -c "$dir/nginx.conf" 2>"$dir/nginx.out" &
  nginx_pid=$!
  for _ in $(seq 50); do
    kill -0 "$nginx_pid" 2>/dev/null || { wait "$nginx_pid" 2>/dev/null; nginx_pid=; return 1; }
    curl -s -o /dev/null "http://127.0.0.1:$((base + origins))/" && break
    sleep 0.1
  done
  curl -s --cacert "$dir/ca.pem" -o /dev/null "https://127.0.0.1:$base/"
}
# A random range of ports; another one if something listens there already.
for attempt in 1 2 3 4 5; do
  base=$((20000 + RANDOM % 20000))
  start_nginx && break
  if [ -n "$nginx_pid" ]; then kill -TERM "$nginx_pid" 2>/dev/null; wait "$nginx_pid" 2>/dev/null; nginx_pid=; fi
  if [ "$attempt" = 5 ]; then echo "loops: nginx did not start" >&2; cat "$dir/nginx.out" "$dir/error.log" >&2; exit 1; fi
done

for i in $(seq 0 $((handshakes - 1))); do echo "https://127.0.0.1:$((base + i % origins))/h$i"; done > "$dir/https.txt"
for i in $(seq 0 $((requests - 1))); do echo "http://127.0.0.1:$((base + origins + i % origins))/r"; done > "$dir/plain.txt"

echo "loops: $(nproc) cores, $(uname -r), commit $(git -C "$root" rev-parse --short HEAD), nginx $workers worker(s)" \
  "${server_cpus:+pinned to CPU $server_cpus}, client ${client_cpus:+pinned to CPU $client_cpus}, $origins origins, $concurrency in flight"

# run KIND LOOPS LIST EXTRA...: one uvfetch run; prints "rate cpu_us_per_request load".
run() {
  local kind=$1 loops=$2 list=$3 n
  shift 3
  n=$(wc -l < "$list")
  local load; load=$(cut -d' ' -f1 /proc/loadavg)
  # shellcheck disable=SC2046
  /usr/bin/time -f '%e %U %S %M' -o "$dir/time" $(pin "$client_cpus") "$uvfetch" -q --loops "$loops" \
    --concurrency "$concurrency" --per-host 64 --cacert "$dir/ca.pem" "$@" -i "$list" > "$dir/out" 2>&1 &
  local timer=$! pid=
  for _ in $(seq 100); do pid=$(pgrep -P "$timer" | head -1); [ -n "$pid" ] && break; sleep 0.01; done
  # Each thread's CPU ticks (utime + stime), sampled until the process ends: the busiest threads
  # are the loops (the last sample of each thread counts).
  : > "$dir/threads"
  while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; do
    for stat in /proc/"$pid"/task/*/stat; do
      { read -r line < "$stat"; } 2>/dev/null || continue
      echo "${stat%/stat} ${line##*) }"
    done >> "$dir/threads"
    sleep 0.2
  done
  wait "$timer" || { echo "loops: uvfetch failed ($kind, --loops $loops):" >&2; cat "$dir/out" >&2; exit 1; }
  grep -q " $n succeeded, 0 failed" "$dir/out" || { echo "loops: not every request succeeded:" >&2; cat "$dir/out" >&2; exit 1; }
  read -r elapsed user sys rss < "$dir/time"
  local seconds; seconds=$(grep -o 'requests in [0-9.]* s' "$dir/out" | awk '{print $3}')
  # The two busiest threads' CPU, as a share of the run's wall-clock time (clock ticks of 1/100 s).
  local busiest; busiest=$(awk '{ t[$1] = $13 + $14 } END { for (k in t) print t[k] }' "$dir/threads" | sort -rn | head -2 \
    | awk -v e="$elapsed" '{ printf "%s%.0f%%", (NR > 1 ? "+" : ""), $1 / e }')
  awk -v n="$n" -v s="$seconds" -v u="$user" -v y="$sys" -v l="$load" -v r="$rss" -v b="$busiest" -v e="$elapsed" \
    'BEGIN { split(b, t, "%"); printf "%.0f %.0f %s %d %s %.0f%% %.0f\n", n / s, (u + y) * 1e6 / n, l, r / 1024, b, (u + y) * 100 / e,
             (t[1] > 0 ? (n / s) * 100 / t[1] : 0) }'
}

declare -A results
for round in $(seq 1 "$rounds"); do
  for loops in $loops_list; do
    h=$(run handshakes "$loops" "$dir/https.txt" -H "Connection: close")
    k=$(run keep-alive "$loops" "$dir/plain.txt")
    results["h,$loops"]+="$h;"
    results["k,$loops"]+="$k;"
    describe() { echo "$(cut -d' ' -f1 <<<"$1")/s ($(cut -d' ' -f2 <<<"$1") µs CPU each; process $(cut -d' ' -f6 <<<"$1") of a core, busiest threads $(cut -d' ' -f5 <<<"$1"), busiest-thread ceiling $(cut -d' ' -f7 <<<"$1")/s; load $(cut -d' ' -f3 <<<"$1"))"; }
    echo "round $round, --loops $loops: handshakes $(describe "$h"), keep-alive $(describe "$k")"
  done
done

median() { tr ';' '\n' | grep -v '^$' | cut -d' ' -f"$1" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo
echo "| --loops | full handshakes/s | client CPU per handshake | busiest-thread ceiling, handshakes/s | keep-alive requests/s | client CPU per request | busiest-thread ceiling, requests/s | peak RSS (MiB) |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
for loops in $loops_list; do
  h=${results["h,$loops"]} k=${results["k,$loops"]}
  echo "| $loops | $(median 1 <<<"$h") | $(median 2 <<<"$h") µs | $(median 7 <<<"$h") | $(median 1 <<<"$k") | $(median 2 <<<"$k") µs | $(median 7 <<<"$k") | $(median 4 <<<"$k") |"
done
echo "(medians of $rounds rounds; the busiest-thread ceiling is the rate divided by the busiest thread's share of a core:"
echo " the rate at which that thread, a loop, would be saturated if it had its core to itself)"
