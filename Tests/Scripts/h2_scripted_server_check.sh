#!/bin/bash
# Self-check of h2_scripted_server.py: every scenario against real clients.
#
#   bash Tests/Scripts/h2_scripted_server_check.sh [NAME...]   (default: all)
#
# Well-behaved scenarios are exercised and their outcome asserted with curl
# (--http2-prior-knowledge), nghttp (nghttp2's client) and
# h2_scripted_server_probe.py, a small h2 client for what curl 7.88 cannot do
# (it neither multiplexes nor reuses an h2c connection). Each hostile scenario
# gets one curl request (which must end, and fail where curl is strict) and one
# nghttp connection carrying /fault then /ok, whose reaction (GOAWAY or
# RST_STREAM and its error code, or nghttp2's own error) must be the one
# nghttp2 1.52 gives; afterwards the server must still be running, must
# answer /ok on a new connection, and its log must show no BUG.
#
# Needs: /usr/bin/python3 with python3-h2, curl, nghttp (nghttp2-client).
# Ends with "N passed, M failed"; exit status 1 if anything failed.

set -u
here=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
SERVER="$here/h2_scripted_server.py"
PROBE="$here/h2_scripted_server_probe.py"

for tool in curl nghttp "$PY"; do
  command -v "$tool" >/dev/null || { echo "needs $tool (apt-get install curl nghttp2-client python3-h2)"; exit 2; }
done
"$PY" -c 'import h2' 2>/dev/null || { echo "needs python3-h2 for $PY"; exit 2; }

