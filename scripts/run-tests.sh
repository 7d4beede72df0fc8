#!/usr/bin/env bash
# Runs the built test suites tier by tier, each tier in a test process of its own and several
# processes side by side (`make test`: every tier; `make check`: unit and loopback).
#
# Usage: scripts/run-tests.sh [--check | TIER...]       after `swift build --build-tests`
#
# The tiers are the tags of Tests/UVNetworkingTests/Support/TestTiers.swift. A test with several
# tier tags runs once, in the first tier of TIERS that it has; "unit" also takes every test with
# no tier tag, so nothing is ever left out. A full run checks that: the tests the tiers planned
# (their event streams) must be the whole list, each test once.
#
# Why processes and not swift-testing's --parallel: the leak checks after each I/O test compare
# counts of the whole process (descriptors, resident memory), so within one process
# the tests run one at a time; tiers in separate processes do not see each other's descriptors.
# Tiers that share nothing run at once: each process starts its own nginx, httpbin and
# PostgreSQL on free ports, and namespaces are named per process.
#
# TEST_JOBS: how many tier processes run at once (default 3 on this 2-core class of machine:
#   most tiers wait on sockets and child processes far more than they compute).
# TEST_LOGS: where each tier's output goes (default .build/test-logs/<tier>.log, and the tier's
#   swift-testing event stream beside it, <tier>.jsonl).
set -uo pipefail

cd "$(dirname "$0")/.."

mapfile -t TIERS < <(python3 scripts/test-tiers.py --tiers)
# The longer tiers start first (seconds, measured on a loaded 2-core machine, warm build).
declare -A expected=([namespace]=190 [postgres]=130 [huge]=110 [nginx]=95 [loopback]=90 [childProcess]=90 [unit]=40)

selected=()
if [ "${1-}" = --check ]; then
  selected=(loopback unit)
