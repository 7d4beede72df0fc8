#!/usr/bin/env bash
# uvfetch against curl (issue #6): one list of N distinct URLs, fetched in the same run by
#   (a) uvfetch -i LIST --concurrency 64 --per-host 64 --quiet
#   (b) curl --parallel --parallel-max 64 -K CONFIG (a `url` + `output = /dev/null` pair per URL)
#   (c) xargs -P 64 -n 1 curl -s -o /dev/null -w ...     (a curl process per URL, the shell way)
#   (d) xargs -P 64 -n 300 curl -s -w ... < "-o /dev/null URL" triples (a curl per 100 URLs)
# against a private nginx on a loopback port, the tools taking turns for BENCH_ROUNDS rounds.
# Every run is checked: each tool must report status 200 for every URL of the list and exactly
# the list's body bytes, and nginx must have served exactly that many requests; otherwise the
# benchmark fails (a fast wrong result is worthless). Prints a markdown table (medians of the
# rounds) and appends it to BENCH_MARKDOWN. Exit status: 0, 2 when a tool's results were wrong
# (the run is invalid), 1 for anything else that failed (build, missing tool, nginx).
#
# Usage: bash Benchmarks/uvfetch-vs-curl.sh      (also run by Benchmarks/run.sh, `make bench`)
# Settings (environment):
#   BENCH_UVFETCH_URLS         URLs in the list (default 20000)
#   BENCH_UVFETCH_XARGS_URLS   URLs given to `xargs -n 1` (default 4000, or the whole list if
#                              shorter): a curl process per URL costs about 10 ms of CPU here,
#                              so the whole default list would take minutes per round. It gets
#                              the first URLs of the same list, and the table says so.
#   BENCH_ROUNDS               rounds (default 3)
#   BENCH_MARKDOWN             markdown file to append to (default Benchmarks/.build/benchmarks.md)
#   UVFETCH                    a uvfetch binary to use instead of building one
# Needs nginx (nginx-light), curl, xargs, python3 (free port, list generation), GNU time
# (/usr/bin/time, for CPU time and peak RSS; without it those columns say n/a).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
urls=${BENCH_UVFETCH_URLS:-20000}
xargs_urls=${BENCH_UVFETCH_XARGS_URLS:-$(( urls < 4000 ? urls : 4000 ))}
rounds=${BENCH_ROUNDS:-3}
markdown=${BENCH_MARKDOWN:-$here/.build/benchmarks.md}
# The comparison is at 64 in flight, the figure the issue names for all the tools.
parallel=64
# One URL in `large_every` is a 64 KiB body; the others are small (512 B to 1.5 KiB, 1 KiB on
# average): a crawl-like mix where most requests are small and a few carry most of the bytes.
large_every=20

fail() { echo "uvfetch-vs-curl: $*" >&2; exit 1; }

case "$urls$xargs_urls$rounds" in *[!0-9]*) fail "BENCH_UVFETCH_URLS, BENCH_UVFETCH_XARGS_URLS and BENCH_ROUNDS must be numbers" ;; esac
[ "$urls" -gt 0 ] && [ "$rounds" -gt 0 ] && [ "$xargs_urls" -gt 0 ] || fail "the counts must be positive"
[ "$xargs_urls" -le "$urls" ] || fail "BENCH_UVFETCH_XARGS_URLS ($xargs_urls) is larger than the list ($urls)"
for tool in /usr/sbin/nginx /usr/bin/curl /usr/bin/xargs /usr/bin/python3; do
  [ -x "$tool" ] || fail "$tool is missing (make deps installs nginx-light; apt-get install curl findutils python3)"
done
# GNU time gives each tool's CPU time (user + sys, its children included: every curl that xargs
# started) and peak RSS. Without it the wall clock is still measured.
gnu_time=""
[ -x /usr/bin/time ] && /usr/bin/time -f '%M' -o /dev/null true 2>/dev/null && gnu_time=/usr/bin/time

