#!/usr/bin/env bash
# A crawler's world on one machine (issue #15): BENCH_ORIGINS_URLS URLs (default 100,000) over
# BENCH_ORIGINS_HOSTS host names (default 10,000), each name its own origin and its own address in
# 127/8, fetched by uvfetch and by `curl --parallel` taking turns, BENCH_ORIGINS_PARALLEL in
# flight (default 256; curl allows at most 300).
#
# Everything runs in a network and mount namespace of the script's own (`unshare -mn`, so it needs
# root): loopback only, nginx listening on port 80 of every 127/8 address, dnsmasq answering the
# names from a hosts file on 127.0.0.53:53, and a private resolv.conf bind-mounted over
# /etc/resolv.conf that names it. Both tools resolve every name through that server, as they
# would on a real network; nothing leaves the machine.
#
# Each run is checked (status 200 for every URL in the tool's own report, nginx's request
# counter); a run that is not right makes the benchmark fail with status 2. Reported per tool
# (medians of the rounds): wall time, URLs/s, CPU per URL, peak RSS, the peak of open
# descriptors (sampled from /proc every 50 ms), connections nginx accepted. The markdown goes to
# stdout and is appended to BENCH_MARKDOWN.
#
# A polite crawl (issue #37), with BENCH_ORIGINS_CRAWL_DELAY=SECONDS: every host serves a
# robots.txt with that Crawl-delay and a Disallow, one URL in ten of the list is disallowed, and
# uvfetch alone runs, with --robots. nginx logs every request, and each round is checked from the
# log: one robots.txt per host, before that host's first page; no disallowed page requested;
# every page of a host at least the delay after the one before, as the server saw them arrive.
#
# Usage: bash Benchmarks/many-origins.sh       (also run by Benchmarks/run.sh, `make bench`)
#        BENCH_ORIGINS_CRAWL_DELAY=1 bash Benchmarks/many-origins.sh
# Settings (environment): BENCH_ORIGINS_URLS, BENCH_ORIGINS_HOSTS, BENCH_ORIGINS_PARALLEL,
# BENCH_ROUNDS (default 3), BENCH_MARKDOWN (default Benchmarks/.build/benchmarks.md), UVFETCH (a
# uvfetch binary to use instead of building one), UVFETCH_ARGS (more uvfetch options).
# Needs: root, unshare and mount (util-linux), ip (iproute2), nginx (nginx-light), dnsmasq
# (dnsmasq-base), curl, python3, GNU time (/usr/bin/time).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
urls=${BENCH_ORIGINS_URLS:-100000}
hosts=${BENCH_ORIGINS_HOSTS:-10000}
parallel=${BENCH_ORIGINS_PARALLEL:-256}
rounds=${BENCH_ROUNDS:-3}
crawl_delay=${BENCH_ORIGINS_CRAWL_DELAY:-}
markdown=${BENCH_MARKDOWN:-$here/.build/benchmarks.md}

fail() { echo "many-origins: $*" >&2; exit 1; }

