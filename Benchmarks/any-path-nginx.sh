# Sourced by the uvfetch --jsonl scripts: `any_path_nginx_start DIR` starts a private nginx (one
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
