#!/usr/bin/env bash
# Runs the built test suites tier by tier, each tier of each package in a test process of its own
# and several processes side by side (`make test`: every tier; `make check`: unit and loopback).
#
# Usage: scripts/run-tests.sh [--check | TIER...]       after `swift build --build-tests` of each package
#
# The packages: the library's (this folder, test binary UVNetworkingPackageTests.xctest) and the
# programs' (Apps/: uvfetch and the example service, UVNetworkingAppsPackageTests.xctest). The
# tiers are the tags of Tests/UVNetworkingTests/Support/TestTiers.swift, which Apps' tests link to.
# A test with several tier tags runs once, in the first tier of TIERS that it has; "unit" also
# takes every test with no tier tag, so nothing is ever left out. A full run checks that: per
# package, the tests the tiers planned (their event streams) must be the whole list, each once.
#
# Why processes and not swift-testing's --parallel: the leak checks after each I/O test compare
# counts of the whole process (descriptors, resident memory), so within one process
# the tests run one at a time; tiers in separate processes do not see each other's descriptors.
# Tiers that share nothing run at once: each process starts its own nginx, httpbin and
# PostgreSQL on free ports, and namespaces are named per process.
#
# TEST_PACKAGES: which packages, as LABEL=BINARY pairs separated by spaces (default: both, each
#   binary where `swift build --package-path P --show-bin-path` puts it), so that a caller building
#   something else at the same time (make test: the docs) never waits for SwiftPM's lock here.
#   The label names the logs: "lib" and "apps".
# TEST_JOBS: how many tier processes run at once (default 3 on this 2-core class of machine:
#   most tiers wait on sockets and child processes far more than they compute).
# TEST_TIER_TIMEOUT: seconds a tier may take before it is stopped and fails (default 1200; the
#   longest takes about 2 minutes on a loaded 2-core machine).
# TEST_LOGS: where each tier's output goes (default .build/test-logs/<label>-<tier>.log, and the
#   tier's swift-testing event stream beside it, <label>-<tier>.jsonl).
set -uo pipefail

cd "$(dirname "$0")/.."

mapfile -t TIERS < <(python3 scripts/test-tiers.py --tiers)
# The longer tiers start first (seconds, measured on a 2-core machine, warm build; a job not
# listed counts 30).
declare -A expected=([lib-nginx]=95 [lib-loopback]=90 [lib-namespace]=60 [lib-childProcess]=60 [lib-huge]=60 [lib-unit]=30
                     [apps-namespace]=130 [apps-postgres]=130 [apps-childProcess]=60 [apps-loopback]=40 [apps-nginx]=40 [apps-huge]=40)

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
if [ -n "${TEST_PACKAGES:-}" ]; then
  read -r -a packages <<<"$TEST_PACKAGES"
else
  packages=("lib=$(swift build --show-bin-path)/UVNetworkingPackageTests.xctest"
            "apps=$(swift build --package-path Apps --show-bin-path)/UVNetworkingAppsPackageTests.xctest")
fi

