#!/usr/bin/env bash
# What `make test` runs once the documents' code blocks are checked: every build it needs and
# every test, arranged so that the two cores stay busy and the tests never wait for a compiler.
#
#   t=0      the library's package builds (its tests included), and beside it, in the idle
#            scheduling class, the builds with folders of their own: Apps/ (uvfetch, the example
#            service; swift-nio and postgres-nio make it the longest), the fuzz harnesses (Fuzz/)
#            and the gates' uvgate (Benchmarks/).
#   then     the library's tiers (scripts/run-tests.sh), with the DocC archives building beside
#            them, idle too (they need the library's package, so they wait for its build).
#   then     Apps' tiers, once Apps is built, with the fuzz smoke beside them (Fuzz/run.sh
#            --smoke: every seed and regression input replayed, then FUZZ_SMOKE_SECONDS of
#            fuzzing shared by the harnesses).
#   last     the gates (Benchmarks/gates.sh), alone: their allocation counts depend on how
#            completions batch, which a busy machine changes.
#
# Why the idle class (SCHED_IDLE, `chrt --idle 0`) and not `nice`: SwiftPM's build system starts
# its compilers at the default niceness whatever its own, so a niced build still takes its full
# share from the tests and from the library's build (seen: the library's build took 881 s instead
# of 219 s beside three niced builds). The scheduling class is inherited: an idle build only
# takes the CPU that nothing else wants. Where chrt cannot set it, the builds run as they are.
#
# Every build's output is in .build/test-logs (shown when it fails); the tiers' too. Exits
# non-zero when anything failed, after running everything it could.
set -uo pipefail
cd "$(dirname "$0")/.."

swift=${SWIFT:-swift}
logs=.build/test-logs
mkdir -p "$logs"
begin=$(date +%s)
# The idle class where it can be had.
if chrt --idle 0 true 2>/dev/null; then idle=(chrt --idle 0); else idle=(); fi
stamp() { printf 'make test: %4d s  %s\n' $(( $(date +%s) - begin )) "$*"; }
verdict() { [ "$1" = 0 ] && echo ok || echo FAILED; }

"${idle[@]}" "$swift" build --package-path Apps --build-tests > "$logs/apps-build.log" 2>&1 & apps_build=$!
"${idle[@]}" bash Fuzz/build.sh > "$logs/fuzz-build.log" 2>&1 & fuzz_build=$!
"${idle[@]}" "$swift" build --package-path Benchmarks -c release --product uvgate > "$logs/gates-build.log" 2>&1 & gates_build=$!
# A ^C or a CI timeout ends the builds too.
trap 'kill $apps_build $fuzz_build $gates_build ${docs:-} ${apps_tiers:-} ${smoke:-} 2>/dev/null' EXIT

if ! "$swift" build --build-tests; then
  stamp "the library's package did not build"
  exit 1
fi
stamp "the library's package built"

"${idle[@]}" "${MAKE:-make}" --no-print-directory docs > "$logs/docs.log" 2>&1 & docs=$!
TEST_PACKAGES="lib=$("$swift" build --show-bin-path)/UVNetworkingPackageTests.xctest" bash scripts/run-tests.sh
lib_tests=$?
stamp "the library's tiers: $(verdict $lib_tests)"

wait $apps_build; apps_build_status=$?
stamp "Apps built: $(verdict $apps_build_status)"
# Apps' tiers start at once; the fuzz smoke joins them when its build is done.
if [ $apps_build_status = 0 ]; then
  TEST_PACKAGES="apps=$("$swift" build --package-path Apps --show-bin-path)/UVNetworkingAppsPackageTests.xctest" \
    bash scripts/run-tests.sh & apps_tiers=$!
fi
wait $fuzz_build; fuzz_build_status=$?
[ $fuzz_build_status = 0 ] && { bash Fuzz/run.sh --smoke "${FUZZ_SMOKE_SECONDS:-30}" > "$logs/fuzz-smoke.log" 2>&1 & smoke=$!; }
apps_tests=1
if [ -n "${apps_tiers:-}" ]; then
  wait $apps_tiers; apps_tests=$?
  stamp "Apps' tiers: $(verdict $apps_tests)"
fi
smoke_status=1
if [ -n "${smoke:-}" ]; then wait $smoke; smoke_status=$?; fi
sed -n '/^harness/,$p' "$logs/fuzz-smoke.log" 2>/dev/null
stamp "fuzz smoke: $(verdict $smoke_status)"
wait $docs; docs_status=$?
wait $gates_build; gates_build_status=$?
gates_status=1
if [ $gates_build_status = 0 ]; then
  bash Benchmarks/gates.sh
  gates_status=$?
fi
stamp "gates: $(verdict $gates_status)"
trap - EXIT

for build in apps-build:$apps_build_status fuzz-build:$fuzz_build_status gates-build:$gates_build_status docs:$docs_status; do
  name=${build%%:*} status=${build#*:}
  [ "$status" = 0 ] && continue
  echo "== $name FAILED: the end of $logs/$name.log"
  tail -40 "$logs/$name.log"
done
[ $smoke_status = 0 ] || [ $fuzz_build_status != 0 ] || { echo "== the fuzz smoke FAILED: the end of $logs/fuzz-smoke.log"; tail -60 "$logs/fuzz-smoke.log"; }
stamp "builds: Apps $(verdict $apps_build_status), fuzz harnesses $(verdict $fuzz_build_status), uvgate $(verdict $gates_build_status), docs $(verdict $docs_status)"
[ $lib_tests = 0 ] && [ $apps_build_status = 0 ] && [ $apps_tests = 0 ] && [ $fuzz_build_status = 0 ] && [ $smoke_status = 0 ] \
  && [ $gates_build_status = 0 ] && [ $docs_status = 0 ] && [ $gates_status = 0 ]
