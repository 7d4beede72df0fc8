#!/usr/bin/env bash
# `make bench`: builds the benchmarks in release mode and runs them.
#   1. uvbench: wrk and UVNetworking take turns against a private nginx (12-byte body, 64 in flight),
#      then allocations per request, CPU per request and latency of UVNetworking; the heap an
#      idle connection holds; uvfetch --repeat and wrk taking turns on one URL.
#   2. uvbench over HTTPS (issue #4): wrk and UVNetworking over TLS (keep-alive), 1 GiB downloads
#      curl vs UVNetworking over HTTPS and HTTP, TLS handshakes per second with and without
#      session resumption. Its markdown is appended to the summary.
#   2b. HTTP/2 (issue #36, h2bench): h2load -t1 and the task API taking turns against a private
#      nghttpd, 1×64 and 4×32 connections×streams, over h2c and TLS; CPU per request beside our
#      HTTP/1.1; the heap of an idle HTTP/2 connection; 10,000 streams in sequence on one
#      connection. BENCH_SKIP_H2=1 skips it.
#   3. uvfetch against curl (issue #6, Benchmarks/uvfetch-vs-curl.sh): one list of 20,000 distinct
#      URLs fetched by uvfetch, `curl --parallel --parallel-max 64` and xargs-driven curl (-n 1 and
#      -n 300), 64 in flight, taking turns; its markdown is appended to the summary.
#   3b. Loops per core (issue #15, Benchmarks/loops.sh): uvfetch --loops 1 and 2 over 16 origins,
#      full TLS handshakes and keep-alive requests per second; BENCH_SKIP_LOOPS=1 skips it.
#   4. Many origins (issue #15, Benchmarks/many-origins.sh, as root): 100,000 URLs over 10,000 host
#      names answered by dnsmasq, nginx on 10,000 loopback addresses, in a namespace of its own;
#      uvfetch against `curl --parallel`, rate, CPU, peak RSS and descriptors.
#   5. Per-request costs (Benchmarks/profile.sh --callgrind): instructions per request under
#      callgrind, syscalls, futex calls and context switches per request (perf stat).
#   6. The ordo-one/benchmark suite: batches of 1,000 GETs (Benchmarks/Benchmarks/HTTPClient) and a
#      query string encoded (Benchmarks/Benchmarks/Serialization).
# Exits non-zero only when something really failed (build, nginx/wrk missing, a UVNetworking request
# that failed or returned the wrong response, a tool of step 3 that did not fetch its whole list
# with status 200, the ordo-one suite failing). Missing the 0.8x goal is printed as the verdict, not
# a failure.
#
# Settings (environment): BENCH_SECONDS (per round, default 5), BENCH_ROUNDS (default 3),
# BENCH_WARMUP (seconds, default 2), BENCH_MARKDOWN (where uvbench writes its markdown summary,
# default Benchmarks/.build/benchmarks.md), BENCH_SKIP_ORDO=1 skips the ordo-one suite,
# BENCH_SKIP_TLS=1 skips step 2, BENCH_DOWNLOAD_GIB (default 1, 0 skips the downloads),
# BENCH_DOWNLOAD_REPEATS (default 3), BENCH_HANDSHAKE_CONCURRENCY (default 16),
# BENCH_SKIP_UVFETCH=1 skips step 3, BENCH_SKIP_ORIGINS=1 skips step 4, BENCH_SKIP_PROFILE=1 skips step 5, BENCH_UVFETCH_URLS (its list, default 20000),
# BENCH_UVFETCH_XARGS_URLS (how many of them `xargs -n 1` gets, default 4000: a curl process per URL
# is slow). Step 3 uses BENCH_ROUNDS too.
# Extra arguments go to both uvbench runs (see `uvbench --help`).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
seconds=${BENCH_SECONDS:-5}
rounds=${BENCH_ROUNDS:-3}
warmup=${BENCH_WARMUP:-2}
markdown=${BENCH_MARKDOWN:-$here/.build/benchmarks.md}