elif [ $# -gt 0 ]; then
  selected=("$@")
else
  selected=("${TIERS[@]}")
fi

for tier in "${selected[@]}"; do
  [[ " ${TIERS[*]} " == *" $tier "* ]] || { echo "run-tests: no tier named $tier (tiers: ${TIERS[*]})" >&2; exit 64; }
done

jobs=${TEST_JOBS:-3}
logs=${TEST_LOGS:-.build/test-logs}
mkdir -p "$logs"
# TEST_BINARY: the test bundle (default: the debug build's), so that a caller building something
# else at the same time (make test: the docs) never waits for SwiftPM's lock here.
bin=${TEST_BINARY:-"$(swift build --show-bin-path)/UVNetworkingPackageTests.xctest"}
[ -x "$bin" ] || { echo "run-tests: no test binary at $bin (run swift build --build-tests first)" >&2; exit 1; }

# Which tier each test is in: the tests' list with their tags (scripts/test-tiers.py reads it).
plan=$logs/plan.jsonl
rm -f "$plan"
"$bin" --testing-library swift-testing --list-tests --event-stream-output-path "$plan" --event-stream-version 0 > /dev/null 2>&1
[ -s "$plan" ] || { echo "run-tests: $bin listed no tests" >&2; exit 1; }

# A suite without a tier tag still runs (as "unit"), but make check would then start whatever it
# needs: say so, so that it gets its tag.
untagged=$(python3 scripts/test-tiers.py "$plan" --untagged | grep -c . || true)
[ "$untagged" = 0 ] || echo "run-tests: $untagged test(s) have no tier tag, run as unit: python3 scripts/test-tiers.py $plan --untagged"

# The arguments that select tier $1 (swift-testing filters by test names, not by tags).
selection() {
  python3 scripts/test-tiers.py "$plan" "$1" | while read -r expression; do printf -- '--filter\n%s\n' "$expression"; done
}

# Longest first, so the last one to start is a short one.
mapfile -t order < <(for tier in "${selected[@]}"; do echo "${expected[$tier]:-60} $tier"; done | sort -rn | awk '{print $2}')

declare -A pid started status
now() { date +%s.%N; }
run_tier() {
  local tier=$1 args
  mapfile -t args < <(selection "$tier")
  rm -f "$logs/$tier.jsonl"
  # A tier with no tests has no filter, and no filter would run every test.
  if [ ${#args[@]} -eq 0 ]; then
    echo "Test run with 0 tests in 0 suites passed (no test in this tier)" > "$logs/$tier.log"
    : > "$logs/$tier.jsonl"
    exit 0
  fi
  exec "$bin" --testing-library swift-testing --no-parallel "${args[@]}" \
    --event-stream-output-path "$logs/$tier.jsonl" --event-stream-version 0 > "$logs/$tier.log" 2>&1
}

begin=$(now)
running=()
reap() {
  local tier still=()
  for tier in "${running[@]}"; do
    if kill -0 "${pid[$tier]}" 2>/dev/null; then still+=("$tier"); continue; fi
    wait "${pid[$tier]}"
    status[$tier]=$?
    local seconds summary
    seconds=$(awk -v a="${started[$tier]}" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }')
    summary=$(grep -a -o 'Test run with [0-9]* tests\? in [0-9]* suites\? [a-z]*' "$logs/$tier.log" | tail -1)
    printf 'run-tests: %-12s %4s s  %s%s\n' "$tier" "$seconds" "${summary:-no summary}" \
      "$([ "${status[$tier]}" = 0 ] || echo "  (exit ${status[$tier]}, log: $logs/$tier.log)")"
  done
  running=("${still[@]}")
}

# Every test process ends with this script (a ^C or a CI timeout).
trap 'for t in "${running[@]}"; do kill -TERM "${pid[$t]}" 2>/dev/null; done' EXIT

for tier in "${order[@]}"; do
  while [ ${#running[@]} -ge "$jobs" ]; do sleep 0.2; reap; done
  started[$tier]=$(now)
  run_tier "$tier" &
  pid[$tier]=$!
  running+=("$tier")
done
while [ ${#running[@]} -gt 0 ]; do sleep 0.2; reap; done
trap - EXIT

failed=0
for tier in "${order[@]}"; do
  [ "${status[$tier]}" = 0 ] && continue
  failed=1
  echo
  echo "== $tier failed: its failing tests and the end of $logs/$tier.log"
  grep -a -E '✘|recorded an issue|Expectation failed|error:' "$logs/$tier.log" | head -40
  echo "..."
  tail -20 "$logs/$tier.log"
done
# Nothing dropped, nothing twice (a full run only): every test of the list was planned by
# exactly one tier.
if [ ${#order[@]} -eq ${#TIERS[@]} ]; then
  "$bin" --testing-library swift-testing --list-tests 2>/dev/null > "$logs/all-tests.txt"
  python3 - "$logs" "${TIERS[@]}" <<'PY' || failed=1
import json, sys, collections
logs, tiers = sys.argv[1], sys.argv[2:]
planned = collections.defaultdict(list)
for tier in tiers:
    with open(f"{logs}/{tier}.jsonl") as stream:
        for line in stream:
            record = json.loads(line)
            payload = record.get("payload", {})
            if record.get("kind") == "test" and payload.get("kind") == "function":
                # "Module.Suite/name()/File.swift:line:column": the list names tests without the place.
                planned[payload["id"].rsplit("/", 1)[0]].append(tier)
listed = set(open(f"{logs}/all-tests.txt").read().split())
twice = {test: where for test, where in planned.items() if len(where) > 1}
missing = listed - set(planned)
for test, where in sorted(twice.items()): print(f"run-tests: {test} ran in {', '.join(where)}")
for test in sorted(missing): print(f"run-tests: {test} ran in no tier")
sys.exit(1 if twice or missing else 0)
PY
fi
printf 'run-tests: %s tier(s) in %.0f s\n' "${#order[@]}" "$(awk -v a="$begin" -v b="$(now)" 'BEGIN { print b - a }')"
exit $failed