# --- uvfetch, release build ---------------------------------------------------------------
source "$here/release-build.sh"
if [ -n "${UVFETCH:-}" ]; then
  uvfetch=$UVFETCH
else
  echo "== uvfetch-vs-curl: building uvfetch (release)"
  release_build "$(uvfetch_package "$repo")" uvfetch-vs-curl --product uvfetch || fail "the uvfetch build failed"
  uvfetch="$(swift build --package-path "$(uvfetch_package "$repo")" -c release --show-bin-path)/uvfetch"
fi
[ -x "$uvfetch" ] || fail "no uvfetch binary at $uvfetch"

# --- a private nginx ----------------------------------------------------------------------
dir=$(mktemp -d)
chmod 755 "$dir"  # nginx's worker runs as an unprivileged user and must read the files
nginx_pid=""
watchdog_pid=""
cleanup() {
  # Best effort, whatever is already gone: no errexit here, or a failed kill would skip the rest.
  set +e
  [ -n "$watchdog_pid" ] && kill "$watchdog_pid" 2>/dev/null
  if [ -n "$nginx_pid" ]; then
    kill -TERM "$nginx_pid" 2>/dev/null
    wait "$nginx_pid" 2>/dev/null
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
mkdir -p "$dir/www" "$dir/tmp"
# One worker (as in uvbench), no access log (its writes would be part of what we measure),
# keep-alive connections that are never closed for their number of requests, and the
# stub_status page, whose counters tell how many connections and requests each tool made.
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
    keepalive_requests 10000000;
    keepalive_timeout 60s;
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:$port backlog=4096;
        root $dir/www;
        location = /nginx-status { stub_status; }
    }
}
CONF

# In one pass: the files, the list (one URL a line), curl's config (a url and an output per
# URL), the list for xargs -n 300 ("-o /dev/null URL" per line), the one for xargs -n 1 (the
# first BENCH_UVFETCH_XARGS_URLS lines), and the body bytes each list should bring. Small files
# each have their own content; the large ones are hard links to one 64 KiB file: distinct URLs
# for the clients, one copy in the page cache and on disk.
python3 - "$dir" "$base" "$urls" "$large_every" "$xargs_urls" <<'PY'
import os, sys
root, base, count, large_every, xargs_count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
www = os.path.join(root, "www")
os.makedirs(os.path.join(www, "s"))
os.makedirs(os.path.join(www, "l"))
large = os.path.join(root, "large.bin")
with open(large, "wb") as f:
    f.write(os.urandom(65536))