for tool in /usr/sbin/nginx /usr/bin/wrk; do
  [ -x "$tool" ] || { echo "bench: $tool is missing (make deps installs nginx-light and wrk)" >&2; exit 1; }
done
if [ "${BENCH_SKIP_TLS:-0}" != 1 ]; then
  # openssl makes the HTTPS server's throwaway certificates; curl is the download reference.
  for tool in /usr/bin/openssl /usr/bin/curl; do
    [ -x "$tool" ] || { echo "bench: $tool is missing (apt-get install openssl curl, or BENCH_SKIP_TLS=1)" >&2; exit 1; }
  done
fi

source "$here/release-build.sh"
build() { release_build "$here" bench "$@"; }

echo "== bench: building uvbench (release)"
build --product uvbench || { echo "bench: build failed" >&2; exit 1; }
bin="$(swift build --package-path "$here" -c release --show-bin-path)/uvbench"
mkdir -p "$(dirname "$markdown")"

echo "== bench: building uvfetch (release)"
release_build "$(uvfetch_package "$repo")" bench --product uvfetch || { echo "bench: uvfetch build failed" >&2; exit 1; }
uvfetch_bin="$(swift build --package-path "$(uvfetch_package "$repo")" -c release --show-bin-path)/uvfetch"

echo "== bench: uvbench, wrk vs UVNetworking side by side (then idle memory, uvfetch vs wrk)"
status=0
(cd "$repo" && "$bin" --seconds "$seconds" --rounds "$rounds" --warmup "$warmup" --markdown "$markdown" --uvfetch "$uvfetch_bin" "$@")
uvbench_status=$?
case $uvbench_status in
  0) ;;
  2) echo "bench: uvbench: the UVNetworking run was INVALID (requests failed)" >&2; status=2 ;;
  *) echo "bench: uvbench failed (status $uvbench_status)" >&2; status=1 ;;
esac

if [ "${BENCH_SKIP_TLS:-0}" != 1 ]; then
  echo
  echo "== bench: uvbench over HTTPS: wrk vs UVNetworking, downloads vs curl, handshakes"
  tls_markdown="$markdown.tls"
  download_gib=${BENCH_DOWNLOAD_GIB:-1}
  (cd "$repo" && "$bin" --skip-plain --https --handshakes --download-gib "$download_gib" \
     --download-repeats "${BENCH_DOWNLOAD_REPEATS:-3}" --handshake-concurrency "${BENCH_HANDSHAKE_CONCURRENCY:-16}" \
     --seconds "$seconds" --rounds "$rounds" --warmup "$warmup" --markdown "$tls_markdown" "$@")
  tls_status=$?
  [ -f "$tls_markdown" ] && { printf '\n' >> "$markdown"; cat "$tls_markdown" >> "$markdown"; rm -f "$tls_markdown"; }
  case $tls_status in
    0) ;;
    2) echo "bench: uvbench over HTTPS: the run was INVALID (requests failed, or nginx's log contradicts the handshake figures)" >&2
       [ "$status" = 0 ] && status=2 ;;
    *) echo "bench: uvbench over HTTPS failed (status $tls_status)" >&2; [ "$status" = 0 ] && status=1 ;;
  esac
fi

if [ "${BENCH_SKIP_H2:-0}" != 1 ]; then
  echo
  echo "== bench: HTTP/2, h2load vs UVNetworking against nghttpd (h2c and TLS)"
  for tool in /usr/bin/h2load /usr/sbin/nghttpd; do
    [ -x "$tool" ] || { echo "bench: $tool is missing (make deps installs nghttp2-client and nghttp2-server)" >&2; exit 1; }
  done
  build --product h2bench || { echo "bench: h2bench build failed" >&2; exit 1; }
  h2_markdown="$markdown.h2"
  "$(dirname "$bin")/h2bench" --seconds "$seconds" --rounds "$rounds" --warmup "$warmup" --markdown "$h2_markdown"
  h2_status=$?
  [ -f "$h2_markdown" ] && { printf '\n' >> "$markdown"; cat "$h2_markdown" >> "$markdown"; rm -f "$h2_markdown"; }
  case $h2_status in
    0) ;;
    2) echo "bench: h2bench: the run was INVALID (requests failed)" >&2; [ "$status" = 0 ] && status=2 ;;
    *) echo "bench: h2bench failed (status $h2_status)" >&2; [ "$status" = 0 ] && status=1 ;;
  esac