work=$(mktemp -d /tmp/h2check.XXXXXX)
spid=
cleanup() {
  [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
started=$(date +%s)
passed=0 failed=0
only=("$@")

wanted() {  # wanted NAME: whether NAME was asked for (all when none was)
  [ ${#only[@]} -eq 0 ] && return 0
  local o; for o in "${only[@]}"; do [ "${1%%:*}" = "${o%%:*}" ] && return 0; done
  return 1
}

result() {  # result NAME OK DETAIL
  if [ "$2" = 0 ]; then
    passed=$((passed + 1)); printf 'ok    %-32s %s\n' "$1" "$3"
  else
    failed=$((failed + 1)); printf 'FAIL  %-32s %s\n' "$1" "$3"
    [ -n "${slog:-}" ] && [ -f "$slog" ] && sed 's/^/        server: /' "$slog" | tail -8
  fi
}

start() {  # start SCENARIO: sets port, spid, slog
  slog="$work/$(echo "$1" | tr ':/' '__').log"
  rm -f "$work/port"
  "$PY" "$SERVER" --port 0 --scenario "$1" --port-file "$work/port" >"$work/stdout" 2>"$slog" &
  spid=$!
  port=
  for _ in $(seq 400); do  # 20 s: a loaded machine starts python slowly
    port=$(sed -n 's/^PORT \([0-9]*\)$/\1/p' "$work/stdout")
    [ -n "$port" ] && [ -s "$work/port" ] && break
    sleep 0.05
  done
  if [ -z "$port" ] || [ "$(cat "$work/port" 2>/dev/null)" != "$port" ]; then
    result "$1" 1 "server did not announce its port: stdout '$(head -c 40 "$work/stdout")', --port-file '$(cat "$work/port" 2>/dev/null)'"
    kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; spid=
    return 1
  fi
}

stop() {  # stop: the server must have survived; then end it. Sets $why.
  local alive=0
  why=
  kill -0 "$spid" 2>/dev/null || alive=1
  kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; spid=
  if [ $alive != 0 ]; then why="-- server died"; return 1; fi
  if grep -q -E '^conn [0-9]+: BUG|Traceback' "$slog"; then why="-- server logged a BUG"; return 1; fi
  return 0
}

url() { echo "http://127.0.0.1:$port$1"; }

curl1() {  # curl1 PATH [ARGS...]: one request; body in $work/body, headers in $work/hdr, rc in $crc
  local path=$1; shift
  timeout 20 curl -sS --http2-prior-knowledge --max-time "${CURL_MAX_TIME:-10}" -D "$work/hdr" \
    -o "$work/body" "$@" "$(url "$path")" 2>"$work/curlerr"
  crc=$?
}

body_is() { [ "$(cat "$work/body" 2>/dev/null)" = "$1" ]; }

pattern_sha() {  # the sha256 of N bytes of PATTERN
  "$PY" -c 'import hashlib,sys
p=b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-\n"
n=int(sys.argv[1]); print(hashlib.sha256((p*(n//64+1))[:n]).hexdigest())' "$1"
}

nghttp_events() {  # nghttp_events ARGS...: nghttp -v output, each frame on one line, in $work/ng
  timeout 20 nghttp -nv --no-push -t "${NGHTTP_TIMEOUT:-5}" "$@" 2>&1 |
    awk '/^\[/ { if (line) print line; line = $0; next } { line = line " " $0 } END { if (line) print line }' \
    >"$work/ng"
}

nghttp_clean() {  # nghttp reported no error and reset nothing with an error code
  ! grep -E 'send (GOAWAY|RST_STREAM).*error_code=' "$work/ng" | grep -qv 'NO_ERROR' && ! grep -q 'ERROR\]' "$work/ng"
}

probe() {  # probe ARGS...: the probe's line in $probe_out, its status in $prc
  probe_out=$(timeout 90 "$PY" "$PROBE" "$port" "$@" 2>&1)
  prc=$?
}

# --- Well-behaved scenarios ----------------------------------------------------

check_list() {
  local n
  n=$("$PY" "$SERVER" --list | awk 'NF >= 3' | wc -l)
  [ "$n" -ge 35 ]; result "--list" $? "$n scenarios, each with its expected outcome"
}

check_ok() {
  start ok || return
  curl1 '/some/path?q=1'
  local ok=1
  [ $crc = 0 ] && body_is hello && grep -qi '^x-path: /some/path?q=1' "$work/hdr" && grep -q '^HTTP/2 200' "$work/hdr" && ok=0
  local d1="curl: 200 hello, x-path echoed"
  probe requests 20 5
  [ $ok = 0 ] && [ $prc = 0 ] && [[ $probe_out == *"on 1 connections"* ]] || ok=1
  stop || ok=1
  result ok $ok "$d1; $probe_out $why"
}

check_hold_until_goaway() {
  # curl never says GOAWAY while a request runs: its request is answered 504 after the wait.
  start hold-until-goaway:1 || return
  curl1 /held
  local ok=1
  [ $crc = 0 ] && grep -q '^HTTP/2 504' "$work/hdr" && body_is "no GOAWAY" && ok=0
  stop || ok=1
  result hold-until-goaway $ok "curl: 504 after 1 s without GOAWAY $why"
}

check_echo() {
  start echo || return
  head -c 3145728 /dev/urandom >"$work/up"
  curl1 /echo --data-binary @"$work/up"
  local ok=1
  [ $crc = 0 ] && cmp -s "$work/up" "$work/body" && grep -qi '^x-received: 3145728' "$work/hdr" && ok=0
  stop || ok=1
  result echo $ok "curl: 3 MiB upload echoed byte for byte $why"
}

check_echo_trickle() {
  start echo-trickle || return
  head -c 262144 /dev/urandom >"$work/up"
  local t0 t1; t0=$(date +%s%N)
  curl1 /echo --data-binary @"$work/up"
  t1=$(( ($(date +%s%N) - t0) / 1000000 ))
  local ok=1
  [ $crc = 0 ] && cmp -s "$work/up" "$work/body" && [ $t1 -ge 1000 ] && ok=0
  stop || ok=1
  result echo-trickle $ok "curl: 256 KiB echoed through 1 KiB grants in ${t1} ms $why"
}

check_big() {
  start big:5M || return
  curl1 /big
  local ok=1
  [ $crc = 0 ] && [ "$(sha256sum <"$work/body" | cut -d' ' -f1)" = "$(pattern_sha 5242880)" ] && ok=0
  stop || ok=1
  result big:5M $ok "curl: 5 MiB of the pattern $why"
  start big:1M || return
  probe stall 1048576
  stop || prc=1
  result big:1M $prc "$probe_out $why"
}

check_slow_headers() {
  start slow-headers || return
  local t0 t1; t0=$(date +%s%N)
  curl1 /slow
  t1=$(( ($(date +%s%N) - t0) / 1000000 ))
  local ok=1
  [ $crc = 0 ] && body_is hello && [ $t1 -ge 700 ] && ok=0
  stop || ok=1
  result slow-headers $ok "curl: 200 hello after ${t1} ms $why"
  start slow-headers:100 || return
  nghttp_events "$(url /a)" "$(url /b)" "$(url /c)"
  ok=1
  [ "$(grep -c ':status: 200' "$work/ng")" = 3 ] && nghttp_clean && ok=0
  stop || ok=1
  result slow-headers:100 $ok "nghttp: 3 streams, header blocks never interleaved $why"
}

check_probe() {  # check_probe SCENARIO EXTRA-TEST PROBE-ARGS...
  local scn=$1 extra=$2; shift 2
  start "$scn" || return
  probe "$@"
  local ok=$prc
  [ $ok = 0 ] && ! eval "$extra" && ok=1
  stop || ok=1
  result "$scn" $ok "$probe_out $why"
}

check_curl_body() {  # check_curl_body SCENARIO SHA-OR-TEXT DETAIL
  start "$1" || return
  curl1 /x
  local ok=1
  if [ ${#2} = 64 ]; then
    [ $crc = 0 ] && [ "$(sha256sum <"$work/body" | cut -d' ' -f1)" = "$2" ] && ok=0
  else
    [ $crc = 0 ] && body_is "$2" && ok=0
  fi
  stop || ok=1
  result "$1" $ok "$3 $why"
}

check_nghttp() {  # check_nghttp SCENARIO DETAIL GREP-PATTERN...: every pattern must match
  local scn=$1 detail=$2; shift 2
  start "$scn" || return
  curl1 /x
  local ok=0 pat
  [ $crc = 0 ] && body_is hello || ok=1
  nghttp_events "$(url /a)" "$(url /ok)"
  for pat in "$@"; do grep -q -E "$pat" "$work/ng" || { ok=1; detail="$detail; no /$pat/"; }; done
  stop || ok=1
  result "$scn" $ok "curl: 200 hello; nghttp: $detail $why"
}

# --- Hostile scenarios -----------------------------------------------------------
#
# hostile NAME CURL NGHTTP...
#   CURL: fail (curl must exit non-zero), any (if curl succeeds the body must be
#         "hello"), ends (curl only has to end).
#   NGHTTP: what nghttp's connection carrying /fault then /ok must show:
#     goaway:CODE     nghttp closes the connection with GOAWAY CODE
#     rst:CODE        nghttp resets the /fault stream (13) with CODE
#     recv-rst:CODE   the server reset stream 13 with CODE
#     recv-goaway:CODE  the server's GOAWAY carried CODE
#     ok-after        /ok (stream 15) got 200 on the same connection
#     both-200        nghttp took both responses (a lenient client)
#     error:TEXT      nghttp2 reported TEXT
#     ends            nghttp only has to end
#   and two markers: no-ok skips the /ok on a new connection, for scenarios that
#   fault every connection; short gives both clients 3 s, not 10 and 5.

hostile() {
  local scn=$1 want_curl=$2; shift 2
  local expects=("$@") ok=0 notes=() e
  local CURL_MAX_TIME=$CURL_MAX_TIME NGHTTP_TIMEOUT=$NGHTTP_TIMEOUT
  [[ " ${expects[*]} " == *" short "* ]] && CURL_MAX_TIME=3 NGHTTP_TIMEOUT=3
  start "$scn" || return
  curl1 /fault
  case $want_curl in
    fail) [ $crc != 0 ] || { ok=1; notes+=("curl succeeded"); } ;;
    any) [ $crc != 0 ] || body_is hello || { ok=1; notes+=("curl took a bad body"); } ;;
  esac
  [ $crc = 124 ] && { ok=1; notes+=("curl hung"); }
  local curl_note="curl rc=$crc"
  [ $crc != 0 ] && curl_note="curl: $(head -c 60 "$work/curlerr" | tr '\n' ' ' | sed 's/^curl: //')"
  nghttp_events "$(url /fault)" "$(url /ok)"
  local check_ok=1
  for e in "${expects[@]}"; do
    case $e in
      goaway:*) grep -q "send GOAWAY.*error_code=${e#goaway:}" "$work/ng" ;;
      rst:*) grep -q "send RST_STREAM.*stream_id=13>.*error_code=${e#rst:}" "$work/ng" ;;
      recv-rst:*) grep -q "recv RST_STREAM.*stream_id=13>.*error_code=${e#recv-rst:}" "$work/ng" ;;
      recv-goaway:*) grep -q "recv GOAWAY.*error_code=${e#recv-goaway:}" "$work/ng" ;;
      ok-after) grep -q 'recv (stream_id=15) :status: 200' "$work/ng" ;;
      both-200) [ "$(grep -c 'recv (stream_id=1[35]) :status: 200' "$work/ng")" = 2 ] ;;
      error:*) grep -q "ERROR.*${e#error:}" "$work/ng" ;;
      ends) true ;;
      no-ok) check_ok=0; true ;;
      short) true ;;
    esac || { ok=1; notes+=("nghttp: no $e"); }
  done
  if [ $check_ok = 1 ]; then
    curl1 /ok
    [ $crc = 0 ] && body_is hello || { ok=1; notes+=("no /ok on a new connection"); }
  fi
  stop || { ok=1; notes+=("$why"); }
  result "$scn" $ok "${expects[*]}; $curl_note${notes[*]:+ -- ${notes[*]}}"
}

