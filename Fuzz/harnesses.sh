#!/usr/bin/env bash
# Prints the harness names, one per line: every Fuzz/Sources/<name> with a main.swift.
here=$(cd "$(dirname "$0")" && pwd)
for main in "$here"/Sources/*/main.swift; do basename "$(dirname "$main")"; done
