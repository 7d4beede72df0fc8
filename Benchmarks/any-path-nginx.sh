# Sourced by the uvfetch --jsonl scripts (Benchmarks/uvfetch-jsonl.sh, jsonl-gate.sh): `any_path_nginx_start DIR` starts a private nginx (one
# worker, no access log, keep-alive connections never closed for their number of requests) on a
# free 127.0.0.1 port that answers every path with 200 and `hello world\n`, so a list of any
# length needs no files; it sets `nginx_base` (http://127.0.0.1:PORT) and `nginx_pid`.
# `any_path_nginx_stop` stops it; a watchdog stops it too if the sourcing script dies.
any_path_nginx_start() {
  local dir=$1 port
  [ -x /usr/sbin/nginx ] || { echo "nginx is missing (make deps installs nginx-light)" >&2; return 1; }
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  nginx_base="http://127.0.0.1:$port"
  mkdir -p "$dir/tmp"
  cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $dir/tmp;
    proxy_temp_path $dir/tmp;
    fastcgi_temp_path $dir/tmp;
    uwsgi_temp_path $dir/tmp;
    scgi_temp_path $dir/tmp;
    keepalive_requests 100000000;
    keepalive_timeout 60s;
    server {
        listen 127.0.0.1:$port backlog=4096;
        location / { default_type text/plain; return 200 "hello world\n"; }
    }
}
CONF
  /usr/sbin/nginx -c "$dir/nginx.conf" -p "$dir" > "$dir/nginx.out" 2>&1 &
  nginx_pid=$!
  # Its output goes nowhere, so that it holds no pipe of whoever reads ours.
  ( while kill -0 $$ 2>/dev/null; do sleep 2; done; kill -TERM "$nginx_pid" 2>/dev/null ) > /dev/null 2>&1 &
  for _ in $(seq 100); do
    curl -s -o /dev/null "$nginx_base/ready" && return 0
    kill -0 "$nginx_pid" 2>/dev/null || { echo "nginx did not start: $(cat "$dir/error.log" 2>/dev/null)" >&2; return 1; }
    sleep 0.1
  done
  echo "nginx does not answer on $nginx_base" >&2
  return 1
}

any_path_nginx_stop() {
  [ -n "${nginx_pid:-}" ] || return 0
  kill -TERM "$nginx_pid" 2>/dev/null
  wait "$nginx_pid" 2>/dev/null
  nginx_pid=""
}

# The set-up the uvfetch --jsonl scripts share: `uvfetch` (UVFETCH, or a release build of REPO),
# `dir` (a temporary directory, removed on exit with nginx stopped) and the nginx started in it.
# `any_path_list N FILE` writes N distinct URLs of it.
any_path_setup() {
  local label=$1 repo=$2
  if [ -n "${UVFETCH:-}" ]; then
    uvfetch=$UVFETCH
  else
    echo "== $label: building uvfetch (release)"
    # This checkout's helpers, which also know where an older REPO builds uvfetch.
    source "$(dirname "${BASH_SOURCE[0]}")/release-build.sh"
    release_build "$(uvfetch_package "$repo")" "$label" --product uvfetch || { echo "$label: the uvfetch build failed" >&2; return 1; }
    uvfetch="$(swift build --package-path "$(uvfetch_package "$repo")" -c release --show-bin-path)/uvfetch"
  fi
  [ -x "$uvfetch" ] || { echo "$label: no uvfetch binary at $uvfetch" >&2; return 1; }
  dir=$(mktemp -d)
  chmod 755 "$dir"  # nginx's worker runs as an unprivileged user
  trap 'set +e; any_path_nginx_stop; rm -rf "$dir"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  any_path_nginx_start "$dir"
}

any_path_list() {
  awk -v base="$nginx_base" -v n="$1" 'BEGIN { for (i = 0; i < n; i++) print base "/r/" i }' > "$2"
}