total = xargs_total = 0
with open(os.path.join(root, "list.txt"), "w") as listing, open(os.path.join(root, "curl.cfg"), "w") as config, \
        open(os.path.join(root, "list-o.txt"), "w") as pairs, open(os.path.join(root, "list-xargs.txt"), "w") as first:
    for i in range(count):
        if i % large_every == large_every - 1:
            path = f"l/{i:06d}.bin"
            os.link(large, os.path.join(www, path))
            total += 65536
        else:
            path = f"s/{i:06d}.txt"
            size = 512 + (i * 7919) % 1025  # 512..1536 bytes, spread over the list
            line = f"file {i} of the uvfetch-vs-curl list\n".encode()
            with open(os.path.join(www, path), "wb") as f:
                f.write((line * (size // len(line) + 1))[:size])
            total += size
        url = f"{base}/{path}"
        listing.write(url + "\n")
        if i < xargs_count:
            first.write(url + "\n")
            xargs_total = total
        config.write(f'url = "{url}"\noutput = "/dev/null"\n')
        pairs.write(f"-o /dev/null {url}\n")
with open(os.path.join(root, "expected-bytes"), "w") as f:
    f.write(f"{total} {xargs_total}\n")
PY
read -r expected_bytes xargs_bytes < "$dir/expected-bytes"
list="$dir/list.txt"

/usr/sbin/nginx -c "$dir/nginx.conf" -p "$dir" > "$dir/nginx.out" 2>&1 &
nginx_pid=$!
# If this script is killed outright (no trap runs), the watchdog still stops nginx.
# Its output goes nowhere, so that it holds no pipe of whoever reads ours.
( while kill -0 $$ 2>/dev/null; do sleep 2; done; kill -TERM "$nginx_pid" 2>/dev/null ) > /dev/null 2>&1 &
watchdog_pid=$!
for _ in $(seq 100); do
  curl -s -o /dev/null "$base/nginx-status" && break
  kill -0 "$nginx_pid" 2>/dev/null || fail "nginx did not start: $(cat "$dir/error.log" 2>/dev/null)"
  sleep 0.1
done
curl -s -o /dev/null "$base/nginx-status" || fail "nginx does not answer on $base"
worker_pid=$(cat "/proc/$nginx_pid/task/$nginx_pid/children" 2>/dev/null | awk '{print $1}')
[ -n "$worker_pid" ] || fail "cannot find nginx's worker process"
echo "uvfetch-vs-curl: nginx on $base (worker $worker_pid), $urls URLs ($(( urls / large_every )) of them 64 KiB), $expected_bytes body bytes"

# nginx's counters: "accepts handled requests" (the status request itself counts as one of each).
nginx_counters() { curl -s "$base/nginx-status" | awk 'NR == 3 { print $1, $3 }'; }
# The worker's CPU time in clock ticks (utime + stime, /proc/PID/stat fields 14 and 15; the
# command name in field 2 holds no spaces for nginx).
worker_ticks() { awk '{ print $14 + $15 }' "/proc/$worker_pid/stat"; }
# The whole machine's busy CPU time in clock ticks (/proc/stat: user, nice, system, irq,
# softirq, steal; steal is time the hypervisor gave to other guests). Less the tool's and nginx's
# CPU, it tells how much of the machine other work took during a run: the noise in its numbers.
machine_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
ticks_per_second=$(getconf CLK_TCK)

# --- the tools ------------------------------------------------------------------------------
# Each tool reports every URL (status, bytes) or a summary; check verifies that against the list.
tool_names=(uvfetch curl-parallel xargs-n1 xargs-n300)
declare -A tool_label tool_count tool_bytes
tool_label[uvfetch]="uvfetch"
tool_label[curl-parallel]="curl --parallel"
tool_label[xargs-n1]="xargs -n 1 curl"
tool_label[xargs-n300]="xargs -n 300 curl"
for name in "${tool_names[@]}"; do tool_count[$name]=$urls; tool_bytes[$name]=$expected_bytes; done
tool_count[xargs-n1]=$xargs_urls
tool_bytes[xargs-n1]=$xargs_bytes
write_out='%{http_code} %{size_download}\n'
shown_write_out="-w '%{http_code} %{size_download}\\n'"

# Sets `command` (argv), the files for its stdin, stdout and stderr (the outer shell does the
# redirections, so GNU time runs the tool itself and counts nothing else), and `shown`, the
# command as the report prints it, with LIST, CONFIG and LIST-WITH-O for the generated files.
# -q (always first) makes curl ignore any ~/.curlrc, so that only these options apply.
prepare() {
  local name=$1
  stdin=/dev/null; stdout="$dir/out.$name"; stderr="$dir/err.$name"
  case $name in
    uvfetch)
      command=("$uvfetch" -i "$list" --concurrency "$parallel" --per-host "$parallel" --quiet)
      shown="uvfetch -i LIST --concurrency $parallel --per-host $parallel --quiet" ;;
    curl-parallel)
      # The -K config gives every URL its own `output = "/dev/null"`: all bodies are discarded,
      # as uvfetch discards them, and -w prints each transfer's status and size. curl 7.88 draws
      # its --parallel progress meter even with -s: --no-progress-meter stops it.
      command=(curl -q -s --no-progress-meter --parallel --parallel-max "$parallel" -w "$write_out" -K "$dir/curl.cfg")
      shown="curl -q -s --no-progress-meter --parallel --parallel-max $parallel $shown_write_out -K CONFIG" ;;
    xargs-n1)
      command=(xargs -P "$parallel" -n 1 curl -q -s -o /dev/null -w "$write_out")
      stdin="$dir/list-xargs.txt"
      shown="xargs -P $parallel -n 1 curl -q -s -o /dev/null $shown_write_out < LIST" ;;
    xargs-n300)
      # 100 URLs per curl. An -o binds to one URL, so each URL comes with its own
      # "-o /dev/null" (three arguments a URL). Sending the bodies to stdout and -w's lines to
      # stderr instead does not work: curl writes stderr unbuffered, byte by byte, and the 64
      # processes' lines get mixed. On stdout, curl's buffer holds a process's lines until it
      # exits (100 lines of at most 10 bytes), written at once.
      command=(xargs -P "$parallel" -n 300 curl -q -s -w "$write_out")
      stdin="$dir/list-o.txt"
      shown="xargs -P $parallel -n 300 curl -q -s $shown_write_out < LIST-WITH-O" ;;
  esac
}

