#!/usr/bin/env bash
# Profiles UVNetworking's client alone (uvbench --ours-only) against a private nginx started by
# `uvbench --serve-only`, so that only the client's process is measured:
#   - syscalls and context switches per request (perf stat on syscall tracepoints; strace -c -f if
#     perf cannot read them),
#   - where the CPU goes (perf record -g on cpu-clock; top symbols written to $out/perf-top.txt),
#   - with --callgrind: instructions per request in steady state, from two runs under callgrind
#     (12,000 and 2,000 requests; the difference removes start-up), and per-function figures in
#     $out/callgrind-*.txt; the same for the run-on-loop mode and the bare libuv+llhttp loop. Instruction counts do not depend on what else the machine runs.
# Usage: bash Benchmarks/profile.sh [--callgrind] [seconds]     (perf: apt-get install linux-perf)
# PROFILE_MARKDOWN=FILE also writes the per-request figures as a markdown table (make bench does).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
callgrind=0
[ "${1:-}" = "--callgrind" ] && { callgrind=1; shift; }
seconds=${1:-5}
out=${PROFILE_OUT:-$here/.build/profile}
mkdir -p "$out"
: > "$out/rows.md"

swift build --package-path "$here" -c release --product uvbench 2>&1 | tail -1
bin="$(swift build --package-path "$here" -c release --show-bin-path)/uvbench"

"$bin" --serve-only > "$out/server.log" 2>&1 &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null' EXIT
for _ in $(seq 50); do grep -q "serving" "$out/server.log" && break; sleep 0.1; done
url=$(grep -o 'http://[0-9.:]*/' "$out/server.log" | head -1)
[ -n "$url" ] || { echo "profile: nginx did not start" >&2; cat "$out/server.log" >&2; exit 1; }
echo "profile: nginx at $url"

requests_of() { grep -o '[0-9]* requests' "$1" | head -1 | awk '{print $1}'; }

echo "== syscalls per request ($seconds s, 64 in flight, no warm-up: includes 64 connects)"
if perf stat -e 'syscalls:sys_enter_write' true >/dev/null 2>&1; then
  perf stat -x, -o "$out/perf-stat.csv" \
    -e raw_syscalls:sys_enter -e syscalls:sys_enter_read -e syscalls:sys_enter_write \
    -e syscalls:sys_enter_epoll_wait -e syscalls:sys_enter_futex -e context-switches \
    "$bin" --ours-only --url "$url" --seconds "$seconds" --warmup 0 > "$out/stat-run.log" 2>&1
  cat "$out/stat-run.log" | tail -1
  n=$(requests_of "$out/stat-run.log")
  awk -F, -v n="$n" '$1 ~ /^[0-9]+$/ { printf "  %-28s %10d  %6.2f per request\n", $3, $1, $1 / n }' "$out/perf-stat.csv"
  awk -F, -v n="$n" '$1 ~ /^[0-9]+$/ { printf "| %s (perf stat) | %.2f |\n", $3, $1 / n }' "$out/perf-stat.csv" > "$out/rows.md"
  # The run-on-loop mode has no completion queue to wake and frees on the thread that allocated.
  perf stat -x, -o "$out/perf-stat-onloop.csv" -e syscalls:sys_enter_futex \
    "$bin" --ours-only --on-loop --url "$url" --seconds "$seconds" --warmup 0 > "$out/stat-run-onloop.log" 2>&1
  n=$(requests_of "$out/stat-run-onloop.log")
  awk -F, -v n="$n" '$1 ~ /^[0-9]+$/ { printf "  %-28s %10d  %6.4f per request, run-on-loop mode\n", $3, $1, $1 / n }' "$out/perf-stat-onloop.csv"
  awk -F, -v n="$n" '$1 ~ /^[0-9]+$/ { printf "| %s, run-on-loop mode (perf stat) | %.4f |\n", $3, $1 / n }' "$out/perf-stat-onloop.csv" >> "$out/rows.md"
else
  echo "  (perf cannot read syscall tracepoints here; using strace -c -f, which slows the client)"
  strace -c -f -o "$out/strace.txt" "$bin" --ours-only --url "$url" --seconds "$seconds" --warmup 0 > "$out/stat-run.log" 2>&1
  tail -1 "$out/stat-run.log"
  n=$(requests_of "$out/stat-run.log")
  awk -v n="$n" '$NF ~ /^(read|write|epoll_wait|futex|writev|readv|total)$/ { printf "  %-12s %10d  %6.2f per request\n", $NF, $4, $4 / n }' "$out/strace.txt"
  awk -v n="$n" '$NF ~ /^(read|write|epoll_wait|futex|writev|readv|total)$/ { printf "| %s calls (strace -c) | %.2f |\n", $NF, $4 / n }' "$out/strace.txt" > "$out/rows.md"
fi