declare -A binary
labels=()
for package in "${packages[@]}"; do
  label=${package%%=*} bin=${package#*=}
  [ -x "$bin" ] || { echo "run-tests: no test binary at $bin (run swift build --build-tests first)" >&2; exit 1; }
  binary[$label]=$bin
  labels+=("$label")
  # Which tier each test is in: the tests' list with their tags (scripts/test-tiers.py reads it).
  plan=$logs/$label-plan.jsonl
  rm -f "$plan"
  "$bin" --testing-library swift-testing --list-tests --event-stream-output-path "$plan" --event-stream-version 0 > /dev/null 2>&1
  [ -s "$plan" ] || { echo "run-tests: $bin listed no tests" >&2; exit 1; }
  # A suite without a tier tag still runs (as "unit"), but make check would then start whatever
  # it needs: say so, so that it gets its tag.
  untagged=$(python3 scripts/test-tiers.py "$plan" --untagged | grep -c . || true)
  [ "$untagged" = 0 ] || echo "run-tests: $untagged test(s) of $label have no tier tag, run as unit: python3 scripts/test-tiers.py $plan --untagged"
done

# The arguments that select tier $2 of package $1 (swift-testing filters by test names, not by tags).
selection() {
  python3 scripts/test-tiers.py "$logs/$1-plan.jsonl" "$2" | while read -r expression; do printf -- '--filter\n%s\n' "$expression"; done
}

# Longest first, so the last one to start is a short one.
mapfile -t order < <(for label in "${labels[@]}"; do for tier in "${selected[@]}"; do
  echo "${expected[$label-$tier]:-30} $label-$tier"; done; done | sort -rn | awk '{print $2}')

declare -A pid started status
now() { date +%s.%N; }
run_tier() {
  local job=$1 label=${1%%-*} tier=${1#*-} args selected_tests
  # A command substitution, not `< <(...)`: bash waits for it, while a process substitution's
  # child may still be running at the `exec` below and become the test process's child. Its
  # zombie, which the test process never reaps, made swift-testing's exit-test monitor
  # (waitid on any child, without reaping) spin and the tier hang.
  selected_tests=$(selection "$label" "$tier")
  if [ -n "$selected_tests" ]; then mapfile -t args <<<"$selected_tests"; else args=(); fi
  rm -f "$logs/$job.jsonl"
  # A tier with no tests has no filter, and no filter would run every test.
  if [ ${#args[@]} -eq 0 ]; then
    echo "Test run with 0 tests in 0 suites passed (no test in this tier)" > "$logs/$job.log"
    : > "$logs/$job.jsonl"
    exit 0
  fi
  # A hung test fails its tier after TEST_TIER_TIMEOUT seconds instead of holding up the run (and
  # CI) until something outside kills it.
  exec timeout --kill-after=30 "${TEST_TIER_TIMEOUT:-1200}" "${binary[$label]}" --testing-library swift-testing --no-parallel "${args[@]}" \
    --event-stream-output-path "$logs/$job.jsonl" --event-stream-version 0 > "$logs/$job.log" 2>&1
}

begin=$(now)
running=()
reap() {
  local job still=()
  for job in "${running[@]}"; do
    if kill -0 "${pid[$job]}" 2>/dev/null; then still+=("$job"); continue; fi
    wait "${pid[$job]}"
    status[$job]=$?
    local seconds summary
    seconds=$(awk -v a="${started[$job]}" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }')
    summary=$(grep -a -o 'Test run with [0-9]* tests\? in [0-9]* suites\? [a-z]*' "$logs/$job.log" | tail -1)
    [ "${status[$job]}" = 124 ] && summary="stopped after ${TEST_TIER_TIMEOUT:-1200} s (TEST_TIER_TIMEOUT): the last test it started hung"
    printf 'run-tests: %-18s %4s s  %s%s\n' "$job" "$seconds" "${summary:-no summary}" \
      "$([ "${status[$job]}" = 0 ] || echo "  (exit ${status[$job]}, log: $logs/$job.log)")"
  done
  running=("${still[@]}")
}

# Every test process ends with this script (a ^C or a CI timeout).
trap 'for j in "${running[@]}"; do kill -TERM "${pid[$j]}" 2>/dev/null; done' EXIT

for job in "${order[@]}"; do
  while [ ${#running[@]} -ge "$jobs" ]; do sleep 0.2; reap; done
  started[$job]=$(now)
  run_tier "$job" &
  pid[$job]=$!
  running+=("$job")
done
while [ ${#running[@]} -gt 0 ]; do sleep 0.2; reap; done
trap - EXIT

failed=0
for job in "${order[@]}"; do
  [ "${status[$job]}" = 0 ] && continue
  failed=1
  echo
  echo "== $job failed: its failing tests and the end of $logs/$job.log"
  grep -a -E '✘|recorded an issue|Expectation failed|error:' "$logs/$job.log" | head -40
  echo "..."
  tail -20 "$logs/$job.log"
done
# Nothing dropped, nothing twice (a full run only): every test of the list was planned by
# exactly one tier.
if [ ${#selected[@]} -eq ${#TIERS[@]} ]; then
  for label in "${labels[@]}"; do
    "${binary[$label]}" --testing-library swift-testing --list-tests 2>/dev/null > "$logs/$label-all-tests.txt"
    python3 - "$logs" "$label" "${TIERS[@]}" <<'PY' || failed=1
import json, sys, collections
logs, label, tiers = sys.argv[1], sys.argv[2], sys.argv[3:]
planned = collections.defaultdict(list)
for tier in tiers:
    with open(f"{logs}/{label}-{tier}.jsonl") as stream:
        for line in stream:
            record = json.loads(line)
            payload = record.get("payload", {})
            if record.get("kind") == "test" and payload.get("kind") == "function":
                # "Module.Suite/name()/File.swift:line:column": the list names tests without the place.
                planned[payload["id"].rsplit("/", 1)[0]].append(tier)
listed = set(open(f"{logs}/{label}-all-tests.txt").read().split())
twice = {test: where for test, where in planned.items() if len(where) > 1}
missing = listed - set(planned)
for test, where in sorted(twice.items()): print(f"run-tests: {label}: {test} ran in {', '.join(where)}")
for test in sorted(missing): print(f"run-tests: {label}: {test} ran in no tier")
sys.exit(1 if twice or missing else 0)
PY
  done
fi
printf 'run-tests: %s tier process(es) in %.0f s\n' "${#order[@]}" "$(awk -v a="$begin" -v b="$(now)" 'BEGIN { print b - a }')"
exit $failed