if [ -z "${MANY_ORIGINS_INSIDE:-}" ]; then
  case "$urls$hosts$parallel$rounds" in *[!0-9]*) fail "the BENCH_ORIGINS_* settings and BENCH_ROUNDS must be numbers" ;; esac
  [ "$hosts" -gt 0 ] && [ "$hosts" -le 1000000 ] && [ "$urls" -ge "$hosts" ] || fail "need 0 < hosts <= 1,000,000 and urls >= hosts"
  [ "$parallel" -ge 1 ] && [ "$parallel" -le 300 ] || fail "BENCH_ORIGINS_PARALLEL must be 1 to 300 (curl's limit)"
  [[ -z "$crawl_delay" || "$crawl_delay" =~ ^[0-9]+(\.[0-9]+)?$ ]] || fail "BENCH_ORIGINS_CRAWL_DELAY must be a number of seconds"
  [ "$(id -u)" = 0 ] || fail "needs root for its network and mount namespace (unshare -mn)"
  for tool in /usr/bin/unshare /usr/sbin/nginx /usr/sbin/dnsmasq /usr/bin/curl /usr/bin/python3 /usr/bin/time; do
    [ -x "$tool" ] || fail "$tool is missing (apt-get install util-linux nginx-light dnsmasq-base curl python3 time)"
  done
  command -v ip > /dev/null || fail "ip is missing (apt-get install iproute2)"
  if [ -z "${UVFETCH:-}" ]; then
    source "$here/release-build.sh"
    echo "== many-origins: building uvfetch (release)"
    release_build "$(uvfetch_package "$repo")" many-origins --product uvfetch || fail "the uvfetch build failed"
    UVFETCH="$(swift build --package-path "$(uvfetch_package "$repo")" -c release --show-bin-path)/uvfetch"
  fi
  [ -x "$UVFETCH" ] || fail "no uvfetch binary at $UVFETCH"
  export UVFETCH MANY_ORIGINS_INSIDE=1 MANY_ORIGINS_COMMIT
  MANY_ORIGINS_COMMIT="$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  [ -n "$(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null)" ] && MANY_ORIGINS_COMMIT+=" (with uncommitted changes)"
  exec unshare -mn bash "$0" "$@"
fi