if command -v perf >/dev/null && perf record -e cpu-clock -o /dev/null true >/dev/null 2>&1; then
  echo "== perf record ($seconds s, cpu-clock, call graphs)"
  perf record -q -F 2999 -e cpu-clock -g -o "$out/perf.data" \
    "$bin" --ours-only --url "$url" --seconds "$seconds" --warmup 1 2>&1 | tail -1
  perf report -i "$out/perf.data" --no-children --sort sym -g none --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' \
    | swift demangle --simplified > "$out/perf-self.txt"
  perf report -i "$out/perf.data" --children --sort sym -g none --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' \
    | swift demangle --simplified > "$out/perf-top.txt"
  echo "  top symbols by self time ($out/perf-self.txt):"
  head -15 "$out/perf-self.txt" | cut -c1-150
  echo "  inclusive view: $out/perf-top.txt"
fi

if [ "$callgrind" = 1 ]; then
  echo "== callgrind: instructions per request (steady state)"
  # valgrind 3.19 cannot read the DWARF 5 the Swift toolchain writes: profile a copy without it.
  objcopy --strip-debug "$bin" "$out/uvbench.nodebug"
  # Steady state of one client mode: the difference of a 12,000- and a 2,000-request run.
  per_request() {  # tag, extra uvbench arguments...
    local tag=$1; shift
    for n in 2000 12000; do
      valgrind --tool=callgrind --callgrind-out-file="$out/callgrind$tag.$n.out" \
        "$out/uvbench.nodebug" --ours-only --url "$url" --requests $n --warmup 0 "$@" > "$out/callgrind$tag.$n.log" 2>&1
    done
    local a b
    a=$(grep -o 'Collected : [0-9]*' "$out/callgrind$tag.2000.log" | awk '{print $3}')
    b=$(grep -o 'Collected : [0-9]*' "$out/callgrind$tag.12000.log" | awk '{print $3}')
    echo $(( (b - a) / 10000 ))
  }
  task=$(per_request "")
  for n in 2000 12000; do
    callgrind_annotate --inclusive=yes --threshold=100 "$out/callgrind.$n.out" 2>/dev/null > "$out/callgrind-inclusive.$n.txt"
    callgrind_annotate --threshold=100 "$out/callgrind.$n.out" 2>/dev/null > "$out/callgrind-self.$n.txt"
  done
  onloop=$(per_request "-onloop" --on-loop)
  bare=$(per_request "-bare" --bare)
  # Logging and metrics on (a logger at .info, a metrics factory that only counts): task API.
  observed=$(per_request "-observed" --observe)
  # A tracer that keeps nothing and injects a traceparent: a span per task (uvbench --trace).
  traced=$(per_request "-traced" --trace)
  echo "  $task instructions per request (all threads, user space): task API"
  echo "  $onloop in the run-on-loop mode (deliversOnEventLoop)"
  echo "  $bare in the bare libuv+llhttp loop (Benchmarks/Sources/BareLoop: the design's floor)"
  echo "  $observed with a logger at .info and a metrics factory (task API, uvbench --observe)"
  echo "  $traced with a tracer that keeps nothing (task API, uvbench --trace)"
  {
    printf '| instructions, all threads, user space (callgrind, steady state) | %d |\n' "$task"
    printf '| instructions, run-on-loop mode (callgrind) | %d |\n' "$onloop"
    printf '| instructions, bare libuv+llhttp loop (callgrind) | %d |\n' "$bare"
    printf '| instructions, logger at .info and metrics factory (callgrind) | %d |\n' "$observed"
    printf '| instructions, a tracer that keeps nothing (callgrind) | %d |\n' "$traced"
    cat "$out/rows.md"
  } > "$out/rows.tmp" && mv "$out/rows.tmp" "$out/rows.md"
  python3 - "$out" <<'PY'
import re, subprocess, sys
out = sys.argv[1]
def load(n, kind):
    costs = {}
    for line in open(f"{out}/callgrind-{kind}.{n}.txt"):
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(\S.*)$", line.rstrip())
        if m:
            costs[m.group(2)] = costs.get(m.group(2), 0) + int(m.group(1).replace(",", ""))
    return costs
def per_request(kind, limit):
    a, b = load(2000, kind), load(12000, kind)
    rows = sorted(((b[k] - a.get(k, 0)) / 10000, k) for k in b if k != "PROGRAM TOTALS")[::-1][:limit]
    names = [k.split(":", 1)[1] if k.startswith("???:") else k for _, k in rows]
    demangled = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(names),
                               capture_output=True, text=True).stdout.split("\n")
    with open(f"{out}/callgrind-{'per-request' if kind == 'inclusive' else 'self-per-request'}.txt", "w") as f:
        for (v, _), name in zip(rows, demangled):
            f.write(f"{v:9.0f}  {name[:160]}\n")
per_request("inclusive", 60)
per_request("self", 80)
print(f"  instructions per request by function: {out}/callgrind-per-request.txt (inclusive), "
      f"{out}/callgrind-self-per-request.txt (self)")
PY
fi

if [ -n "${PROFILE_MARKDOWN:-}" ]; then
  {
    echo "### Per request, UVNetworking alone (Benchmarks/profile.sh)"
    echo
    echo "Keep-alive GETs of the 12-byte body from the private nginx, 64 in flight, through the task API"
    echo "(HTTPResponseSerializer, a serial completion queue), commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')."
    echo
    echo "| per request | value |"
    echo "|---|---:|"
    cat "$out/rows.md" 2>/dev/null
    echo
  } > "$PROFILE_MARKDOWN"
fi
