#!/usr/bin/env bash
# Usage: Fuzz/build.sh [HARNESS...]
# Builds the libFuzzer harnesses (all of them by default) into Fuzz/.build/release/: SwiftPM, release
# with AddressSanitizer and libFuzzer's coverage, `-enable-testing` so that a harness may
# `@testable import` the library's internal parsers. The link uses the toolchain's lld: gold fails
# on the sanitizer runtime's objects. The compiler's output is in Fuzz/.out/build.log.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
swift=${SWIFT:-swift}
bin_dir=$(dirname "$(readlink -f "$(command -v "$swift")")")
mkdir -p "$here/.out"
toolset=$here/.out/toolset.json
printf '{"schemaVersion":"1.0","linker":{"path":"%s/ld.lld"}}\n' "$bin_dir" > "$toolset"
# SwiftPM keeps the plan of a build (description.json) and does not plan again when a file is
# added to or removed from the library, a path dependency here: the build would then miss it.
# Plan again when a source folder changed since the last plan.
description=$here/.build/release/description.json
if [ -f "$description" ] && [ -n "$(find "$here/../Sources" "$here/../Apps/Sources" "$here/Sources" -type d -newer "$description" -print -quit)" ]; then
  rm -f "$description"
fi

# SwiftPM keeps only the last --product of a command line, so one build per harness named (the
# library is compiled by the first and reused); none named: one build of everything.
products=("$@")
[ ${#products[@]} -gt 0 ] || products=("")
log=$here/.out/build.log
: > "$log"
for product in "${products[@]}"; do
  if ! "$swift" build --package-path "$here" -c release --toolset "$toolset" \
       -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing ${product:+--product "$product"} >> "$log" 2>&1; then
    grep -E 'error:' "$log" | head -40 >&2 || tail -40 "$log" >&2
    echo "build.sh: the build failed (whole output: $log)" >&2
    exit 1
  fi
done
echo "build.sh: built $(if [ $# -eq 0 ]; then bash "$here/harnesses.sh" | tr '\n' ' '; else echo "$@"; fi)"
