#!/usr/bin/env bash
# Per-record gate for uvfetch --jsonl (issue #35): what a record costs uvfetch, in instructions
# and heap allocations, must stay under a threshold a little above today's, so that a change that
# makes records dearer (an allocation per record, a generic encoder) fails here.
#
# Runs the release uvfetch under callgrind against a private nginx (Benchmarks/any-path-nginx.sh)
# on lists of two lengths, with and without --jsonl; the difference between the lengths removes
# start-up, and the difference between the modes leaves what --jsonl adds per URL: measuring the
# task, building the record, encoding and writing it. Instruction and call counts do not depend
# on what else the machine runs; allocations are the calls to malloc, calloc, realloc and the
# aligned allocators, counted by callgrind. Prints both per record, and exits 1 when either is
# above its threshold (0 when both are within; 2 for a run that did not fetch its list).
#
# Usage: bash Benchmarks/jsonl-gate.sh        (make gate-jsonl; needs valgrind, nginx, python3)
# Settings (environment):
#   JSONL_GATE_MAX_INSTRUCTIONS  instructions per record (default 25000: 22.8k measured, +10%)
#   JSONL_GATE_MAX_ALLOCATIONS   allocations per record (default 6.2: 5.6 measured; one more fails)
#   JSONL_GATE_URLS              the two list lengths (default "1000 5000")
#   UVFETCH                      a uvfetch binary to use instead of building one (release)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
max_instructions=${JSONL_GATE_MAX_INSTRUCTIONS:-25000}
max_allocations=${JSONL_GATE_MAX_ALLOCATIONS:-6.2}
read -r short long <<< "${JSONL_GATE_URLS:-1000 5000}"

fail() { echo "jsonl-gate: $*" >&2; exit 1; }
case "$short$long" in *[!0-9]*) fail "JSONL_GATE_URLS must be two numbers" ;; esac
[ "$long" -gt "$short" ] || fail "the second length of JSONL_GATE_URLS must be the larger"
command -v valgrind > /dev/null || fail "valgrind is missing (apt-get install valgrind)"

source "$here/any-path-nginx.sh"
any_path_setup jsonl-gate "$repo" || fail "no uvfetch or no nginx"
# valgrind cannot read the DWARF 5 the Swift toolchain writes: a copy without it.
objcopy --strip-debug "$uvfetch" "$dir/uvfetch"

# Instructions and allocations of one run under callgrind, as "INSTRUCTIONS ALLOCATIONS".
measure() {
  local n=$1 mode=$2 arguments=(-i "$dir/list.$1" --quiet)
  [ -f "$dir/list.$n" ] || any_path_list "$n" "$dir/list.$n"
  [ "$mode" = jsonl ] && arguments+=(--jsonl "$dir/records.jsonl")
  valgrind --tool=callgrind --callgrind-out-file="$dir/callgrind.$mode.$n" \
    "$dir/uvfetch" "${arguments[@]}" > "$dir/out" 2> "$dir/valgrind.$mode.$n" || true
  if ! grep -q "^$n requests in [0-9.]* s: $n succeeded, 0 failed" "$dir/out" ||
     { [ "$mode" = jsonl ] && [ "$(wc -l < "$dir/records.jsonl")" != "$n" ]; }; then
    echo "jsonl-gate: the $mode run of $n URLs did NOT fetch and record its list:" >&2
    head -5 "$dir/out" "$dir/valgrind.$mode.$n" >&2
    exit 2
  fi
  python3 - "$dir/callgrind.$mode.$n" <<'PY'
import re, sys
# Allocations: calls into the allocator from outside it (callgrind's "calls=" lines under a
# "cfn=" naming the callee; names are given once with their id, then by id alone).
allocators = {"malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc", "memalign"}
names, callee, caller, allocations, instructions = {}, None, None, 0, None
def name(spec):
    match = re.match(r"\((\d+)\)(?: (.*))?", spec)
    if not match:
        return spec
    if match.group(2):
        names[match.group(1)] = match.group(2)
    return names.get(match.group(1), "")
for line in open(sys.argv[1], errors="replace"):
    if line.startswith("fn="):
        caller = name(line[3:].strip())
    elif line.startswith("cfn="):
        callee = name(line[4:].strip())
    elif line.startswith("calls="):
        if callee in allocators and caller not in allocators:
            allocations += int(line[6:].split()[0])
    elif line.startswith(("summary:", "totals:")):
        instructions = int(line.split()[1])
print(instructions, allocations)
PY
}

echo "jsonl-gate: nginx on $nginx_base; callgrind over $short and $long URLs, with and without --jsonl"
read -r plain_short_i plain_short_a < <(measure "$short" plain)
read -r plain_long_i plain_long_a < <(measure "$long" plain)
read -r jsonl_short_i jsonl_short_a < <(measure "$short" jsonl)
read -r jsonl_long_i jsonl_long_a < <(measure "$long" jsonl)
span=$(( long - short ))
read -r instructions allocations total_instructions total_allocations < <(awk -v s="$span" \
  -v pi=$(( plain_long_i - plain_short_i )) -v pa=$(( plain_long_a - plain_short_a )) \
  -v ji=$(( jsonl_long_i - jsonl_short_i )) -v ja=$(( jsonl_long_a - jsonl_short_a )) \
  'BEGIN { printf "%.0f %.2f %.0f %.2f\n", (ji - pi) / s, (ja - pa) / s, ji / s, ja / s }')
echo "jsonl-gate: per URL with --jsonl: $total_instructions instructions, $total_allocations allocations (all of uvfetch)"
echo "jsonl-gate: per record, what --jsonl adds: $instructions instructions (at most $max_instructions), $allocations allocations (at most $max_allocations)"
verdict=$(awk -v i="$instructions" -v a="$allocations" -v mi="$max_instructions" -v ma="$max_allocations" \
  'BEGIN { print (i <= mi && a <= ma) ? "ok" : "FAILED" }')
echo "jsonl-gate: $verdict"
[ "$verdict" = ok ]
