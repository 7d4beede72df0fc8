#!/usr/bin/env bash
# The fleet of docs/fleet.md on one machine (issue #18): a database host, a web host and three
# worker hosts, each a network namespace joined by veth to one bridge (TEST-NET-1 addresses that
# lead nowhere else). PostgreSQL on the database host, nginx on the web host (a 8-byte body).
# Per round: the same N URLs fetched by plain `uvfetch --jsonl` on one worker host, then pushed
# to a fresh queue and drained by 1 and by 3 `uvfetch worker`s at once; URLs/s of each, and the
# database round trips per URL the workers counted. Needs root, ip, PostgreSQL and nginx
# (scripts/install-deps.sh) and a release uvfetch (built when missing).
#
# Settings (environment): FLEET_URLS (default 20000), BENCH_ROUNDS (default 3), UVFETCH (the
# binary, default Apps/.build/release/uvfetch), FLEET_BATCH (default 100), FLEET_CONCURRENCY (per
# worker, default 64), FLEET_POLL (the workers' --poll, default theirs: 1 s).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
urls=${FLEET_URLS:-20000}
rounds=${BENCH_ROUNDS:-3}
batch=${FLEET_BATCH:-100}
concurrency=${FLEET_CONCURRENCY:-64}
poll=${FLEET_POLL:-1}
uvfetch=${UVFETCH:-$repo/Apps/.build/release/uvfetch}
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)

[ "$(id -u)" = 0 ] || { echo "fleet.sh: needs root (network namespaces)" >&2; exit 1; }
[ -x "$uvfetch" ] || swift build --package-path "$repo/Apps" -c release --product uvfetch >/dev/null

id=$$
ns() { echo "uvb-$1-$id"; }
work=$(mktemp -d /tmp/uvfetch-fleet-bench-XXXXXX)
chown postgres "$work"
pg_pid=""; web_pid=""
cleanup() {
  [ -n "$web_pid" ] && kill -9 "$web_pid" 2>/dev/null
  [ -n "$pg_pid" ] && runuser -u postgres -- "$pgbin/pg_ctl" stop -m immediate -D "$work/data" >/dev/null 2>&1
  for host in hub db web w1 w2 w3; do ip netns delete "$(ns $host)" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# The hosts: a bridge in the hub, each host's eth0 a veth into it.
ip netns add "$(ns hub)"
ip -n "$(ns hub)" -batch - <<<$'link set lo up\nlink add br0 type bridge\nlink set br0 up'
address() { case $1 in db) echo 192.0.2.10;; web) echo 192.0.2.20;; w*) echo "192.0.2.10${1#w}";; esac; }
for host in db web w1 w2 w3; do
  ip netns add "$(ns $host)"
  ip -n "$(ns $host)" link add eth0 type veth peer name "p-$host" netns "$(ns hub)"
  ip -n "$(ns hub)" -batch - <<<"link set p-$host master br0"$'\n'"link set p-$host up"
  ip -n "$(ns $host)" -batch - <<<$'link set lo up\n'"addr add $(address $host)/24 dev eth0"$'\nlink set eth0 up'
done
on() { local host=$1; shift; ip netns exec "$(ns $host)" "$@"; }

# PostgreSQL on the database host, as the queue's tests run it: no durability.
runuser -u postgres -- "$pgbin/initdb" -D "$work/data" -A trust -U postgres -E UTF8 --locale=C --no-sync >/dev/null
echo "host all all 192.0.2.0/24 trust" >>"$work/data/pg_hba.conf"
on db runuser -u postgres -- "$pgbin/postgres" -D "$work/data" -p 5432 -c listen_addresses=192.0.2.10 -k "$work" \
  -c fsync=off -c synchronous_commit=off -c full_page_writes=off >"$work/pg.log" 2>&1 &
pg_pid=$!
psql_() { "$pgbin/psql" -X -q -A -t -h "$work" -p 5432 -U postgres "$@"; }
for _ in $(seq 100); do psql_ -d postgres -c 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.2; done

# nginx on the web host.
mkdir -p "$work/web"
cat >"$work/web/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $work/web/nginx.pid;
error_log $work/web/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 1000000;
    server { listen 192.0.2.20:8080; location /u/ { return 200 "fetched\n"; } }
}
CONF
# Not through `on`: a function in the background is a subshell, whose pid is not nginx's.
ip netns exec "$(ns web)" /usr/sbin/nginx -p "$work/web/" -c "$work/web/nginx.conf" &
web_pid=$!
for _ in $(seq 100); do on w1 curl -s -o /dev/null http://192.0.2.20:8080/u/probe && break; sleep 0.1; done

seq 0 $((urls - 1)) | sed 's|^|http://192.0.2.20:8080/u/|' >"$work/urls.txt"
now() { date +%s.%N; }
rate() { awk -v n="$urls" -v s="$1" -v e="$2" 'BEGIN { printf "%.0f", n / (e - s) }'; }

# One queue drained by $1 workers; prints "URLs/s round-trips-per-URL".
drain() {
  local workers=$1 db="queue_$2_$1"
  psql_ -d postgres -c "CREATE DATABASE $db" >/dev/null
  local url="postgres://postgres@192.0.2.10:5432/$db?sslmode=disable"
  on w1 "$uvfetch" queue init --db "$url" >/dev/null
  on w1 "$uvfetch" queue push --db "$url" -i "$work/urls.txt" >/dev/null
  local start end pids=()
  start=$(now)
  for n in $(seq "$workers"); do
    on "w$n" "$uvfetch" worker --db "$url" -q --batch-size "$batch" --concurrency "$concurrency" --poll "$poll" 2>"$work/w$n.err" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || { echo "fleet.sh: a worker failed" >&2; cat "$work"/w*.err >&2; exit 1; }; done
  end=$(now)
  local done_count trips
  done_count=$(psql_ -d "$db" -c "SELECT count(*) FROM uvfetch_results")
  [ "$done_count" = "$urls" ] || { echo "fleet.sh: $done_count results for $urls URLs" >&2; exit 1; }
  trips=$(cat "$work"/w*.err | sed -n 's/^db round trips: \([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s }')
  rm -f "$work"/w*.err
  echo "$(rate "$start" "$end") $(awk -v t="$trips" -v n="$urls" 'BEGIN { printf "%.4f", t / n }')"
}

echo "| round | uvfetch --jsonl, URLs/s | 1 worker, URLs/s | 3 workers, URLs/s | round trips per URL (1 / 3 workers) |"
echo "| --- | --- | --- | --- | --- |"
for round in $(seq "$rounds"); do
  start=$(now)
  on w1 "$uvfetch" -q --concurrency "$concurrency" --jsonl /dev/null -i "$work/urls.txt" >/dev/null
  plain=$(rate "$start" "$(now)")
  read -r one one_trips < <(drain 1 "$round")
  read -r three three_trips < <(drain 3 "$round")
  echo "| $round | $plain | $one | $three | $one_trips / $three_trips |"
done
