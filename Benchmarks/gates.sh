#!/usr/bin/env bash
# The per-request gates (`make gates`): what one keep-alive GET of a 12-byte body costs UVNetworking,
# 64 in flight, against a private nginx in another process (so only the client is counted):
#   - allocations per request (malloc, calloc, realloc(NULL), posix_memalign... of every thread of
#     uvgate, counted by the interposer linked into it, Sources/CAllocCounter) over 20,000 requests;
#   - instructions per request (callgrind, user space, every thread of uvgate), the difference of a
#     12,000- and a 2,000-request run divided by 10,000, which removes start-up and warm-up;
# through the task API (completion queue), the run-on-loop mode (deliversOnEventLoop), with logging
# and metrics on (a logger at .info, a counting metrics factory) and with a tracer (BenchTracer).
# The observed and traced modes also have ratio gates against the task API: at most 1.2x and 1.5x
# its instructions, the traced one less BenchTracer's own cost per span (`uvgate --mode
# tracer-only`, measured the same way), so that it weighs the library alone.
# And per uvfetch --jsonl record: RecordWriter (RecordEncoder's hand-written JSON, then the line
# output) to /dev/null, four shapes of record in turn, no request (`uvgate --mode record`):
# allocations over 20,000 records and instructions from a 2,000- and a 12,000-record run, as above.
# Benchmarks/jsonl-gate.sh measures a record inside a whole uvfetch run instead (release uvfetch,
# nginx; `make gate-jsonl`), which is too long a build for make test.
# Prints a table (measured, threshold, verdict) and exits 1 when any gate is breached, 2 when it
# could not measure. Settings: GATES_OUT (default Benchmarks/.build/gates).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out=${GATES_OUT:-$here/.build/gates}
mkdir -p "$out"

# Thresholds: the worst of 10 runs on the 2-core build machine (release build, valgrind 3.19,
# issue #35; other builds loading it) plus a small margin, so that the gate does not flake and a
# regression fails it: one more allocation per request fails the allocation gates of the task API
# and the run-on-loop mode, a few hundred instructions the instruction gates. Allocations vary
# with how completions batch (timing), the observed and traced modes' most (a run after the 10
# gave 8.87 traced): their thresholds are looser, and the task API's and the run-on-loop mode's
# are the ones that catch a single allocation. Instructions vary by about 4% between runs.
# Batching only ever adds allocations (a completion dispatched alone costs up to one more than
# one that shares a batch), so each allocation gate takes the fewest of three runs: since issue
# #36 single runs ranged 2.42-2.88 (task API) and 8.55-9.66 (tracer) on a quiet machine, against
# a run-on-loop mode steady at 2.00, and a single run could cross a threshold with no change.
# docs/benchmarks.md ("Per-request costs (gates)") has the measured ranges.
max_alloc_task=2.90        # 10 runs: 2.07-2.33 (2.43 once with a debug build beside it)
max_alloc_onloop=2.25      # 10 runs: 2.00-2.02
max_alloc_observed=3.40    # 10 runs: 2.08-2.68
max_alloc_traced=9.60      # 10 runs: 8.06-8.22; 8.87 in a later run
max_instr_task=10800       # 10 runs: 9,999-10,378
max_instr_onloop=10200     # 10 runs: 9,534-9,803
max_instr_observed=12700   # 10 runs: 11,693-12,260
max_instr_traced=20800     # 10 runs: 19,809-20,231
max_ratio_observed=1.20    # issue #35's goal; 10 runs: 1.14-1.18
max_ratio_traced=1.50      # issue #35's goal, less BenchTracer's own cost; 10 runs: 1.37-1.42
max_alloc_record=0.05        # 3 runs: 0.0002 (4 in 20,000); one allocation more per record measured 2.0
max_instr_record=6800        # 6,259 (a single thread: the same count each run) with 15 keys; 5,797 with the 11 before etag, lastModified, notModified and capture (66 bytes more a line)

command -v valgrind >/dev/null || { echo "gates: valgrind is missing (scripts/install-deps.sh installs it)" >&2; exit 2; }
nginx=${NGINX:-/usr/sbin/nginx}
[ -x "$nginx" ] || { echo "gates: nginx is missing at $nginx" >&2; exit 2; }

swift build --package-path "$here" -c release --product uvgate 2>&1 | tail -1
bin="$(swift build --package-path "$here" -c release --show-bin-path)/uvgate"
[ -x "$bin" ] || { echo "gates: uvgate did not build" >&2; exit 2; }
# valgrind 3.19 cannot read the DWARF 5 the Swift toolchain writes: run a copy without it.
objcopy --strip-debug "$bin" "$out/uvgate.nodebug"

