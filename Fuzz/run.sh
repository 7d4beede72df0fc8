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
# any did. Then a table (executions, executions per second, corpus size, result), and for each
# failure why, where, and its input in base64 with the command that replays it. The smoke uses a
# fixed seed (FUZZ_SEED, default 1; 0 is random); make fuzz a random one.
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
seed=()
if $smoke; then
  each=$(( seconds / ${#names[@]} ))
  [ "$each" -ge 1 ] || each=1
  # The smoke is a check that make test can repeat: one fixed seed, so that two runs walk the
  # same mutations (a faster machine only walks further). Exploring is make fuzz's job, with a
  # fresh seed each run. FUZZ_SEED=0 gives the smoke a random one too.
  seed=(-seed="${FUZZ_SEED:-1}")
fi

# What a failure leaves in a CI log: why (the invariant's message or the sanitizer's summary),
# the stack's first frames in our code, and the input itself in base64 with the command that
# replays it, since the machine that found it may be gone.
report() {
  local name=$1 status=$2 log=$3 input
  echo "== $name: $status"
  grep -E 'invariant violated|ERROR: |SUMMARY: |Fatal error|Assertion failed' "$log" | head -5
  grep -E '^ +#[0-9]+ .* in .*(Sources|Fuzz)/' "$log" | grep -v -E 'FuzzSupport|compiler-rt' | head -8
  input=$(ls "$out/$name"-crash-* "$out/$name"-leak-* "$out/$name"-timeout-* "$out/$name"-oom-* 2>/dev/null | head -1)
  if [ -n "$input" ] && [ "$(stat -c %s "$input")" -le 16384 ]; then
    echo "input ($(stat -c %s "$input") bytes), to replay:"
    echo "  base64 -d > /tmp/$name.input <<'EOF'"
    base64 -w 76 "$input" | sed 's/^/  /'
    echo "  EOF"
    echo "  bash Fuzz/build.sh $name && Fuzz/.build/release/$name /tmp/$name.input"
  fi
}

failed=()
summary=()
rm -f "$out/failures.txt"
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
      -artifact_prefix="$out/$name-" "${seed[@]}" "${dict[@]}" "${flags[@]}" "$work" "$corpus/seeds" >> "$log" 2>&1 \
      || status="FAILED (input: $(ls "$out/$name"-* 2>/dev/null | grep -v '\.log$' | head -1))"
  fi
  runs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log" | tail -1)
  rate=$(awk '/stat::average_exec_per_sec/ {print $2}' "$log" | tail -1)
  size=$(find "$work" -type f | wc -l)
  summary+=("$(printf '%-22s %12s %10s %8s  %s' "$name" "${runs:-?}" "${rate:-?}" "$size" "$status")")
  if [ "$status" != ok ]; then
    failed+=("$name")
    report "$name" "$status" "$log" >> "$out/failures.txt"
  fi
done

printf '%-22s %12s %10s %8s  %s\n' harness executions "per sec" corpus result
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  # After the table, so that a CI log's last lines hold what is needed to reproduce.
  cat "$out/failures.txt" >&2
  echo "run.sh: failed: ${failed[*]}" >&2
  exit 1
fi
