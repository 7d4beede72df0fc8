#!/usr/bin/env bash
# Builds the harnesses the way OSS-Fuzz lays them out: each fuzzer in $OUT with its seed corpus
# ($OUT/<name>_seed_corpus.zip, the seeds and the regressions), its dictionary ($OUT/<name>.dict)
# and its options ($OUT/<name>.options: the dictionary and the flags of corpora/<name>/flags).
#
# Inside OSS-Fuzz's base-builder-swift image, `precompile_swift` sets SWIFTFLAGS for the chosen
# $SANITIZER and this script uses them; elsewhere it builds as Fuzz/build.sh does (AddressSanitizer)
# and writes to Fuzz/.out/oss-fuzz. libuv, OpenSSL and llhttp must be installed
# (scripts/install-deps.sh does it on Debian). docs/fuzzing.md has the rest.
set -euo pipefail

fuzz=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$fuzz/.out/oss-fuzz}
mkdir -p "$OUT"
swift=${SWIFT:-swift}
bin_dir=$(dirname "$(readlink -f "$(command -v "$swift")")")
toolset=$fuzz/.out/toolset.json
mkdir -p "$fuzz/.out"
printf '{"schemaVersion":"1.0","linker":{"path":"%s/ld.lld"}}\n' "$bin_dir" > "$toolset"

read -r -a flags <<<"${SWIFTFLAGS:--Xswiftc -sanitize=fuzzer,address}"
"$swift" build --package-path "$fuzz" -c release --toolset "$toolset" \
  "${flags[@]}" -Xswiftc -enable-testing
bin=$fuzz/.build/release

for name in $(bash "$fuzz/harnesses.sh"); do
  cp "$bin/$name" "$OUT/$name"
  corpus=$fuzz/corpora/$name
  rm -f "$OUT/${name}_seed_corpus.zip"
  (cd "$corpus/seeds" && zip -q -j "$OUT/${name}_seed_corpus.zip" ./*)
  [ -d "$fuzz/regressions/$name" ] && (cd "$fuzz/regressions/$name" && zip -q -j "$OUT/${name}_seed_corpus.zip" ./*)
  {
    echo "[libfuzzer]"
    [ -f "$corpus/$name.dict" ] && { cp "$corpus/$name.dict" "$OUT/$name.dict"; echo "dict = $name.dict"; }
    if [ -f "$corpus/flags" ]; then
      grep -v -E '^\s*(#|$)' "$corpus/flags" | sed -E 's/^-([a-z_]+)=(.*)$/\1 = \2/'
    fi
  } > "$OUT/$name.options"
done
echo "oss-fuzz/build.sh: fuzzers, seed corpora, dictionaries and options in $OUT"
