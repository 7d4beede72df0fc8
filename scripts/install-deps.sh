#!/usr/bin/env bash
# Installs what UVNetworking needs to build and test, skipping whatever is already there, so that
# running it twice costs nothing. llhttp has no -dev package on Debian bookworm: it is built here
# from the C sources that Debian's node-llhttp ships, in strict mode, into LLHTTP_PREFIX — never
# into this repository.
set -euo pipefail

LLHTTP_PREFIX=${LLHTTP_PREFIX:-/usr/local}
# valgrind (callgrind) and binutils (objcopy): the instructions per request of `make gates`.
# libnghttp2-dev: the HTTP/2 engine; nghttp2-server (nghttpd) and nghttp2-client (h2load): a
# second HTTP/2 server for the tests and the benchmarks' reference; python3-h2: the scripted
# HTTP/2 server of the fault tests. libbrotli-dev and libzstd-dev: the br and zstd content codings
# (the decoders for the library, brotli's encoder for the tests' fixtures).
# python3-protego: the robots.txt parser (Scrapy's) the robots.txt differential test compares
# ours with, run by Debian's /usr/bin/python3, which imports the distribution's packages.
# apache2 (mod_deflate), h2o and lighttpd (lighttpd-mod-deflate, which it only recommends): web
# servers nobody here wrote, which differ where ranges, content codings and validators meet, for
# the ForeignServers end-to-end tests (docs/conformance.md, "Foreign servers"). The tests start
# instances of their own on free loopback ports; the system services these packages bring are
# never started or enabled (below).
packages=(libuv1-dev libssl-dev libsqlite3-dev libc-ares-dev libnghttp2-dev libbrotli-dev libzstd-dev nghttp2-server nghttp2-client python3-h2 pkg-config ca-certificates zlib1g-dev nginx-light python3-httpbin tinyproxy tmux wrk curl dnsmasq-base iproute2 postgresql valgrind binutils python3-protego apache2 h2o lighttpd lighttpd-mod-deflate)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

