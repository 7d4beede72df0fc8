#!/usr/bin/env bash
# Usage: scripts/files-a-get-crosses.sh [--list]
#
# How many of the library's source files one GET runs code in, from `SessionManager()` to the
# completion handler: the test OneGET (Tests/UVNetworkingTests/Session/OneGETTests.swift) run
# alone in a coverage build, its profile read with llvm-cov. It measures how far a newcomer has
# to follow a request, so it counts files, not lines. Two counts: every file of Sources/
# UVNetworking and Sources/UVHTTP1 with a line run, and the request's own path, that is
# Sources/UVNetworking less the layers every use of the library runs through (Loop/, the worker
# pool included; Security/, the default policy; Serialization/, the default serializers).
# --list names the files. The coverage build lives in .build/coverage, apart from the normal
# one. Not part of make test: it is a measure, kept in docs/architecture.md ("The path of one
# request").
set -euo pipefail
cd "$(dirname "$0")/.."
build=.build/coverage
# The toolchain's LLVM tools: the profile format is the Swift compiler's, which a distribution's
# llvm-profdata may not read.
tools=$(dirname "$(readlink -f "$(command -v swift)")")
swift build --build-tests --enable-code-coverage --build-path "$build" -q
bin=$build/debug/UVNetworkingPackageTests.xctest
profile=$build/one-get
rm -f "$profile".profraw "$profile".profdata
LLVM_PROFILE_FILE="$profile.profraw" "$bin" --testing-library swift-testing --filter 'OneGET' >"$profile.log" 2>&1 ||
  { cat "$profile.log"; exit 1; }
"$tools/llvm-profdata" merge -sparse "$profile.profraw" -o "$profile.profdata"
"$tools/llvm-cov" export -summary-only -instr-profile "$profile.profdata" "$bin" | python3 -c '
import json, os, sys
root = os.getcwd() + "/Sources/"
files = sorted(f["filename"][len(root):] for f in json.load(sys.stdin)["data"][0]["files"]
               if f["filename"].startswith(root + "UVNetworking/") or f["filename"].startswith(root + "UVHTTP1/")
               if f["summary"]["lines"]["covered"] > 0)
if "--list" in sys.argv:
    for name in files: print(name)
folders = {}
for name in files: folders.setdefault(os.path.dirname(name), 0); folders[os.path.dirname(name)] += 1
print(", ".join(f"{folder} {count}" for folder, count in sorted(folders.items())))
shared = ("UVNetworking/Loop/", "UVNetworking/Security/", "UVNetworking/Serialization/")
path = [name for name in files if name.startswith("UVNetworking/") and not name.startswith(shared)]
print(f"{len(files)} files in all; {len(path)} on the request path (UVNetworking less Loop, Security, Serialization)")
' "$@"