# A private nginx: one worker, unlimited keep-alive, no access log, the 12 bytes at /.
dir=$(mktemp -d /tmp/uvgate-nginx.XXXXXX)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $dir/body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
    keepalive_requests 1000000;
    keepalive_timeout 60s;
    server {
        listen 127.0.0.1:$port backlog=1024;
        location = / { default_type text/plain; return 200 "hello world\n"; }
    }
}
CONF
"$nginx" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" 2>/dev/null &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.05; done
(exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null || { echo "gates: nginx did not start" >&2; cat "$dir/error.log" >&2; exit 2; }
url="http://127.0.0.1:$port/"

failed=0
broken=0
rows=()
# gate NAME MEASURED THRESHOLD: a row of the table; a measurement above the threshold fails.
gate() {
  local verdict
  if [ -z "$2" ]; then verdict="NOT MEASURED"; broken=1
  elif awk -v m="$2" -v t="$3" 'BEGIN { exit !(m <= t) }'; then verdict="ok"
  else verdict="FAILED"; failed=1; fi
  rows+=("$(printf '%-46s %12s %12s  %s' "$1" "$2" "$3" "$verdict")")
  printf '%-46s %12s %12s  %s\n' "$1" "$2" "$3" "$verdict"
}

allocations() {  # mode: the fewest of three runs (see the thresholds' comment)
  local run
  for run in 1 2 3; do
    "$bin" --url "$url" --mode "$1" --requests 20000 --warmup 2000 --count-allocations > "$out/alloc-$1.$run.log" 2>&1 || return
  done
  cat "$out/alloc-$1".[123].log | grep -o '([0-9.]* per request)' | tr -d '(' | awk '{print $1}' | sort -g | head -1
}

instructions() {  # mode: the steady state, from a 2,000- and a 12,000-request run
  local n a b
  for n in 2000 12000; do
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \
      "$out/uvgate.nodebug" --url "$url" --mode "$1" --requests $n --warmup 0 > "$out/callgrind-$1.$n.log" 2>&1 || return
  done
  a=$(grep -o 'Collected : [0-9]*' "$out/callgrind-$1.2000.log" | awk '{print $3}')
  b=$(grep -o 'Collected : [0-9]*' "$out/callgrind-$1.12000.log" | awk '{print $3}')
  [ -n "$a" ] && [ -n "$b" ] && echo $(( (b - a) / 10000 ))
}

# Per record: the same two measures, with `--mode record` (no URL, no server).
record_allocations() {
  "$bin" --mode record --requests 20000 --warmup 2000 --count-allocations > "$out/alloc-record.log" 2>&1 \
    && grep -o '([0-9.]* per record)' "$out/alloc-record.log" | tr -d '(' | awk '{print $1}'
}

record_instructions() {
  local n a b
  for n in 2000 12000; do
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \
      "$out/uvgate.nodebug" --mode record --requests $n --warmup 0 > "$out/callgrind-record.$n.log" 2>&1 || return
  done
  a=$(grep -o 'Collected : [0-9]*' "$out/callgrind-record.2000.log" | awk '{print $3}')
  b=$(grep -o 'Collected : [0-9]*' "$out/callgrind-record.12000.log" | awk '{print $3}')
  [ -n "$a" ] && [ -n "$b" ] && echo $(( (b - a) / 10000 ))
}

ratio() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

printf '%-46s %12s %12s  %s\n' "gate (per request; per record)" "measured" "threshold" "verdict"
gate "allocations, task API" "$(allocations task)" $max_alloc_task
gate "allocations, run-on-loop mode" "$(allocations onloop)" $max_alloc_onloop
gate "allocations, logging and metrics" "$(allocations observed)" $max_alloc_observed
gate "allocations, tracer" "$(allocations traced)" $max_alloc_traced
task=$(instructions task)
gate "instructions, task API" "$task" $max_instr_task
gate "instructions, run-on-loop mode" "$(instructions onloop)" $max_instr_onloop
observed=$(instructions observed)
gate "instructions, logging and metrics" "$observed" $max_instr_observed
gate "  ratio to the task API" "$(ratio "$observed" "$task")" $max_ratio_observed
traced=$(instructions traced)
gate "instructions, tracer" "$traced" $max_instr_traced
# BenchTracer's own part of a traced request (a span started, injected, its attributes stored,
# ended; no request, no library), subtracted for the ratio: the goal is the library's cost.
spans=()
for n in 2000 12000; do
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$out/uvgate.nodebug" --mode tracer-only --requests $n \
    > "$out/callgrind-tracer-only.$n.log" 2>&1
  spans+=("$(grep -o 'Collected : [0-9]*' "$out/callgrind-tracer-only.$n.log" | awk '{print $3}')")
done
tracer=""
[ -n "${spans[0]}" ] && [ -n "${spans[1]}" ] && tracer=$(( (spans[1] - spans[0]) / 10000 ))
printf '%-46s %12s\n' "  of which BenchTracer's own (not gated)" "$tracer"
library=""
[ -n "$traced" ] && [ -n "$tracer" ] && library=$(( traced - tracer ))
gate "  ratio to the task API, less BenchTracer's" "$(ratio "$library" "$task")" $max_ratio_traced
gate "allocations per --jsonl record" "$(record_allocations)" $max_alloc_record
gate "instructions per --jsonl record" "$(record_instructions)" $max_instr_record
printf '%s\n' "${rows[@]}" > "$out/table.txt"
[ "$broken" = 0 ] || { echo "gates: a figure could not be measured (logs in $out)" >&2; exit 2; }
[ "$failed" = 0 ] || { echo "gates: FAILED (logs in $out)" >&2; exit 1; }
echo "gates: all passed"
