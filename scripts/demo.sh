#!/usr/bin/env bash
# The demo: no internet needed. Starts nginx on a loopback port with a throw-away configuration,
# fetches from it with uvfetch, prints what happened, and stops nginx.
set -euo pipefail
uvfetch=${1:?usage: demo.sh path/to/uvfetch}
dir=$(mktemp -d)
chmod 755 "$dir"  # nginx workers run as an unprivileged user
trap 'kill "$(cat "$dir/nginx.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$dir"' EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$dir/www"
printf 'hello world\n' > "$dir/www/hello"
head -c 1048576 /dev/urandom > "$dir/www/large"
cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
daemon on;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $dir/tmp;
    proxy_temp_path $dir/tmp;
    fastcgi_temp_path $dir/tmp;
    uwsgi_temp_path $dir/tmp;
    scgi_temp_path $dir/tmp;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$port;
        root $dir/www;
        location = /status/404 { return 404 "not here\n"; }
    }
}
CONF
nginx -c "$dir/nginx.conf" -p "$dir"
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done

base=http://127.0.0.1:$port
echo "== uvfetch: three URLs, one of them a 404 =="
"$uvfetch" "$base/hello" "$base/large" "$base/status/404" || echo "(uvfetch exited $? because one URL failed, as it should)"
echo
echo "== uvfetch: 100,000 small GETs, 64 in flight, 64 connections =="
"$uvfetch" --quiet --concurrency 64 --per-host 64 --repeat 100000 "$base/hello"
