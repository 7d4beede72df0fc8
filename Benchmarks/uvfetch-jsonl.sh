#!/usr/bin/env bash
# uvfetch with and without --jsonl (issue #35): one list of N URLs fetched from a private nginx
# (Benchmarks/any-path-nginx.sh) by
#   (a) uvfetch -i LIST --quiet
#   (b) uvfetch -i LIST --quiet --jsonl FILE     (a record per URL, written to a file)
# taking turns for BENCH_ROUNDS rounds. Prints each round's rates and the ratio b/a pair by pair
# (a pair ran back to back, so a ratio holds when the machine's speed drifts), then the medians,
# and appends a markdown table to BENCH_MARKDOWN. Every run is checked: exit status 0, the
# summary's N succeeded, and for (b) N lines in the file; otherwise the benchmark fails.
# The goal (0.85: --jsonl at least 0.85x the rate without it) is printed as a verdict, never
# an exit status. Exit status: 0, 2 when a run's results were wrong, 1 for anything else.
#
# Usage: bash Benchmarks/uvfetch-jsonl.sh
# Settings (environment):
#   BENCH_JSONL_URLS   URLs in the list (default 300000)
#   BENCH_ROUNDS       rounds (default 5)
#   BENCH_MARKDOWN     markdown file to append to (default Benchmarks/.build/benchmarks.md)
#   UVFETCH            a uvfetch binary to use instead of building one (release)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
urls=${BENCH_JSONL_URLS:-300000}
rounds=${BENCH_ROUNDS:-5}
markdown=${BENCH_MARKDOWN:-$here/.build/benchmarks.md}
goal=0.85

fail() { echo "uvfetch-jsonl: $*" >&2; exit 1; }
case "$urls$rounds" in *[!0-9]*) fail "BENCH_JSONL_URLS and BENCH_ROUNDS must be numbers" ;; esac
[ "$urls" -gt 0 ] && [ "$rounds" -gt 0 ] || fail "the counts must be positive"

source "$here/any-path-nginx.sh"
any_path_setup uvfetch-jsonl "$repo" || fail "no uvfetch or no nginx"
any_path_list "$urls" "$dir/list.txt"
echo "uvfetch-jsonl: nginx on $nginx_base, $urls URLs, $rounds rounds"

# One run; prints its rate (URLs per second of wall clock, the whole process). Fails the
# benchmark (exit 2) when the run did not fetch every URL, or did not record every URL.
run() {
  local mode=$1 status=0 t0 t1 arguments=(-i "$dir/list.txt" --quiet)
  [ "$mode" = jsonl ] && arguments+=(--jsonl "$dir/records.jsonl")
  t0=$(date +%s%N)
  "$uvfetch" "${arguments[@]}" > "$dir/out" 2> "$dir/err" || status=$?
  t1=$(date +%s%N)
  # "N requests in S s: N succeeded, 0 failed, ..."
  if [ "$status" != 0 ] || ! grep -q "^$urls requests in [0-9.]* s: $urls succeeded, 0 failed" "$dir/out" ||
     { [ "$mode" = jsonl ] && [ "$(wc -l < "$dir/records.jsonl")" != "$urls" ]; }; then
    echo "uvfetch-jsonl: the $mode run did NOT fetch and record the list (exit status $status):" >&2
    head -5 "$dir/out" "$dir/err" >&2
    exit 2
  fi
  rm -f "$dir/records.jsonl"
  awk -v n="$urls" -v ns=$(( t1 - t0 )) 'BEGIN { printf "%.0f\n", n / (ns / 1e9) }'
}

# A warm-up of each, not counted: page cache, nginx's first connections.
run plain > /dev/null
run jsonl > /dev/null
: > "$dir/results"
for round in $(seq "$rounds"); do
  plain=$(run plain)
  jsonl=$(run jsonl)
  ratio=$(awk -v a="$jsonl" -v b="$plain" 'BEGIN { printf "%.3f", a / b }')
  printf 'round %d: without --jsonl %7d URLs/s, with --jsonl %7d URLs/s, ratio %s\n' "$round" "$plain" "$jsonl" "$ratio"
  echo "$plain $jsonl $ratio" >> "$dir/results"
done

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
plain=$(awk '{ print $1 }' "$dir/results" | median)
jsonl=$(awk '{ print $2 }' "$dir/results" | median)
ratio=$(awk '{ print $3 }' "$dir/results" | median)
range=$(awk 'NR == 1 || $3 < min { min = $3 } NR == 1 || $3 > max { max = $3 } END { printf "%.3f-%.3f", min, max }' "$dir/results")
verdict=$(awk -v r="$ratio" -v g="$goal" 'BEGIN { print (r >= g) ? "met" : "MISSED" }')
echo "uvfetch-jsonl: medians: without --jsonl $plain URLs/s, with --jsonl $jsonl URLs/s; ratio $ratio (pairs $range); goal ${goal}x: $verdict"

mkdir -p "$(dirname "$markdown")"
{
  echo
  echo "### uvfetch with and without --jsonl ($urls URLs, $rounds rounds, medians)"
  echo
  echo "| uvfetch -i LIST --quiet | URLs/s |"
  echo "|---|---|"
  echo "| without --jsonl | $plain |"
  echo "| with --jsonl FILE | $jsonl |"
  echo "| ratio, pair by pair (median, range) | $ratio ($range); goal ${goal}x: $verdict |"
} >> "$markdown"