# The tool's own account must show every URL fetched with 200 and exactly the list's bytes.
check() {
  local name=$1 out=$2 status=$3 want=${tool_count[$1]} want_bytes=${tool_bytes[$1]} got ok bytes
  if [ "$name" = uvfetch ]; then
    # "N requests in S s: N succeeded, 0 failed, B body bytes, R requests/s"
    read -r got ok bytes < <(sed -n 's/^\([0-9]*\) requests in [0-9.]* s: \([0-9]*\) succeeded, [0-9]* failed, \([0-9]*\) body bytes.*/\1 \2 \3/p' "$out" | head -1) || true
  else
    read -r got ok bytes < <(awk '{ n++; if ($1 == "200") ok++; b += $2 } END { printf "%d %d %d\n", n, ok, b }' "$out")
  fi
  if [ "$status" != 0 ] || [ "${got:-x}" != "$want" ] || [ "${ok:-x}" != "$want" ] || [ "${bytes:-x}" != "$want_bytes" ]; then
    echo "uvfetch-vs-curl: ${tool_label[$name]} did NOT fetch the list: exit status $status, $got results, $ok with status 200, $bytes body bytes; wanted $want, $want, $want_bytes" >&2
    head -5 "$out" "$dir/err.$name" >&2 2>/dev/null || true
    return 1
  fi
}