run_all() {
  wanted list && check_list
  wanted ok && check_ok
  wanted echo && check_echo
  wanted echo-trickle && check_echo_trickle
  wanted big && check_big
  wanted slow-headers && check_slow_headers
  wanted hold-until-goaway && check_hold_until_goaway
  wanted max-streams && check_probe max-streams:2 \
    '[[ $probe_out == *"at most 2 open"* ]] && ! grep -q "over the acknowledged limit" "$slog"' requests 12 12
  wanted goaway-after && check_probe goaway-after:2 \
    'grep -q "GOAWAY last-stream-id 3 error 0" "$slog"' requests 7 3
  wanted goaway-random && check_probe goaway-random true requests 40 6
  wanted goaway-random && check_probe goaway-random:7 \
    'grep -q "in two steps" "$slog" && grep -q "at once" "$slog"' requests 40 6
  wanted refuse-every && check_probe refuse-every:3 '[[ $probe_out == *"retried 4 refused"* ]]' requests 10 1
  wanted close-without-goaway-after && check_probe close-without-goaway-after:2 \
    '[[ $probe_out != *" 0 after a close"* ]]' requests 7 3
  wanted tiny-data-frames && check_curl_body tiny-data-frames "$(pattern_sha 100000)" "curl: 100000 one-byte DATA frames"
  wanted informational && check_nghttp informational "100, 103, then 200" \
    'stream_id=13\) :status: 100' 'stream_id=13\) :status: 103' 'stream_id=13\) :status: 200'
  wanted trailers && check_nghttp trailers "trailers x-checksum, x-status" \
    'recv \(stream_id=13\) x-checksum: 5d41402a' 'recv HEADERS frame <[^>]*flags=0x05, stream_id=13>'
  wanted padding && check_nghttp padding "padded HEADERS and DATA" 'flags=0x2c, stream_id=13' 'stream_id=15\) :status: 200'
  wanted unknown-frames && check_nghttp unknown-frames "unknown frames ignored" 'stream_id=15\) :status: 200'
  if wanted early-response; then
    start early-response && {
      head -c 4194304 /dev/urandom >"$work/up"
      nghttp_events -d "$work/up" "$(url /a)" "$(url /ok)"
      local ok=1
      grep -q 'stream_id=13) :status: 200' "$work/ng" && grep -q 'recv RST_STREAM.*stream_id=13>.*NO_ERROR' "$work/ng" &&
        grep -q 'stream_id=15) :status: 200' "$work/ng" && nghttp_clean && ok=0
      CURL_MAX_TIME=5 curl1 /x --data-binary @"$work/up"
      stop || ok=1
      result early-response $ok "nghttp: 200 then RST_STREAM NO_ERROR mid-upload; connection kept (curl 7.88: rc=$crc) $why"
    }
  fi
  if wanted data-beyond-window; then
    hostile data-beyond-window ends both-200
    start data-beyond-window && { probe overrun; stop || prc=1; result data-beyond-window $prc "$probe_out $why"; }
  fi

  local h
  while read -r h; do
    [ -z "$h" ] || [ "${h:0:1}" = "#" ] && continue
    set -- $h
    wanted "$1" && hostile "$@"
  done <<'EOF'
continuation-flood            fail  error:Too.many.CONTINUATION
continuation-flood-empty      fail  error:Too.many.CONTINUATION
hpack-bomb                    fail  rst:INTERNAL_ERROR ok-after
header-list-64k               any   rst:INTERNAL_ERROR ok-after
hpack-bad-index               fail  goaway:COMPRESSION_ERROR
frame-inside-header-block     fail  goaway:PROTOCOL_ERROR
continuation-without-headers  fail  goaway:PROTOCOL_ERROR
headers-frame-too-large       fail  goaway:FRAME_SIZE_ERROR
missing-status                fail  rst:PROTOCOL_ERROR ok-after
uppercase-header              fail  rst:PROTOCOL_ERROR ok-after
connection-header             fail  rst:PROTOCOL_ERROR ok-after
transfer-encoding             fail  rst:PROTOCOL_ERROR ok-after
pseudo-after-regular          fail  rst:PROTOCOL_ERROR ok-after
request-pseudo-in-response    fail  rst:PROTOCOL_ERROR ok-after
duplicate-status              fail  rst:PROTOCOL_ERROR ok-after
empty-header-name             fail  rst:PROTOCOL_ERROR ok-after
header-value-newline          fail  rst:PROTOCOL_ERROR ok-after
content-length-less-data      fail  rst:PROTOCOL_ERROR ok-after
content-length-more-data      fail  rst:PROTOCOL_ERROR ok-after
informational-end-stream      fail  rst:PROTOCOL_ERROR ok-after
trailers-with-pseudo          fail  rst:PROTOCOL_ERROR ok-after
trailers-without-end-stream   fail  rst:PROTOCOL_ERROR ok-after
data-before-headers           fail  goaway:PROTOCOL_ERROR
data-on-stream-0              fail  goaway:PROTOCOL_ERROR
# nghttp2 forgets closed streams and ignores these (RFC 9113 §5.1 asks for STREAM_CLOSED)
data-after-end-stream         any   both-200
headers-on-closed-stream      any   both-200
rst-idle-stream               fail  goaway:PROTOCOL_ERROR
push-promise                  fail  goaway:PROTOCOL_ERROR
ping-bad-length               fail  goaway:FRAME_SIZE_ERROR
settings-bad-length           fail  goaway:FRAME_SIZE_ERROR
settings-enable-push          fail  goaway:PROTOCOL_ERROR no-ok
settings-initial-window-too-big fail goaway:FLOW_CONTROL_ERROR no-ok
data-frame-too-large          fail  goaway:FRAME_SIZE_ERROR
# curl 7.88 reports success with an empty body here; nghttp2 itself is right
bad-padding                   ends  goaway:PROTOCOL_ERROR
window-update-overflow        fail  goaway:FLOW_CONTROL_ERROR
window-update-overflow-stream fail  rst:FLOW_CONTROL_ERROR ok-after
window-update-zero            fail  goaway:PROTOCOL_ERROR
settings-flood                any   error:Flooding
ping-flood                    any   error:Flooding
rst-flood                     any   both-200
rst-every-request             fail  recv-rst:INTERNAL_ERROR ok-after
empty-data-flood              any   both-200
no-end-stream-then-close      fail  ends
goaway-error                  fail  recv-goaway:ENHANCE_YOUR_CALM
no-settings-silent            fail  ends no-ok short
no-settings-headers           fail  error:expected.SETTINGS no-ok
http1-server                  fail  error:expected.SETTINGS no-ok
EOF
}

CURL_MAX_TIME=10 NGHTTP_TIMEOUT=5
run_all
echo "h2_scripted_server_check: $(( $(date +%s) - started )) s"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
