#!/usr/bin/env bash
# Usage: Fuzz/run.sh SECONDS
# Fuzzes the response decoder for SECONDS: builds the harness when it is missing or older than its
# sources, grows the working corpus Fuzz/corpus-work (gitignored) from Fuzz/seeds, and exits
# non-zero on a crash, an invariant violation, a leak or a timeout (the input is left in Fuzz/.out/).
set -euo pipefail

seconds=${1:?usage: Fuzz/run.sh SECONDS}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
binary=$here/.out/response-decoder

sources=("$here/ResponseDecoderFuzzer.swift" "$here/build.sh" "$repo/Tests/UVHTTP1Tests/ResponseParserEvents.swift" "$repo"/Sources/UVHTTP1/{ResponseHead,HeadReplay,ReceivedFields,FieldSectionScanner,ScratchList,HTTP1ParseError,ResponseParser,ResponseParser+Callbacks,ResponseParser+MessageReplay,ChunkLineScanner,HexDigit}.swift)
if [ ! -x "$binary" ] || [ -n "$(find "${sources[@]}" -newer "$binary" 2>/dev/null)" ]; then
  "$here/build.sh"
fi

# The Swift runtime's backtracer trips AddressSanitizer; libFuzzer prints the stack trace itself.
export SWIFT_BACKTRACE=${SWIFT_BACKTRACE:-enable=no}

corpus=$here/corpus-work
mkdir -p "$corpus"
# New inputs go to the first directory; the seeds are only read.
exec "$binary" \
  -max_total_time="$seconds" \
  -max_len=4096 \
  -timeout=10 \
  -dict="$here/http.dict" \
  -artifact_prefix="$here/.out/" \
  -print_final_stats=1 \
  "$corpus" "$here/seeds"