fi

if [ "${BENCH_SKIP_UVFETCH:-0}" != 1 ]; then
  echo
  echo "== bench: uvfetch against curl, one list of distinct URLs"
  # It builds uvfetch itself (at the repository's root, not in Benchmarks/) and appends its
  # table to the same markdown summary.
  BENCH_ROUNDS="$rounds" BENCH_MARKDOWN="$markdown" bash "$here/uvfetch-vs-curl.sh"
  uvfetch_status=$?
  case $uvfetch_status in
    0) ;;
    2) echo "bench: uvfetch against curl: the run was INVALID (a tool did not fetch the whole list with status 200)" >&2
       [ "$status" = 0 ] && status=2 ;;
    *) echo "bench: uvfetch against curl failed (status $uvfetch_status)" >&2; [ "$status" = 0 ] && status=1 ;;
  esac
fi

if [ "${BENCH_SKIP_LOOPS:-0}" != 1 ]; then
  echo
  echo "== bench: loops per core, uvfetch --loops 1 and 2 (Benchmarks/loops.sh)"
  # uvfetch was built by step 3 unless it was skipped.
  skip_build=1
  [ "${BENCH_SKIP_UVFETCH:-0}" = 1 ] && skip_build=0
  if LOOPS_SKIP_BUILD=$skip_build LOOPS_ROUNDS="$rounds" bash "$here/loops.sh" | tee "$markdown.loops"; then
    { printf '\n### Loops per core: uvfetch --loops 1 and 2, 16 origins (Benchmarks/loops.sh)\n\n'
      grep -E '^(\||\(| the rate)' "$markdown.loops"; } >> "$markdown"
  else
    echo "bench: loops.sh failed" >&2
    [ "$status" = 0 ] && status=1
  fi
  rm -f "$markdown.loops"
fi

if [ "${BENCH_SKIP_ORIGINS:-0}" != 1 ]; then
  echo
  echo "== bench: many origins, uvfetch against curl over host names of a DNS server"
  if [ "$(id -u)" != 0 ]; then
    echo "bench: many origins skipped: it needs root for its network and mount namespace"
  else
    BENCH_ROUNDS="$rounds" BENCH_MARKDOWN="$markdown" bash "$here/many-origins.sh"
    origins_status=$?
    case $origins_status in
      0) ;;
      2) echo "bench: many origins: the run was INVALID (a tool did not fetch the whole list with status 200)" >&2
         [ "$status" = 0 ] && status=2 ;;
      *) echo "bench: many origins failed (status $origins_status)" >&2; [ "$status" = 0 ] && status=1 ;;
    esac
  fi
fi

if [ "${BENCH_SKIP_PROFILE:-0}" != 1 ]; then
  echo
  echo "== bench: per-request costs (callgrind instructions, syscalls, futex calls)"
  # Instruction counts do not depend on the machine's load; syscall counts hardly do.
  if PROFILE_MARKDOWN="$markdown.profile" bash "$here/profile.sh" --callgrind 3; then
    [ -f "$markdown.profile" ] && { printf '\n' >> "$markdown"; cat "$markdown.profile" >> "$markdown"; rm -f "$markdown.profile"; }
  else
    echo "bench: profile.sh failed" >&2
    [ "$status" = 0 ] && status=1
  fi
fi

if [ "${BENCH_SKIP_ORDO:-0}" != 1 ]; then
  echo
  echo "== bench: ordo-one/benchmark suite (HTTPClient, Serialization)"
  if ! (cd "$repo" && swift package --package-path "$here" benchmark --no-progress); then
    echo "bench: the ordo-one benchmark suite failed" >&2
    [ "$status" = 0 ] && status=1
  fi
fi

[ -f "$markdown" ] && echo "bench: markdown summary for docs/benchmarks.md: $markdown"
exit $status
