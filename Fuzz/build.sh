#!/usr/bin/env bash
# Builds the libFuzzer harness for the response decoder into Fuzz/.out/response-decoder.
#
# swiftc compiles the decoder's own source files together with the harness (SwiftPM executable
# targets rename `main`, which libFuzzer provides, so a script it is). llhttp comes from pkg-config
# (extend PKG_CONFIG_PATH to pick another build). When llhttp's C sources of the same version are
# at hand (LLHTTP_SRC, default /usr/share/llhttp from Debian's node-llhttp), they are compiled in
# with coverage instrumentation, so that the fuzzer is also guided by llhttp's own state machine;
# set LLHTTP_SRC= (empty) to link the installed library as it is.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
out=$here/.out
mkdir -p "$out"

swiftc=${SWIFTC:-swiftc}
clang=${CLANG:-$(dirname "$(command -v "$swiftc")")/clang}
pkg-config --exists libllhttp || { echo "build.sh: pkg-config cannot find libllhttp (run scripts/install-deps.sh)" >&2; exit 1; }
read -r -a cflags <<<"$(pkg-config --cflags libllhttp)"
read -r -a libs <<<"$(pkg-config --libs libllhttp)"
# lld when the toolchain has it: quieter and faster than gold with sanitizer objects.
linker=()
[ -x "$(dirname "$(command -v "$swiftc")")/ld.lld" ] && linker=(-use-ld=lld)
xcc=()
for flag in "${cflags[@]}"; do xcc+=(-Xcc "$flag"); done

decoder=$repo/Sources/UVHTTP1
sources=(
  "$decoder/ResponseHead.swift"
  "$decoder/HeadReplay.swift"
  "$decoder/ReceivedFields.swift"
  "$decoder/FieldSectionScanner.swift"
  "$decoder/ScratchList.swift"
  "$decoder/HTTP1ParseError.swift"
  "$decoder/ResponseParser.swift"
  "$decoder/ResponseParser+Callbacks.swift"
  "$decoder/ResponseParser+MessageReplay.swift"
  "$decoder/ChunkLineScanner.swift"
  "$decoder/HexDigit.swift"
  "$repo/Tests/UVHTTP1Tests/ResponseParserEvents.swift"
  "$here/ResponseDecoderFuzzer.swift"
)

# Instrumented llhttp objects, only when the sources match the installed version.
objects=()
src=${LLHTTP_SRC-/usr/share/llhttp}
if [ -n "$src" ] && [ -f "$src/llhttp.c" ] && [ -x "$clang" ]; then
  installed=$(pkg-config --modversion libllhttp)
  header_dir=
  for dir in "$src/../include/llhttp" "$src/include" "$src"; do
    [ -f "$dir/llhttp.h" ] && { header_dir=$dir; break; }
  done
  if [ -n "$header_dir" ]; then
    source_version=$(awk '/define LLHTTP_VERSION_(MAJOR|MINOR|PATCH)/ {printf "%s%s", sep, $3; sep="."}' "$header_dir/llhttp.h")
    if [ "$source_version" = "$installed" ]; then
      for f in api http llhttp; do
        "$clang" -O1 -g -fsanitize=fuzzer-no-link,address -DLLHTTP_STRICT_MODE=1 -I"$header_dir" \
          -c "$src/$f.c" -o "$out/llhttp-$f.o"
        objects+=("$out/llhttp-$f.o")
      done
      echo "build.sh: llhttp $installed compiled from $src with coverage"
    else
      echo "build.sh: llhttp sources are $source_version, installed is $installed: linking the installed library"
    fi
  fi
fi

"$swiftc" -sanitize=fuzzer,address -parse-as-library -O -swift-version 6 -D FUZZ_HARNESS \
  -module-name ResponseDecoderFuzz -package-name UVHTTP1Fuzz "${linker[@]}" \
  -I "$repo/Sources/CLLHTTP" "${xcc[@]}" \
  "${sources[@]}" "${objects[@]}" "${libs[@]}" \
  -o "$out/response-decoder"
echo "build.sh: built $out/response-decoder"