# One timed run: wall clock, CPU and peak RSS (GNU time), nginx's connections, requests and CPU.
# Appends "name round wall_s cpu_s rss_kib connections nginx_cpu_s others_cores" to $dir/results.
measure() {
  local name=$1 round=$2 status=0 before after t0 t1 w0 w1 m0 m1 command stdin stdout stderr shown
  prepare "$name"
  before=$(nginx_counters); w0=$(worker_ticks); m0=$(machine_ticks)
  t0=$(date +%s%N)
  if [ -n "$gnu_time" ]; then
    "$gnu_time" -f '%e %U %S %M' -o "$dir/time.$name" "${command[@]}" < "$stdin" > "$stdout" 2> "$stderr" || status=$?
  else
    "${command[@]}" < "$stdin" > "$stdout" 2> "$stderr" || status=$?
  fi
  t1=$(date +%s%N)
  m1=$(machine_ticks); w1=$(worker_ticks); after=$(nginx_counters)
  check "$name" "$stdout" "$status" || return 1
  local cpu="n/a" rss="n/a"
  if [ -n "$gnu_time" ]; then
    # The last line: GNU time puts "Command exited with non-zero status" before it.
    read -r _ user sys rss < <(tail -1 "$dir/time.$name")
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
  fi
  # The status request made between the two readings counts as one connection and one request.
  local connections requests
  connections=$(awk -v a="$before" -v b="$after" 'BEGIN { split(a, x, " "); split(b, y, " "); print y[1] - x[1] - 1 }')
  requests=$(awk -v a="$before" -v b="$after" 'BEGIN { split(a, x, " "); split(b, y, " "); print y[2] - x[2] - 1 }')
  [ "$requests" = "${tool_count[$name]}" ] \
    || { echo "uvfetch-vs-curl: nginx served $requests requests during ${tool_label[$name]}'s run, not ${tool_count[$name]}" >&2; return 1; }
  local wall nginx_cpu
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
  nginx_cpu=$(awk -v a="$w0" -v b="$w1" -v hz="$ticks_per_second" 'BEGIN { printf "%.2f", (b - a) / hz }')
  # Cores the rest of the machine kept busy, on average over the run (n/a without the tool's CPU).
  local others=n/a
  [ "$cpu" = n/a ] || others=$(awk -v a="$m0" -v b="$m1" -v hz="$ticks_per_second" -v c="$cpu" -v n="$nginx_cpu" -v w="$wall" \
    'BEGIN { o = ((b - a) / hz - c - n) / w; printf "%.2f", o < 0 ? 0 : o }')
  echo "$name $round $wall $cpu $rss $connections $nginx_cpu $others" >> "$dir/results"
  printf '  round %d  %-18s %8.2f s  %9.0f req/s  cpu %s s  rss %s KiB  %s connections  nginx cpu %s s  others %s cores\n' \
    "$round" "${tool_label[$name]}" "$wall" "$(awk -v n="${tool_count[$name]}" -v w="$wall" 'BEGIN { print n / w }')" \
    "$cpu" "$rss" "$connections" "$nginx_cpu" "$others"
}

# Untimed warm-up: one pass of curl over the list brings every file into the page cache and
# nginx's worker up to speed, so the first timed tool pays no cold-start cost the others skip.
echo "== uvfetch-vs-curl: warm-up (curl --parallel over the list, untimed)"
curl -q -s --no-progress-meter --parallel --parallel-max "$parallel" -w "$write_out" -K "$dir/curl.cfg" > "$dir/warmup" \
  || fail "the warm-up curl failed"
[ "$(grep -c '^200 ' "$dir/warmup")" = "$urls" ] || fail "the warm-up did not get 200 for every URL"

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
: > "$dir/results"
echo "== uvfetch-vs-curl: $rounds round(s), the tools taking turns"
for round in $(seq "$rounds"); do
  for name in "${tool_names[@]}"; do
    # Status 2, as uvbench's: the run is invalid (run.sh tells this apart from a failure).
    measure "$name" "$round" || { echo "uvfetch-vs-curl: the run is INVALID" >&2; exit 2; }
  done
done

# --- the report -----------------------------------------------------------------------------
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=""
[ -n "$(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null)" ] && dirty=" (with uncommitted changes)"
report="$dir/report.md"
# The table, from $dir/results: medians of the rounds per tool (statistics.median: the middle
# value, or the mean of the two middle ones for an even number of rounds).
for name in "${tool_names[@]}"; do
  prepare "$name"
  printf '%s\t%s\t%s\n' "$name" "${tool_count[$name]}" "$shown"
done > "$dir/tools"
python3 - "$dir/results" "$dir/tools" "$urls" "$parallel" "$large_every" "$expected_bytes" "$rounds" \
  "$started" "$(nproc)" "$(uname -r)" "$commit$dirty" "$load_before" "${gnu_time:+yes}" > "$report" <<'PY'
import statistics, sys
(results, tools, urls, parallel, large_every, expected_bytes, rounds, started, cores, kernel, commit,
 load_before, have_time) = sys.argv[1:]
