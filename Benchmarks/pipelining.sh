#!/usr/bin/env bash
# HTTP/1.1 pipelining side by side (issue #38): wrk with Benchmarks/pipeline.lua and uvbench
# --ours-only --pipeline take turns against one private nginx (one worker, 12-byte body), both
# with C connections (PIPE_CONNECTIONS, default 8) and D requests pipelined on each (PIPE_DEPTH,
# default 8); then, for reference, UVNetworking without pipelining, C connections and C requests
# in flight, and C×D connections with C×D in flight. Prints each round and the medians.
# Settings: PIPE_SECONDS (per round, default 5), PIPE_ROUNDS (default 3). Needs wrk and nginx
# (make deps).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
connections=${PIPE_CONNECTIONS:-8}
depth=${PIPE_DEPTH:-8}
seconds=${PIPE_SECONDS:-5}
rounds=${PIPE_ROUNDS:-3}
[ -x /usr/bin/wrk ] || { echo "pipelining: wrk is missing (make deps)" >&2; exit 1; }

source "$here/release-build.sh"
source "$here/any-path-nginx.sh"
echo "== pipelining: building uvbench (release)"
release_build "$here" pipelining --product uvbench
uvbench="$(swift build --package-path "$here" -c release --show-bin-path)/uvbench"
dir=$(mktemp -d)
chmod 755 "$dir"
trap 'set +e; any_path_nginx_stop; rm -rf "$dir"' EXIT
any_path_nginx_start "$dir"
url="$nginx_base/hello"

wrk_rate() {
  PIPELINE_DEPTH=$depth /usr/bin/wrk -t1 -c"$connections" -d"${seconds}s" -s "$here/pipeline.lua" "$url" \
    | awk '/^Requests\/sec:/ { print $2 }'
}
ours_rate() {  # connections, depth
  "$uvbench" --ours-only --url "$url" --connections "$1" --pipeline "$2" --seconds "$seconds" --warmup 1 \
    | awk '/req\/s/ { for (i = 1; i <= NF; i++) if ($(i + 1) == "req/s,") { print $i; exit } }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

wrk_runs=(); ours_runs=(); plain_runs=(); wide_runs=()
for round in $(seq "$rounds"); do
  w=$(wrk_rate); o=$(ours_rate "$connections" "$depth")
  p=$(ours_rate "$connections" 1); x=$(ours_rate $((connections * depth)) 1)
  printf 'round %d: wrk pipelined %s req/s, UVNetworking pipelined %s, not pipelined (%d in flight) %s, %d connections %s\n' \
    "$round" "$w" "$o" "$connections" "$p" $((connections * depth)) "$x"
  wrk_runs+=("$w"); ours_runs+=("$o"); plain_runs+=("$p"); wide_runs+=("$x")
done
w=$(printf '%s\n' "${wrk_runs[@]}" | median); o=$(printf '%s\n' "${ours_runs[@]}" | median)
p=$(printf '%s\n' "${plain_runs[@]}" | median); x=$(printf '%s\n' "${wide_runs[@]}" | median)
echo
echo "| $connections connections, $depth deep, ${seconds} s × $rounds | median req/s | over wrk |"
echo "|---|---:|---:|"
echo "| wrk -t1, pipeline.lua | $w | 1.00 |"
awk -v w="$w" -v o="$o" -v p="$p" -v x="$x" -v c="$connections" -v n=$((connections * depth)) 'BEGIN {
  printf "| UVNetworking, pipelined | %s | %.2f |\n", o, o / w
  printf "| UVNetworking, not pipelined, %d in flight | %s | %.2f |\n", c, p, p / w
  printf "| UVNetworking, not pipelined, %d connections | %s | %.2f |\n", n, x, x / w
}'