# --- inside the namespaces ------------------------------------------------------------------
ip link set lo up
# The mounts below stay in this namespace: nothing of them is seen outside.
mount --make-rprivate /
dir=$(mktemp -d)
chmod 755 "$dir"
pids=()
cleanup() {
  set +e
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Host i is h<i>.crawl.test at 127.<1 + i / 65536>.<i / 256 % 256>.<i % 256>: each name is an
# origin of its own with an address of its own (all of 127/8 is loopback's, and the first octet
# after 127 stays far below 255, so none of them is the broadcast address). The list mixes the hosts as a crawl frontier does
# (a fixed shuffle): a host's URLs are far apart, so its connection idles between them.
python3 - "$dir" "$urls" "$hosts" "$crawl_delay" <<'PY'
import os, random, sys
root, urls, hosts, delay = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
os.makedirs(os.path.join(root, "www", "p"))
if delay:
    # The polite crawl: a robots.txt for every host (one file, served for every name), and one
    # URL in ten under the path it disallows.
    with open(os.path.join(root, "www", "robots.txt"), "w") as f:
        f.write(f"User-agent: *\nCrawl-delay: {delay}\nDisallow: /private/\n")
os.makedirs(os.path.join(root, "tmp"))
sizes = [512 + 128 * k for k in range(9)]  # 512 B to 1.5 KiB
for k, size in enumerate(sizes):
    line = f"page {k} of the many-origins benchmark\n".encode()
    with open(os.path.join(root, "www", "p", f"{k}.html"), "wb") as f:
        f.write((line * (size // len(line) + 1))[:size])
def address(i):
    return f"127.{1 + i // 65536}.{i // 256 % 256}.{i % 256}"
with open(os.path.join(root, "hosts"), "w") as f:
    for i in range(hosts):
        f.write(f"{address(i)} h{i}.crawl.test\n")
order = [(i % hosts, i // hosts) for i in range(urls)]
random.Random(15).shuffle(order)
total = 0
with open(os.path.join(root, "list.txt"), "w") as listing, open(os.path.join(root, "curl.cfg"), "w") as config:
    for host, n in order:
        k = (host + n) % len(sizes)
        if delay and n % 10 == 9:
            listing.write(f"http://h{host}.crawl.test/private/{k}.html?n={n}\n")
            continue
        url = f"http://h{host}.crawl.test/p/{k}.html?n={n}"
        total += sizes[k]
        listing.write(url + "\n")
        config.write(f'url = "{url}"\noutput = "/dev/null"\n')
with open(os.path.join(root, "expected-bytes"), "w") as f:
    f.write(f"{total}\n")
PY
read -r expected_bytes < "$dir/expected-bytes"
# URLs the tools fetch with status 200: all of them, but the disallowed ones of a polite crawl.
allowed=$(grep -c /p/ "$dir/list.txt")

# A polite crawl's rounds are checked from nginx's log of every request.
access_log=off
[ -n "$crawl_delay" ] && access_log="$dir/access.log polite"
# nginx on port 80 of every address (0.0.0.0 covers 127/8 here), one worker as in the other
# benchmarks, enough descriptors for every tool's connections.
cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
worker_rlimit_nofile 200000;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 100000; }
http {
    log_format polite '\$msec \$host \$uri \$status';
    access_log $access_log;
    client_body_temp_path $dir/tmp;
    proxy_temp_path $dir/tmp;
    fastcgi_temp_path $dir/tmp;
    uwsgi_temp_path $dir/tmp;
    scgi_temp_path $dir/tmp;
    keepalive_requests 10000000;
    keepalive_timeout 120s;
    default_type text/html;
    server {
        listen 80 backlog=4096;
        root $dir/www;
        location = /nginx-status { stub_status; }
    }
}
CONF
/usr/sbin/nginx -c "$dir/nginx.conf" -p "$dir" > "$dir/nginx.out" 2>&1 &
pids+=($!)
nginx_pid=$!

# dnsmasq answers the names from the hosts file and nothing else (--local: AAAA and unknown
# names get their answer here, never a forward), with a cache large enough for every name.
/usr/sbin/dnsmasq --keep-in-foreground --no-resolv --no-hosts --addn-hosts="$dir/hosts" --local=/test/ \
  --listen-address=127.0.0.53 --bind-interfaces --port=53 --cache-size=$(( hosts * 2 > 10000 ? 10000 : hosts * 2 )) \
  --local-ttl=600 --pid-file="$dir/dnsmasq.pid" > "$dir/dnsmasq.out" 2>&1 &
pids+=($!)
printf 'nameserver 127.0.0.53\noptions timeout:2 attempts:2\n' > "$dir/resolv.conf"
mount --bind "$dir/resolv.conf" /etc/resolv.conf
# No names of the machine's own hosts file may answer for ours.
printf '127.0.0.1 localhost\n' > "$dir/etc-hosts"
mount --bind "$dir/etc-hosts" /etc/hosts

for _ in $(seq 100); do
  curl -s -o /dev/null http://h0.crawl.test/nginx-status && break
  kill -0 "$nginx_pid" 2>/dev/null || fail "nginx did not start: $(cat "$dir/error.log" 2>/dev/null)"
  sleep 0.1
done
curl -s -o /dev/null http://h0.crawl.test/nginx-status || fail "h0.crawl.test does not answer (nginx or dnsmasq: $(cat "$dir/dnsmasq.out"))"
worker_pid=$(cat "/proc/$nginx_pid/task/$nginx_pid/children" | awk '{print $1}')
[ -n "$worker_pid" ] || fail "cannot find nginx's worker process"
echo "many-origins: $urls URLs over $hosts host names, $expected_bytes body bytes, $parallel in flight; nginx worker $worker_pid"

nginx_counters() { curl -s http://127.0.0.1/nginx-status | awk 'NR == 3 { print $1, $3 }'; }
# Open descriptors of $1 and its children, every 50 ms until $1 ends; prints the peak.
fd_peak() {
  local pid=$1 peak=0 n child
  while kill -0 "$pid" 2>/dev/null; do
    n=0
    for child in $pid $(cat /proc/"$pid"/task/*/children 2>/dev/null); do
      n=$(( n + $(ls /proc/"$child"/fd 2>/dev/null | wc -l) ))
    done
    [ "$n" -gt "$peak" ] && peak=$n
    sleep 0.05
  done
  echo "$peak"
}

tool_names=(uvfetch curl)
read -r -a uvfetch_extra <<< "${UVFETCH_ARGS:-}"
if [ -n "$crawl_delay" ]; then
  # curl knows no robots.txt: uvfetch alone.
  tool_names=(uvfetch)
  uvfetch_extra+=(--robots)
fi
prepare() {
  case $1 in
    uvfetch)
      command=("$UVFETCH" -i "$dir/list.txt" --concurrency "$parallel" --quiet "${uvfetch_extra[@]}")
      shown="uvfetch -i LIST --concurrency $parallel --quiet${UVFETCH_ARGS:+ $UVFETCH_ARGS}${crawl_delay:+ --robots}" ;;
    curl)
      command=(curl -q -s --no-progress-meter --parallel --parallel-max "$parallel" -w '%{http_code} %{size_download}\n' -K "$dir/curl.cfg")
      shown="curl -q -s --no-progress-meter --parallel --parallel-max $parallel -w '%{http_code} %{size_download}\\n' -K CONFIG" ;;
  esac
}
check() {
  local name=$1 out=$2 status=$3 got ok bytes
  if [ "$name" = uvfetch ]; then
    read -r got ok bytes < <(sed -n 's/^\([0-9]*\) requests in [0-9.]* s: \([0-9]*\) succeeded, [0-9]* failed, \([0-9]*\) body bytes.*/\1 \2 \3/p' "$out" | head -1) || true
  else
    read -r got ok bytes < <(awk '{ n++; if ($1 == "200") ok++; b += $2 } END { printf "%d %d %d\n", n, ok, b }' "$out")
  fi
  # A polite crawl's disallowed URLs are failures of their own kind: uvfetch exits 1.
  local want_status=0
  [ -n "$crawl_delay" ] && want_status=1
  if [ "$status" != "$want_status" ] || [ "${got:-x}" != "$urls" ] || [ "${ok:-x}" != "$allowed" ] || [ "${bytes:-x}" != "$expected_bytes" ]; then
    echo "many-origins: $name did NOT fetch the list: exit status $status, $got results, $ok with status 200, $bytes body bytes; wanted $want_status, $urls, $allowed, $expected_bytes" >&2
    head -5 "$out" "$dir/err.$name" >&2 2>/dev/null || true
    return 1
  fi
}
# The polite crawl's rules, from nginx's log of the round (then emptied): one robots.txt per host
# before its first page, no disallowed page, a host's pages at least the Crawl-delay apart (less
# 5 ms: arrival times jitter). Appends the round's spacing figures to $dir/polite.
check_polite() {
  python3 - "$dir/access.log" "$hosts" "$crawl_delay" "$1" >> "$dir/polite" <<'PY' || return 1
import collections, statistics, sys
log, hosts, delay, round_ = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
by_host = collections.defaultdict(list)
for line in open(log):
    when, host, uri, status = line.split()
    if host != "127.0.0.1" and uri != "/nginx-status":
        by_host[host].append((float(when), uri))
problems = []
gaps = []
for host, requests in by_host.items():
    robots = [when for when, uri in requests if uri == "/robots.txt"]
    pages = sorted(when for when, uri in requests if uri != "/robots.txt")
    if len(robots) != 1:
        problems.append(f"{host}: {len(robots)} robots.txt requests")
    elif pages and pages[0] < robots[0]:
        problems.append(f"{host}: a page before its robots.txt")
    if any(uri.startswith("/private/") for _, uri in requests):
        problems.append(f"{host}: a disallowed page requested")
    gaps += [b - a for a, b in zip(pages, pages[1:])]
if len(by_host) != hosts:
    problems.append(f"{len(by_host)} hosts asked, not {hosts}")
short = [g for g in gaps if g < delay - 0.005]
if short:
    problems.append(f"{len(short)} of {len(gaps)} gaps between a host's pages under {delay} s (shortest {min(short):.3f} s)")
if problems:
    print("many-origins: the polite crawl broke its rules: " + "; ".join(problems[:5]), file=sys.stderr)
    sys.exit(1)
print(round_, len(by_host), len(gaps), f"{min(gaps):.3f}", f"{statistics.median(gaps):.3f}")
PY
  : > "$dir/access.log"
}
measure() {
  local name=$1 round=$2 status=0 before after t0 t1 command shown time_pid sampler_pid
  prepare "$name"
  before=$(nginx_counters)
  t0=$(date +%s%N)
  /usr/bin/time -f '%e %U %S %M' -o "$dir/time.$name" "${command[@]}" < /dev/null > "$dir/out.$name" 2> "$dir/err.$name" &
  time_pid=$!
  fd_peak "$time_pid" > "$dir/fds.$name" &
  sampler_pid=$!
  wait "$time_pid" || status=$?
  wait "$sampler_pid"
  t1=$(date +%s%N)
  after=$(nginx_counters)
  check "$name" "$dir/out.$name" "$status" || return 1
  local user sys rss fds connections requests wall
  read -r _ user sys rss < <(tail -1 "$dir/time.$name")
  # /usr/bin/time's own descriptors (3) are in the sum: take them off.
  fds=$(( $(cat "$dir/fds.$name") - 3 ))
  connections=$(awk -v a="$before" -v b="$after" 'BEGIN { split(a, x, " "); split(b, y, " "); print y[1] - x[1] - 1 }')
  requests=$(awk -v a="$before" -v b="$after" 'BEGIN { split(a, x, " "); split(b, y, " "); print y[2] - x[2] - 1 }')
  # A polite crawl asks each host for its robots.txt too, and never for a disallowed URL.
  local served=$urls
  [ -n "$crawl_delay" ] && served=$(( allowed + hosts ))
  [ "$requests" = "$served" ] || { echo "many-origins: nginx served $requests requests during $name's run, not $served" >&2; return 1; }
  [ -z "$crawl_delay" ] || check_polite "$round" || return 1
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
  echo "$name $round $wall $user $sys $rss $fds $connections" >> "$dir/results"
  printf '  round %d  %-8s %8.2f s  %9.0f URLs/s  cpu %.2f s  rss %d KiB  peak fds %d  %d connections\n' \
    "$round" "$name" "$wall" "$(awk -v n="$urls" -v w="$wall" 'BEGIN { print n / w }')" \
    "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" "$rss" "$fds" "$connections"
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
: > "$dir/results"
: > "$dir/polite"
[ -z "$crawl_delay" ] || : > "$dir/access.log"
echo "== many-origins: $rounds round(s), the tools taking turns"
for round in $(seq "$rounds"); do
  for name in "${tool_names[@]}"; do
    measure "$name" "$round" || { echo "many-origins: the run is INVALID" >&2; exit 2; }
  done
done

for name in "${tool_names[@]}"; do prepare "$name"; printf '%s\t%s\n' "$name" "$shown"; done > "$dir/tools"
python3 - "$dir/results" "$dir/tools" "$urls" "$hosts" "$parallel" "$expected_bytes" "$rounds" "$started" \
  "$(nproc)" "$(uname -r)" "$MANY_ORIGINS_COMMIT" "$load_before" "$crawl_delay" "$dir/polite" "$allowed" > "$dir/report.md" <<'PY'
import statistics, sys
results, tools, urls, hosts, parallel, expected, rounds, started, cores, kernel, commit, load, delay, polite, allowed = sys.argv[1:]
urls, hosts = int(urls), int(hosts)
rows = [line.split() for line in open(results) if line.strip()]
def median(name, column):
    return statistics.median(float(r[column]) for r in rows if r[0] == name)
if delay:
    gaps = [line.split() for line in open(polite) if line.strip()]
    wall = median("uvfetch", 2)
    cpu = median("uvfetch", 3) + median("uvfetch", 4)
    walls = ", ".join(f"{float(r[2]):.2f}" for r in rows)
    print(f"### A polite crawl: {urls:,} URLs over {hosts:,} host names, robots.txt with Crawl-delay {delay} s, {parallel} in flight")
    print()
    print(f"Measured by `BENCH_ORIGINS_CRAWL_DELAY={delay} Benchmarks/many-origins.sh` on {started}: {cores} cores, Linux {kernel}, "
          f"commit {commit}; load average {load} before the rounds. The namespace, nginx and dnsmasq of the many-origins "
          f"benchmark; every host serves `User-agent: *`, `Crawl-delay: {delay}`, `Disallow: /private/`, and one URL in "
          f"ten of the list is under /private/ ({int(allowed):,} allowed). Every round checked from nginx's log of every "
          f"request: one robots.txt per host, asked before its first page; no disallowed page asked; each host's pages "
          f"at least the delay apart as they arrived; status 200 and the byte count for every allowed URL.")
    print()
    print("| command | wall s (each round) | URLs/s | the delay's bound | CPU per URL | peak RSS | robots.txt per host | gap between a host's pages, shortest / median |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    command = [line.rstrip("\n").split("\t") for line in open(tools)][0][1]
    # With every host's pages spaced by the delay, the run cannot be shorter than a host's
    # allowed pages less one, times the delay.
    bound = (int(allowed) // hosts - 1) * float(delay)
    shortest = min(float(g[3]) for g in gaps)
    middle = statistics.median(float(g[4]) for g in gaps)
    print(f"| `{command}` | {wall:.2f} ({walls}) | {urls / wall:,.0f} | {bound:.1f} s | {cpu / urls * 1e6:,.0f} µs | "
          f"{median('uvfetch', 5) / 1024:.1f} MiB | 1 | {shortest:.3f} s / {middle:.3f} s |")
    sys.exit(0)
print(f"### Many origins: {urls:,} URLs over {hosts:,} host names, {parallel} in flight")
print()
print(f"Measured by `Benchmarks/many-origins.sh` on {started}: {cores} cores, Linux {kernel}, commit {commit}; "
      f"load average {load} before the rounds. In a network and mount namespace of its own: nginx (1 worker) on "
      f"port 80 of {hosts:,} addresses in 127/8, one per host name, dnsmasq answering the names, a private "
      f"resolv.conf; the list mixes the hosts in a fixed shuffle ({urls // hosts} URLs per host, {int(expected):,} "
      f"body bytes). {rounds} round(s), the tools taking turns; medians. Every run checked: status 200 and the byte "
      f"count for every URL, and nginx's request counter.")
print()
print("| tool | wall s (each round) | URLs/s | rate vs curl | CPU per URL | peak RSS | peak descriptors | connections |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
named = [line.rstrip("\n").split("\t") for line in open(tools)]
curl_rate = urls / median("curl", 2)
for name, command in named:
    wall = median(name, 2)
    rate = urls / wall
    cpu = median(name, 3) + median(name, 4)
    walls = ", ".join(f"{float(r[2]):.2f}" for r in rows if r[0] == name)
    print(f"| `{command}` | {wall:.2f} ({walls}) | {rate:,.0f} | {rate / curl_rate:.2f}x | {cpu / urls * 1e6:,.0f} µs | "
          f"{median(name, 5) / 1024:.1f} MiB | {median(name, 6):,.0f} | {median(name, 7):,.0f} |")
print()
print("CPU per URL: user + system time (GNU time). Peak descriptors: the process's open descriptors, sampled "
      "every 50 ms. Connections: nginx's stub_status accepts during the run.")
PY
echo
cat "$dir/report.md"
mkdir -p "$(dirname "$markdown")"
[ -s "$markdown" ] && printf '\n' >> "$markdown"
cat "$dir/report.md" >> "$markdown"
echo
echo "many-origins: appended to $markdown"