urls, rounds = int(urls), int(rounds)
rows = [line.split() for line in open(results) if line.strip()]
def median(values):
    values = [float(v) for v in values if v != "n/a"]
    return statistics.median(values) if values else None
def thousands(x):
    return f"{x:,.0f}"
print(f"### Batch fetch: uvfetch against curl, {urls:,} distinct URLs, {parallel} in flight")
print()
print(f"Measured by `Benchmarks/uvfetch-vs-curl.sh` on {started}: {cores} cores, Linux {kernel}, commit {commit}; "
      f"load average {load_before} before the rounds. "
      f"nginx with 1 worker on 127.0.0.1 serves {urls:,} distinct URLs (one in {large_every} a 64 KiB file, the others "
      f"512 B to 1.5 KiB; {int(expected_bytes):,} body bytes in all); {rounds} round{'s' if rounds != 1 else ''}, "
      f"the tools taking turns, after an untimed warm-up. Every run was checked: status 200 and the right byte count "
      f"for every URL in the tool's own report, and nginx's request counter. Medians of the rounds; "
      f"\"rate vs uvfetch\" above 1 means faster than uvfetch.")
print()
print("| tool | wall s (each round) | req/s | rate vs uvfetch | client CPU per request | peak RSS | connections | nginx CPU per request | other work (cores) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
uv_rate = None
for line in open(tools):
    name, count, command = line.rstrip("\n").split("\t")
    count = int(count)
    mine = [r for r in rows if r[0] == name]
    wall = median(r[2] for r in mine)
    rate = count / wall
    if uv_rate is None:
        uv_rate = rate
    ratio = rate / uv_rate
    cpu, rss = median(r[3] for r in mine), median(r[4] for r in mine)
    connections, nginx_cpu, others = median(r[5] for r in mine), median(r[6] for r in mine), median(r[7] for r in mine)
    label = f"`{command}`" + ("" if count == urls else f" (**first {count:,} URLs only**)")
    cpu_text = "n/a" if cpu is None else f"{cpu / count * 1e6:,.0f} µs"
    rss_text = "n/a" if rss is None else f"{rss / 1024:.1f} MiB" + (" per process" if name.startswith("xargs") else "")
    # Three decimals for the small ratios, where two would print 0.00x.
    ratio_text = f"{ratio:.3f}x" if ratio < 0.1 else f"{ratio:.2f}x"
    print(f"| {label} | {wall:.2f} ({', '.join(f'{float(r[2]):.2f}' for r in mine)}) | {thousands(rate)} | "
          f"{ratio_text} | {cpu_text} | {rss_text} | {connections:,.0f} | {nginx_cpu / count * 1e6:,.0f} µs | "
          f"{'n/a' if others is None else f'{others:.2f}'} |")
print()
if have_time:
    print(f"Client CPU: user + system time of the tool and every process it started (each curl under xargs), "
          f"per URL. Peak RSS: the largest single process (GNU time's maximum resident set); under xargs, "
          f"{parallel} curl processes run at once. Connections and nginx CPU: nginx's stub_status counters and its "
          f"worker's /proc stat, per URL. Other work: the cores the rest of the machine kept busy during the run "
          f"(/proc/stat's busy and stolen time less the tool's and nginx's CPU), on average; "
          f"the higher, the noisier that tool's figures. LIST is the list of URLs, CONFIG a curl config with `url = ...` and "
          f"`output = \"/dev/null\"` for each, LIST-WITH-O the list with `-o /dev/null` before each URL.")
else:
    print("Client CPU and peak RSS: n/a (no GNU time at /usr/bin/time). Connections and nginx CPU: nginx's "
          "stub_status counters and its worker's /proc stat, per URL.")
PY

echo
cat "$report"
mkdir -p "$(dirname "$markdown")"
[ -s "$markdown" ] && printf '\n' >> "$markdown"
cat "$report" >> "$markdown"
echo
echo "uvfetch-vs-curl: appended to $markdown"
