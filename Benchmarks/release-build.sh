# Sourced by the benchmark scripts: `release_build PACKAGE_PATH LABEL [swift build arguments]`
# builds in release mode and prints the last line of the log. The sources may change while it
# builds (someone editing), so it tries once more in that case; other failures print the log.
release_build() {
  local package=$1 label=$2 log attempt
  shift 2
  for attempt in 1 2; do
    log=$(swift build --package-path "$package" -c release "$@" 2>&1) && { printf '%s\n' "$log" | tail -1; return 0; }
    if [ "$attempt" = 1 ] && grep -q "was modified during the build" <<<"$log"; then
      echo "$label: sources changed during the build; building again" >&2
      continue
    fi
    printf '%s\n' "$log" >&2
    return 1
  done
}

# The package that builds uvfetch in checkout $1: its Apps/ (the programs' package), or the
# checkout itself for a revision from before uvfetch had a package of its own.
uvfetch_package() {
  if [ -f "$1/Apps/Package.swift" ]; then echo "$1/Apps"; else echo "$1"; fi
}
