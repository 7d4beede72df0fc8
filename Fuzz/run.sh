#!/usr/bin/env bash
# Usage: Fuzz/run.sh SECONDS [HARNESS...]          fuzz each harness for SECONDS  (make fuzz)
#        Fuzz/run.sh --smoke SECONDS [HARNESS...]  SECONDS in all, shared out     (make test)
#
# Builds the harnesses (Fuzz/build.sh), then for each one: replays every input of
# regressions/<name>/ and corpora/<name>/seeds/ once, and fuzzs from the seeds and the working
# corpus Fuzz/corpus-work/<name>/ (gitignored, grown from run to run) with the harness's
# dictionary and the libFuzzer flags in corpora/<name>/flags. A crash, an invariant violation, a
# leak or a timeout fails the harness: its input is left as Fuzz/.out/<name>-crash-... and its log
# as Fuzz/.out/<name>.log. Every harness runs even when one fails; the exit status is non-zero if
# any did. The last lines are a table: executions, executions per second, corpus size, result.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
smoke=false
if [ "${1-}" = --smoke ]; then smoke=true; shift; fi
seconds=${1:?usage: Fuzz/run.sh [--smoke] SECONDS [HARNESS...]}
shift
names=("$@")
[ ${#names[@]} -gt 0 ] || mapfile -t names < <(bash "$here/harnesses.sh")

# None named: one build of them all (build.sh builds named harnesses one by one).
bash "$here/build.sh" "$@" || exit 1
bin=$here/.build/release
out=$here/.out
mkdir -p "$out"
# The Swift runtime's backtracer trips AddressSanitizer; libFuzzer prints the stack itself.
export SWIFT_BACKTRACE=${SWIFT_BACKTRACE:-enable=no}

each=$seconds
if $smoke; then
  each=$(( seconds / ${#names[@]} ))
  [ "$each" -ge 1 ] || each=1
fi

failed=()
summary=()
for name in "${names[@]}"; do
  corpus=$here/corpora/$name
  work=$here/corpus-work/$name
  log=$out/$name.log
  mkdir -p "$work"
  flags=()
  [ -f "$corpus/flags" ] && mapfile -t flags < <(grep -v -E '^\s*(#|$)' "$corpus/flags")
  dict=()
  [ -f "$corpus/$name.dict" ] && dict=(-dict="$corpus/$name.dict")
  rm -f "$out/$name"-crash-* "$out/$name"-leak-* "$out/$name"-timeout-* "$out/$name"-oom-*

  # Every input that ever found a bug, and every seed, once each.
  replay=()
  for dir in "$here/regressions/$name" "$corpus/seeds"; do
    [ -d "$dir" ] && while IFS= read -r -d '' file; do replay+=("$file"); done < <(find "$dir" -type f -print0 | sort -z)
  done
  status=ok
  if [ ${#replay[@]} -gt 0 ] && ! "$bin/$name" "${flags[@]}" "${replay[@]}" > "$log" 2>&1; then
    status="FAILED on a regression or seed input"
  fi
  if [ "$status" = ok ]; then
    "$bin/$name" -max_total_time="$each" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$out/$name-" "${dict[@]}" "${flags[@]}" "$work" "$corpus/seeds" >> "$log" 2>&1 \
      || status="FAILED (input: $(ls "$out/$name"-* 2>/dev/null | grep -v '\.log$' | head -1))"
  fi
  runs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log" | tail -1)
  rate=$(awk '/stat::average_exec_per_sec/ {print $2}' "$log" | tail -1)
  size=$(find "$work" -type f | wc -l)
  summary+=("$(printf '%-22s %12s %10s %8s  %s' "$name" "${runs:-?}" "${rate:-?}" "$size" "$status")")
  if [ "$status" != ok ]; then
    failed+=("$name")
    echo "== $name: $status; the end of $log:" >&2
    tail -30 "$log" >&2
  fi
done

printf '%-22s %12s %10s %8s  %s\n' harness executions "per sec" corpus result
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "run.sh: failed: ${failed[*]}" >&2
  exit 1
fi