# llhttp: prefer the system's (newer distributions ship libllhttp-dev); otherwise build it.
need_llhttp=0
pkg-config --exists libllhttp 2>/dev/null || need_llhttp=1
if [ "$need_llhttp" = 1 ] && [ ! -f /usr/share/llhttp/llhttp.c ]; then
  if apt-cache show libllhttp-dev >/dev/null 2>&1; then missing+=(libllhttp-dev); else missing+=(node-llhttp); fi
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  # The web servers' postinst scripts start them on port 80 (where nginx or another may already
  # be: h2o's then fails the whole install). invoke-rc.d asks /usr/sbin/policy-rc.d first, and
  # 101 forbids the start: one is put there for the install when the machine has none.
  servers=()
  for p in "${missing[@]}"; do
    case $p in apache2 | h2o | lighttpd) servers+=("$p") ;; esac
  done
  policy=/usr/sbin/policy-rc.d
  if [ ${#servers[@]} -gt 0 ] && [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | "${sudo_cmd[@]}" tee "$policy" >/dev/null
    "${sudo_cmd[@]}" chmod 755 "$policy"
    trap '"${sudo_cmd[@]}" rm -f "$policy"' EXIT
  fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if [ "$(trap -p EXIT)" != "" ]; then
    "${sudo_cmd[@]}" rm -f "$policy"
    trap - EXIT
  fi
  # Nor started at boot: the tests never use a system instance. update-rc.d disables the SysV
  # links and, where systemctl exists, the systemd unit too.
  for s in "${servers[@]}"; do
    for unit in "$s" $([ "$s" = apache2 ] && echo apache-htcacheclean); do
      if [ -x "/etc/init.d/$unit" ]; then "${sudo_cmd[@]}" update-rc.d "$unit" disable >/dev/null; fi
    done
  done
fi

# warcio (PyPI): the WARC reader the uvfetch --warc tests check archives with, one no one here
# wrote. Into the python3 first on PATH, whose `warcio` script the tests run; a distribution's
# own python refuses pip unless told it may (PEP 668).
if ! command -v warcio >/dev/null 2>&1 || ! python3 -c 'import warcio' >/dev/null 2>&1; then
  echo "install-deps: installing warcio (pip)"
  python3 -m pip install --quiet --disable-pip-version-check warcio 2>/dev/null ||
    python3 -m pip install --quiet --disable-pip-version-check --break-system-packages warcio
  # pyenv makes its shims on `pyenv rehash`, which `python3 -m pip` does not run.
  if command -v pyenv >/dev/null 2>&1; then pyenv rehash || true; fi
  hash -r
  command -v warcio >/dev/null 2>&1 || { echo "install-deps: warcio installed but not on PATH" >&2; exit 1; }
fi

# cdxj-indexer (PyPI, with the surt package it keys lines by): what pywb's users index WARC
# files with; the uvfetch --cdxj tests compare our index with its own for the same file. Pinned,
# as its output is what ours must equal.
cdxj_version=1.5.0
if [ "$(python3 -c 'import importlib.metadata as m; print(m.version("cdxj-indexer"))' 2>/dev/null)" != "$cdxj_version" ] ||
   ! command -v cdxj-indexer >/dev/null 2>&1; then
  echo "install-deps: installing cdxj-indexer $cdxj_version (pip)"
  python3 -m pip install --quiet --disable-pip-version-check "cdxj-indexer==$cdxj_version" 2>/dev/null ||
    python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "cdxj-indexer==$cdxj_version"
  if command -v pyenv >/dev/null 2>&1; then pyenv rehash || true; fi
  hash -r
  command -v cdxj-indexer >/dev/null 2>&1 || { echo "install-deps: cdxj-indexer installed but not on PATH" >&2; exit 1; }
fi

# h11 (PyPI): the HTTP/1.1 parser the differential tests compare our parsers with, one no one here
# wrote (Tests/UVHTTP1Tests/Differential/h11_outcome.py). Pinned: docs/fuzzing-differential-h11.md
# lists the disagreements with this version, and another may disagree differently.
h11_version=0.16.0
if [ "$(python3 -c 'import h11; print(h11.__version__)' 2>/dev/null)" != "$h11_version" ]; then
  echo "install-deps: installing h11 $h11_version (pip)"
  python3 -m pip install --quiet --disable-pip-version-check "h11==$h11_version" 2>/dev/null ||
    python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "h11==$h11_version"
  python3 -c 'import h11' || { echo "install-deps: h11 installed but not importable by python3" >&2; exit 1; }
fi

if pkg-config --exists libllhttp 2>/dev/null; then
  exit 0
fi

src=/usr/share/llhttp
hdr=/usr/share/include/llhttp/llhttp.h
[ -f "$src/llhttp.c" ] && [ -f "$hdr" ] || { echo "install-deps: no llhttp sources in $src" >&2; exit 1; }
version=$(awk '/define LLHTTP_VERSION_(MAJOR|MINOR|PATCH)/ {printf "%s%s", sep, $3; sep="."}' "$hdr")

build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
for f in api http llhttp; do
  cc -O2 -fPIC -DLLHTTP_STRICT_MODE=1 -I"$(dirname "$hdr")" -c "$src/$f.c" -o "$build/$f.o"
done
ar rcs "$build/libllhttp.a" "$build"/*.o

"${sudo_cmd[@]}" install -d "$LLHTTP_PREFIX/lib/pkgconfig" "$LLHTTP_PREFIX/include"
"${sudo_cmd[@]}" install -m 644 "$build/libllhttp.a" "$LLHTTP_PREFIX/lib/libllhttp.a"
"${sudo_cmd[@]}" install -m 644 "$hdr" "$LLHTTP_PREFIX/include/llhttp.h"
cat > "$build/libllhttp.pc" <<PC
prefix=$LLHTTP_PREFIX
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: libllhttp
Description: llhttp $version built from Debian's node-llhttp sources (strict mode)
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -lllhttp
PC
"${sudo_cmd[@]}" install -m 644 "$build/libllhttp.pc" "$LLHTTP_PREFIX/lib/pkgconfig/libllhttp.pc"
echo "install-deps: built llhttp $version (strict) into $LLHTTP_PREFIX"
