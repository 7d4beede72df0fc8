#!/usr/bin/env bash
# Usage: Fuzz/coverage.sh [HARNESS...]
# How much of each parser the corpora reach: builds the harnesses again with source-based coverage
# (Fuzz/.build-coverage, no AddressSanitizer), runs each once over its seeds, its regressions and
# its working corpus (Fuzz/corpus-work/<name>, which `make fuzz` grows), and prints llvm-cov's
# figures for the files named in corpora/<name>/sources (paths from the repository's root): lines,
# regions and, where the compiler maps them, branches. The reports are left in Fuzz/.out/coverage/.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
swift=${SWIFT:-swift}
bin_dir=$(dirname "$(readlink -f "$(command -v "$swift")")")
llvm_cov=$bin_dir/llvm-cov
llvm_profdata=$bin_dir/llvm-profdata
[ -x "$llvm_cov" ] || llvm_cov=llvm-cov
[ -x "$llvm_profdata" ] || llvm_profdata=llvm-profdata
out=$here/.out/coverage
mkdir -p "$out"
toolset=$here/.out/toolset.json
printf '{"schemaVersion":"1.0","linker":{"path":"%s/ld.lld"}}\n' "$bin_dir" > "$toolset"
# SwiftPM keeps the plan of a build (description.json) and does not plan again when a file is
# added to or removed from the library, a path dependency here: the build would then miss it.
# Plan again when a source folder changed since the last plan.
description=$here/.build-coverage/release/description.json
if [ -f "$description" ] && [ -n "$(find "$here/../Sources" "$here/Sources" -type d -newer "$description" -print -quit)" ]; then
  rm -f "$description"
fi

names=("$@")
[ ${#names[@]} -gt 0 ] || mapfile -t names < <(bash "$here/harnesses.sh")
# SwiftPM keeps only the last --product of a command line: one build per harness named, or one
# build of everything when none is.
products=("$@")
[ ${#products[@]} -gt 0 ] || products=("")
: > "$out/build.log"
for product in "${products[@]}"; do
  if ! "$swift" build --package-path "$here" --build-path "$here/.build-coverage" -c release --toolset "$toolset" \
       -Xswiftc -sanitize=fuzzer -Xswiftc -profile-generate -Xswiftc -profile-coverage-mapping \
       -Xswiftc -enable-testing ${product:+--product "$product"} >> "$out/build.log" 2>&1; then
    grep -E 'error:' "$out/build.log" | head -20 >&2
    echo "coverage.sh: the build failed (whole output: $out/build.log)" >&2
    exit 1
  fi
done
bin=$here/.build-coverage/release
export SWIFT_BACKTRACE=enable=no

printf '%-20s %-58s %16s %16s %16s\n' harness file lines regions branches
for name in "${names[@]}"; do
  dirs=()
  for dir in "$here/corpus-work/$name" "$here/corpora/$name/seeds" "$here/regressions/$name"; do
    [ -d "$dir" ] && dirs+=("$dir")
  done
  rm -f "$out/$name".profraw*
  flags=()
  [ -f "$here/corpora/$name/flags" ] && mapfile -t flags < <(grep -v -E '^\s*(#|$)' "$here/corpora/$name/flags")
  LLVM_PROFILE_FILE="$out/$name.profraw" "$bin/$name" -runs=0 "${flags[@]}" "${dirs[@]}" > "$out/$name.run.log" 2>&1 || {
    echo "coverage.sh: $name failed on its corpus (see $out/$name.run.log)" >&2; exit 1; }
  "$llvm_profdata" merge -sparse "$out/$name.profraw" -o "$out/$name.profdata"
  sources=()
  if [ -f "$here/corpora/$name/sources" ]; then
    while read -r path; do [ -n "$path" ] && sources+=("$repo/$path"); done < <(grep -v -E '^\s*(#|$)' "$here/corpora/$name/sources")
  fi
  "$llvm_cov" report "$bin/$name" -instr-profile="$out/$name.profdata" "${sources[@]}" > "$out/$name.txt" 2>/dev/null
  # llvm-cov's columns: Filename, Regions, Missed, Cover, Functions, Missed, Cover, Lines, Missed,
  # Cover, Branches, Missed, Cover.
  awk -v name="$name" -v repo="$repo/" '
    $1 ~ /\.swift$/ || $1 == "TOTAL" {
      file = $1; sub(repo, "", file)
      printf "%-20s %-58s %7s of %-6s %7s of %-6s %7s of %-6s\n", name, file, $10, $8, $4, $2, ($13 == "-" ? "-" : $13), $11
    }' "$out/$name.txt"
done
