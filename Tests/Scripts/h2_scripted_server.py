#!/usr/bin/python3
"""A scripted, sometimes hostile, HTTP/2 server for testing an HTTP/2 client.

    h2_scripted_server.py --port 0 --scenario NAME[:ARG] [--port-file PATH]
    h2_scripted_server.py --list

It listens on 127.0.0.1 for cleartext HTTP/2 with prior knowledge (h2c: the
client sends the connection preface at once, RFC 9113 §3.3), prints
"PORT <n>" on stdout (and writes the number to --port-file), and serves every
connection that arrives, each in a thread of its own, until it is killed.
One scenario per server process.

Well-behaved scenarios treat every request alike. Hostile scenarios apply
their fault to every request except those whose path starts with "/ok",
which get the plain `ok` answer: a test sends "/fault" and then "/ok" to
see whether the connection is still usable (the response header x-conn
names the connection, numbered from 1 in the order they were accepted).
Scenarios that misbehave before any request (a bad preface) fault every
connection. Where a stream error is expected, a connection error is also
correct (§5.4.1: an endpoint may treat any stream error as a connection
error), but then the connection is of course not usable afterwards.

`--list` prints each scenario with what a correct client does. Each
scenario is a small function below; its docstring's first line is that
expected outcome, the rest says what it sends and which rule of RFC 9113
applies. The well-behaved parts go through h2's H2Connection (Debian's
python3-h2, 4.1); the faults are frames written by hand, since h2 refuses
to produce them.

Logs go to stderr, one line per event worth knowing ("conn 3: ...").
A line "conn N: BUG: ..." means this server failed, not the client.
"""

import argparse
import heapq
import os
import random
import select
import socket
import struct
import sys
import threading
import time
import traceback

try:
    import h2.config
    import h2.connection
    import h2.events
    import h2.exceptions
    import h2.settings
    import h2.stream
except ImportError:
    sys.exit("h2_scripted_server.py needs python3-h2 for /usr/bin/python3 "
             "(apt-get install python3-h2)")

# --- Wire constants (RFC 9113 §6, §7, §11) -----------------------------------

DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, \
    WINDOW_UPDATE, CONTINUATION = range(10)

END_STREAM = 0x1        # DATA, HEADERS
ACK = 0x1               # SETTINGS, PING
END_HEADERS = 0x4       # HEADERS, PUSH_PROMISE, CONTINUATION
PADDED = 0x8            # DATA, HEADERS, PUSH_PROMISE
PRIORITY_FLAG = 0x20    # HEADERS

NO_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR, FLOW_CONTROL_ERROR, \
    SETTINGS_TIMEOUT, STREAM_CLOSED, FRAME_SIZE_ERROR, REFUSED_STREAM, CANCEL, \
    COMPRESSION_ERROR, CONNECT_ERROR, ENHANCE_YOUR_CALM = range(12)

HEADER_TABLE_SIZE, ENABLE_PUSH, MAX_CONCURRENT_STREAMS, INITIAL_WINDOW_SIZE, \
    MAX_FRAME_SIZE, MAX_HEADER_LIST_SIZE = range(1, 7)

MAX_WINDOW = 2**31 - 1

# Bodies of big:N and tiny-data-frames repeat this 64-byte line.
PATTERN = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-\n"

SEND_TIMEOUT = 30  # seconds a write may block before the connection is dropped


def frame(kind, flags, stream_id, payload=b""):
    """One frame: 24-bit length, type, flags, 31-bit stream id (§4.1)."""
    return (struct.pack(">I", len(payload))[1:] + bytes([kind, flags])
            + struct.pack(">I", stream_id & MAX_WINDOW) + payload)


def settings_payload(values):
    return b"".join(struct.pack(">HI", k, v) for k, v in values.items())


def hpack_int(value, prefix_bits, high_bits=0):
    """An HPACK integer with an N-bit prefix (RFC 7541 §5.1)."""
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([high_bits | value])
    out = [high_bits | limit]
    value -= limit
    while value >= 128:
        out.append(128 | (value & 127))
        value >>= 7
    out.append(value)
    return bytes(out)


def hpack_literal(name, value):
    """A literal field without indexing, new name, no Huffman (RFC 7541
    §6.2.2): it leaves both dynamic tables alone, so these blocks can be
    mixed with h2's own on one connection."""
    return (b"\x00" + hpack_int(len(name), 7) + name
            + hpack_int(len(value), 7) + value)


def field_block(fields):
    return b"".join(hpack_literal(n, v) for n, v in fields)


def b(value):
    return value if isinstance(value, bytes) else str(value).encode()


def parse_size(text):
    """"5000", "64K", "10M", "1G" -> bytes."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    if text and text[-1] in units:
        return int(text[:-1]) * units[text[-1]]
    return int(text)


class PatternBody:
    """N bytes of PATTERN, produced as they are sent."""

    def __init__(self, length):
        self.length = length

    def read(self, offset, size):
        start = offset % len(PATTERN)
        reps = (start + size) // len(PATTERN) + 1
        return (PATTERN * reps)[start:start + size]


class BytesBody:
    def __init__(self, data):
        self.data = bytes(data)
        self.length = len(self.data)

    def read(self, offset, size):
        return self.data[offset:offset + size]


# --- Plumbing -----------------------------------------------------------------

class Closed(Exception):
    """The connection is over: the client left, or the scenario is done."""


class ClientViolation(Exception):
    """h2 rejected what the client sent (it has queued a GOAWAY)."""


class LenientH2(h2.connection.H2Connection):
    """h2 4.1 treats a HEADERS frame beyond SETTINGS_MAX_CONCURRENT_STREAMS
    as a connection error (TooManyStreamsError), where RFC 9113 §5.1.2 asks
    for a stream error. Conn enforces the limit itself, with RST_STREAM
    REFUSED_STREAM, and only once the client has acknowledged it (§6.5.3),
    so h2's own check is turned off here."""

    @property
    def open_inbound_streams(self):
        super().open_inbound_streams  # h2 prunes closed streams here
        return 0

    @property
    def real_open_inbound_streams(self):
        return super().open_inbound_streams

    def _receive_goaway_frame(self, frame):
        """h2 4.1 moves to CLOSED on any GOAWAY and then refuses to send, even
        the responses to streams the client still waits for (§6.8 lets them
        finish). After a GOAWAY without error, stay open for those."""
        frames, events = super()._receive_goaway_frame(frame)
        if frame.error_code == NO_ERROR:
            self.state_machine.state = \
                h2.connection.ConnectionState.SERVER_OPEN
        return frames, events


class Request:
    def __init__(self, stream_id, headers):
        self.sid = stream_id
        self.headers = headers
        fields = dict(headers)
        self.method = fields.get(b":method", b"")
        self.path = fields.get(b":path", b"")
        self.body = bytearray()
        self.ended = False      # the client sent END_STREAM
        self.done = False       # answered, reset, or given up
        self.ignored = False    # refused or above a GOAWAY: never processed


class Outgoing:
    """A response body waiting for flow-control window."""

    def __init__(self, body, chunk, pad, trailers, on_done):
        self.body, self.offset = body, 0
        self.chunk, self.pad = chunk, pad
        self.trailers, self.on_done = trailers, on_done


class Server:
    def __init__(self, scenario, arg):
        self.scenario, self.arg = scenario, arg
        self.lock = threading.Lock()
        self.connections = 0
        self.counters = {}

    def count(self, name):
        """A counter shared by every connection of this server."""
        with self.lock:
            self.counters[name] = self.counters.get(name, 0) + 1
            return self.counters[name]

    def accept_forever(self, listener):
        while True:
            sock, _ = listener.accept()
            with self.lock:
                self.connections += 1
                number = self.connections
            conn = Conn(self, sock, number)
            threading.Thread(target=conn.run, daemon=True,
                             name="conn-%d" % number).start()


class Conn:
    """One client connection: an h2 state machine, a socket, timers.

    A scenario function gets a Conn and drives it, usually through
    serve(). Responses go through h2 (respond) or as raw frames
    (raw_headers, raw_data, send_raw); a stream answered by hand is then
    dropped from h2's books with forget()."""

    def __init__(self, server, sock, number):
        self.server, self.sock, self.number = server, sock, number
        sock.settimeout(SEND_TIMEOUT)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        config = h2.config.H2Configuration(client_side=False,
                                           header_encoding=None)
        self.h2 = LenientH2(config=config)
        self.requests = {}
        self.pending = {}
        self.timers = []
        self.timer_seq = 0
        self.settings_unacked = []   # what each SETTINGS we sent carried
        self.stream_limit = None     # acknowledged MAX_CONCURRENT_STREAMS
        self.goaway_last = None      # last-stream-id of our GOAWAY, if sent
        self.close_when_answered = False
        self.hold = False            # a header block is open: h2 must wait
        self.ack_data = True
        self.client_settings = {}
        self.responses_done = 0
        self.on_headers = self.on_request = None
        self.on_ping_ack = None
        self.on_client_goaway = None

    # Logging and the life of the connection.

    def log(self, fmt, *args):
        sys.stderr.write("conn %d: %s\n" % (self.number, fmt % args))
        sys.stderr.flush()

    def run(self):
        try:
            self.server.scenario(self, self.server.arg)
            self.log("scenario finished")
        except Closed as e:
            self.log("%s", e)
        except ClientViolation as e:
            self.log("client broke the protocol: %s; sent GOAWAY", e)
        except h2.exceptions.ProtocolError as e:
            self.log("BUG: h2 refused what this server did: %r", e)
            traceback.print_exc()
        except OSError as e:
            self.log("socket: %s", e)
        except Exception:
            self.log("BUG: scenario crashed")
            traceback.print_exc()
        finally:
            self.linger_close()

    def linger_close(self):
        """FIN, then read until the client closes (at most 2 s), so that our
        last frames are not lost to a TCP reset."""
        try:
            self.flush()
            self.sock.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + 2
            while time.monotonic() < deadline:
                ready, _, _ = select.select([self.sock], [], [], 0.2)
                if ready and not self.sock.recv(65536):
                    break
        except (OSError, h2.exceptions.ProtocolError):
            pass
        self.sock.close()

    # Writing.

    def flush(self, force=False):
        """Write what h2 has queued, unless a hand-made header block is open
        (no other frame may come between HEADERS and its last CONTINUATION,
        §6.10)."""
        if self.hold and not force:
            return
        data = self.h2.data_to_send()
        if data:
            self.sock.sendall(data)

    def send_raw(self, data):
        self.flush()
        self.sock.sendall(data)

    def raw_frame(self, kind, flags, stream_id, payload=b""):
        self.send_raw(frame(kind, flags, stream_id, payload))

    def raw_settings(self, values):
        self.settings_unacked.append(dict(values))
        self.raw_frame(SETTINGS, 0, 0, settings_payload(values))

    def raw_headers(self, sid, fields, end_stream=False, flags=0):
        """A header block written by hand, split into HEADERS + CONTINUATION
        at the client's SETTINGS_MAX_FRAME_SIZE. `fields` is a list of
        (name, value) pairs or an already encoded block."""
        block = fields if isinstance(fields, bytes) else field_block(
            [(b(n), b(v)) for n, v in fields])
        # A table-size change the client asked for must open the next block
        # (RFC 7541 §4.2); h2's encoder emits it for an empty list.
        block = self.h2.encoder.encode([]) + block
        size = self.h2.max_outbound_frame_size
        first, rest = block[:size], block[size:]
        flags |= END_STREAM if end_stream else 0
        flags |= 0 if rest else END_HEADERS
        out = [frame(HEADERS, flags, sid, first)]
        while rest:
            piece, rest = rest[:size], rest[size:]
            out.append(frame(CONTINUATION, 0 if rest else END_HEADERS, sid,
                             piece))
        self.send_raw(b"".join(out))
        if end_stream:
            self.forget(sid)

    def raw_data(self, sid, data, end_stream=False, flags=0):
        """DATA by hand; h2's send windows are charged so that later
        responses through h2 still respect the client's windows."""
        self.h2.outbound_flow_control_window -= len(data)
        stream = self.h2.streams.get(sid)
        if stream is not None:
            stream.outbound_flow_control_window -= len(data)
        self.raw_frame(DATA, flags | (END_STREAM if end_stream else 0), sid,
                       data)
        if end_stream:
            self.forget(sid)

    def raw_response(self, sid, fields, body=b"", end_stream=True):
        self.raw_headers(sid, fields, end_stream=not body and end_stream)
        if body:
            self.raw_data(sid, body, end_stream=end_stream)

    def forget(self, sid):
        """Drop a stream answered by hand from h2's books, as if h2 had reset
        it: later frames on it are then answered or ignored, not fatal."""
        if self.h2.streams.pop(sid, None) is not None:
            self.h2._closed_streams[sid] = \
                h2.stream.StreamClosedBy.SEND_RST_STREAM
        self.pending.pop(sid, None)
        self.mark_done(sid)

    def goaway(self, last_stream_id, error_code=NO_ERROR, debug=b""):
        """GOAWAY by hand: h2's close_connection() moves h2 to CLOSED, after
        which it will not send the responses that GOAWAY promises (§6.8)."""
        self.goaway_last = last_stream_id
        self.log("GOAWAY last-stream-id %d error %d", last_stream_id,
                 error_code)
        self.raw_frame(GOAWAY, 0, 0, struct.pack(">II", last_stream_id,
                                                 error_code) + debug)

    def update_settings(self, values):
        self.settings_unacked.append(dict(values))
        self.h2.update_settings(values)
        self.flush()

    def start(self, settings=None):
        """Send the server preface: h2's SETTINGS frame (§3.4)."""
        if settings:
            values = dict(self.h2.local_settings.items())
            values.update(settings)
            self.h2.local_settings = h2.settings.Settings(
                client=False, initial_values=values)
        self.settings_unacked.append(dict(self.h2.local_settings.items()))
        self.h2.initiate_connection()
        self.flush()

    # Responses through h2.

    def alive(self, sid):
        stream = self.h2.streams.get(sid)
        return stream is not None and not stream.closed

    def respond(self, req, status=200, headers=(), body=b"", trailers=None,
                chunk=None, pad=None, on_done=None):
        """Send a response through h2; the body goes out as the client's
        windows allow (§6.9.1)."""
        sid = req.sid if isinstance(req, Request) else req
        if not self.alive(sid):
            return
        if isinstance(body, (bytes, bytearray)):
            body = BytesBody(body)
        fields = [(b":status", b(status))] + [(b(n), b(v)) for n, v in headers]
        if body.length == 0 and trailers is None:
            self.h2.send_headers(sid, fields, end_stream=True)
            self.response_done(sid, on_done)
            return
        self.h2.send_headers(sid, fields)
        self.pending[sid] = Outgoing(body, chunk, pad, trailers, on_done)
        self.drain()

    def ok_fields(self, req, length=5):
        return [("content-type", "text/plain"), ("content-length", length),
                ("x-path", req.path), ("x-conn", self.number),
                ("x-stream", req.sid)]

    def respond_ok(self, req, on_done=None):
        """200 "hello"; x-path echoes the request's :path."""
        self.respond(req, 200, self.ok_fields(req), b"hello", on_done=on_done)

    def drain(self):
        frames = 0
        for sid in list(self.pending):
            out = self.pending[sid]
            while True:
                remaining = out.body.length - out.offset
                if remaining == 0:  # the trailers' turn
                    del self.pending[sid]
                    self.h2.send_headers(sid, [(b(n), b(v)) for n, v in
                                               out.trailers], end_stream=True)
                    self.response_done(sid, out.on_done)
                    break
                overhead = 0 if out.pad is None else out.pad + 1
                size = min(remaining,
                           self.h2.local_flow_control_window(sid) - overhead,
                           self.h2.max_outbound_frame_size - overhead,
                           out.chunk or remaining)
                if size <= 0:
                    break  # wait for WINDOW_UPDATE
                out.offset += size
                last = out.offset == out.body.length and out.trailers is None
                self.h2.send_data(sid, out.body.read(out.offset - size, size),
                                  end_stream=last, pad_length=out.pad)
                if last:
                    del self.pending[sid]
                    self.response_done(sid, out.on_done)
                    break
                frames += 1
                if frames % 256 == 0:
                    self.flush()
        self.flush()

    def response_done(self, sid, on_done=None):
        self.responses_done += 1
        self.mark_done(sid)
        if on_done:
            on_done()

    def mark_done(self, sid):
        req = self.requests.get(sid)
        if req:
            req.done = True

    # Timers and the event loop.

    def after(self, seconds, fn):
        self.timer_seq += 1
        heapq.heappush(self.timers, (time.monotonic() + seconds,
                                     self.timer_seq, fn))

    def serve(self, on_request=None, on_headers=None, settings=None,
              start=True):
        """Run the connection: the preface, then events until it ends.
        on_headers(req) runs when a request's HEADERS arrive, on_request(req)
        when its END_STREAM does."""
        self.on_request, self.on_headers = on_request, on_headers
        if start:
            self.start(settings)
        while True:
            self.step()

    def serve_fault(self, fault, when="end"):
        """serve(), with fault(req) for every request except paths starting
        with /ok, which get respond_ok. The fault comes when the request's
        END_STREAM arrives, or with when="headers" as soon as its HEADERS
        do."""
        def at_end(req):
            if req.path.startswith(b"/ok"):
                self.respond_ok(req)
            elif when == "end":
                fault(req)

        def at_headers(req):
            if when == "headers" and not req.path.startswith(b"/ok"):
                fault(req)

        self.serve(on_request=at_end, on_headers=at_headers)

    def step(self, timeout=None):
        if self.timers:
            due = max(0.0, self.timers[0][0] - time.monotonic())
            timeout = due if timeout is None else min(timeout, due)
        ready, _, _ = select.select([self.sock], [], [], timeout)
        if ready:
            data = self.sock.recv(65536)
            if not data:
                raise Closed("client closed the connection")
            self.feed(data)
        while self.timers and self.timers[0][0] <= time.monotonic():
            heapq.heappop(self.timers)[2]()
        self.flush()
        if self.close_when_answered and self.goaway_last is not None and all(
                r.done or r.ignored for s, r in self.requests.items()
                if s <= self.goaway_last):
            raise Closed("every stream up to %d answered; closing"
                         % self.goaway_last)

    def feed(self, data):
        try:
            events = self.h2.receive_data(data)
        except h2.exceptions.ProtocolError as e:
            self.flush(force=True)
            raise ClientViolation(repr(e))
        for event in events:
            if isinstance(event, h2.events.ConnectionTerminated):
                self.client_goaway(event)
        for event in events:
            self.dispatch(event)

    def client_goaway(self, ev):
        """The client sent GOAWAY: without error, answer the streams already
        open, then close (see LenientH2); with an error, close now."""
        what = "client sent GOAWAY (error %d, last-stream-id %s, debug %r)" % (
            int(ev.error_code), ev.last_stream_id, ev.additional_data)
        if ev.error_code != NO_ERROR:
            raise Closed(what)
        self.log("%s; finishing the streams already open", what)
        self.close_when_answered = True
        if self.goaway_last is None:
            self.goaway_last = MAX_WINDOW
        if self.on_client_goaway:
            self.on_client_goaway(ev)

    def dispatch(self, ev):
        E = h2.events
        if isinstance(ev, E.RequestReceived):
            req = Request(ev.stream_id, ev.headers)
            self.requests[req.sid] = req
            if self.goaway_last is not None and req.sid > self.goaway_last:
                req.ignored = True
                self.log("stream %d is above GOAWAY's last-stream-id %d; "
                         "not processed", req.sid, self.goaway_last)
                return
            open_streams = self.h2.real_open_inbound_streams
            if self.stream_limit is not None and open_streams > self.stream_limit:
                req.ignored = True
                self.log("client opened stream %d with %d open, over the "
                         "acknowledged limit %d: REFUSED_STREAM", req.sid,
                         open_streams, self.stream_limit)
                self.h2.reset_stream(req.sid, REFUSED_STREAM)
                return
            req.open_streams = open_streams
            if self.on_headers:
                self.on_headers(req)
        elif isinstance(ev, E.DataReceived):
            req = self.requests.get(ev.stream_id)
            if req and not req.ignored:
                req.body += ev.data
            if self.ack_data:
                self.h2.acknowledge_received_data(ev.flow_controlled_length,
                                                  ev.stream_id)
        elif isinstance(ev, E.StreamEnded):
            req = self.requests.get(ev.stream_id)
            if req and not req.ended:
                req.ended = True
                if not req.ignored and not req.done and self.on_request:
                    self.on_request(req)
        elif isinstance(ev, E.StreamReset):
            self.pending.pop(ev.stream_id, None)
            self.mark_done(ev.stream_id)
            self.log("client reset stream %d (error %d)", ev.stream_id,
                     ev.error_code)
        elif isinstance(ev, E.RemoteSettingsChanged):
            changed = {int(k): v.new_value
                       for k, v in ev.changed_settings.items()}
            self.client_settings.update(changed)
            self.log("client settings %s", changed)
            self.drain()
        elif isinstance(ev, E.WindowUpdated):
            self.drain()
        elif isinstance(ev, E.SettingsAcknowledged):
            acked = self.settings_unacked.pop(0) if self.settings_unacked else {}
            if MAX_CONCURRENT_STREAMS in acked:
                self.stream_limit = acked[MAX_CONCURRENT_STREAMS]
        elif isinstance(ev, E.PingAckReceived):
            if self.on_ping_ack:
                self.on_ping_ack(ev.ping_data)

    # Reading without h2, for scenarios that never speak HTTP/2 properly.

    def read_client_frames(self):
        """Yield (type, flags, stream id, payload) of the client's frames,
        after its preface, parsed by hand."""
        buf = b""
        preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
        while True:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise Closed("client closed the connection")
            buf += chunk
            if preface is not None:
                if len(buf) < len(preface):
                    continue
                if not buf.startswith(preface):
                    raise Closed("client sent no HTTP/2 preface: %r" % buf[:24])
                buf, preface = buf[len(preface):], None
            while len(buf) >= 9:
                length = int.from_bytes(buf[:3], "big")
                if len(buf) < 9 + length:
                    break
                kind, flags = buf[3], buf[4]
                sid = int.from_bytes(buf[5:9], "big") & MAX_WINDOW
                yield kind, flags, sid, buf[9:9 + length]
                buf = buf[9 + length:]

    def first_request_stream(self):
        for kind, _, sid, _ in self.read_client_frames():
            if kind == HEADERS:
                return sid

    def read_and_discard(self):
        while True:
            ready, _, _ = select.select([self.sock], [], [], 1)
            if ready and not self.sock.recv(65536):
                raise Closed("client closed the connection")


def flood(conn, data, count, seconds=None):
    """Write `data` `count` times (or for `seconds`) without reading."""
    batch = data * max(1, 65536 // len(data))
    per_batch = len(batch) // len(data)
    sent, deadline = 0, seconds and time.monotonic() + seconds
    conn.flush()
    while (count is None or sent < count) and (
            not deadline or time.monotonic() < deadline):
        n = per_batch if count is None else min(per_batch, count - sent)
        conn.sock.sendall(batch if n == per_batch else data * n)
        sent += n
    conn.log("flood: wrote %d frames", sent)


# --- Well-behaved scenarios ---------------------------------------------------

def ok(c, arg):
    """200 "hello" for every request, header x-path = the request's :path; the connection stays usable.

    Sends the preface SETTINGS, then per request HEADERS (:status 200,
    content-length 5, x-path, x-conn, x-stream) and DATA "hello" with
    END_STREAM (RFC 9113 §8.1)."""
    c.serve(c.respond_ok)


def echo(c, arg):
    """200 whose body is the request body byte for byte (x-received = its length); uploads of any size complete.

    Acknowledges each DATA frame as it arrives, so the stream and connection
    windows reopen (WINDOW_UPDATE, §6.9); a client that sends beyond a window
    gets GOAWAY FLOW_CONTROL_ERROR from h2 (§6.9.1). Answers at END_STREAM,
    sending within the client's windows."""
    c.serve(lambda req: c.respond(req, 200, [
        ("content-length", len(req.body)), ("x-received", len(req.body)),
        ("x-conn", c.number)], req.body))


def echo_trickle(c, arg):
    """Like echo, but the upload is starved: the client must wait at a zero window and resume on each WINDOW_UPDATE; 200 with the body echoed.

    Never acknowledges data as it arrives: once the client has spent the
    initial 65,535-byte windows (§6.9.2), grants 1 KiB to the stream and to
    the connection every 10 ms. A client sending beyond a window gets GOAWAY
    FLOW_CONTROL_ERROR (§6.9.1)."""
    c.ack_data = False

    def grant():
        for req in c.requests.values():
            if not req.ended and not req.ignored and c.alive(req.sid):
                c.h2.increment_flow_control_window(1024, req.sid)
                c.h2.increment_flow_control_window(1024)
        c.after(0.01, grant)

    c.after(0.01, grant)
    echo(c, arg)


def big(c, arg):
    """200 with N bytes of body (PATTERN, a 64-byte line, repeated; N may end in K, M or G); a client that stops reading one stream stalls only that stream.

    Sends DATA only within the client's stream and connection windows and
    at most SETTINGS_MAX_FRAME_SIZE per frame (§4.2, §5.2, §6.9.1); a
    stream whose window is spent waits for its WINDOW_UPDATE while the
    other streams go on."""
    n = parse_size(arg)
    c.serve(lambda req: c.respond(req, 200, [
        ("content-length", n), ("x-conn", c.number)], PatternBody(n)))


def slow_headers(c, arg):
    """200 "hello" after about 3 x MS milliseconds (default 250): a client whose response-header timeout is shorter fails with a timeout, otherwise it succeeds; the connection stays usable.

    Waits MS, sends HEADERS without END_HEADERS (:status only), then two
    CONTINUATION frames MS apart, the last with END_HEADERS (§6.2, §6.10),
    then DATA "hello". Nothing else is sent on the connection while the
    header block is open (§6.10), so other streams wait too."""
    ms = int(arg or 250) / 1000

    def respond(req):
        fields = field_block([(b(n), b(v)) for n, v in c.ok_fields(req)])
        status = hpack_literal(b":status", b"200")
        half = len(fields) // 2

        def piece(i):
            if i == 0 and c.hold:  # another stream's block is open: wait
                c.after(0.01, lambda: piece(0))
                return
            if i == 0:
                c.raw_frame(HEADERS, 0, req.sid, status)
                c.hold = True
            elif i == 1:
                c.raw_frame(CONTINUATION, 0, req.sid, fields[:half])
            else:
                c.raw_frame(CONTINUATION, END_HEADERS, req.sid, fields[half:])
                c.hold = False
                c.raw_data(req.sid, b"hello", end_stream=True)
                return
            c.after(ms, lambda: piece(i + 1))

        c.after(ms, lambda: piece(0))

    c.serve(respond)


def hold_until_goaway(c, arg):
    """Every request gets 200 "hello", but only once the client has said GOAWAY (NO_ERROR): a client that drains gracefully on shutdown gets every answer; after SECONDS (default 10) with no GOAWAY, 504 instead.

    Holds each request when its END_STREAM arrives. The client's GOAWAY
    (RFC 9113 §6.8: it opens no new stream) releases them all; the
    connection then closes once they are answered."""
    limit = float(arg or 10)
    held = []

    def release(ev):
        while held:
            c.respond_ok(held.pop(0))

    def hold(req):
        c.log("holding stream %d until the client's GOAWAY", req.sid)
        held.append(req)

        def late():
            if req in held:
                held.remove(req)
                c.respond(req, 504, [("content-length", 9)], b"no GOAWAY")
        c.after(limit, late)

    c.on_client_goaway = release
    c.serve(hold)


def max_streams(c, arg):
    """Every request gets 200 "hello" (after 100 ms); none is refused, because the client keeps within the limit in force: N, then 1 from the N-th response, then N again from the 2N-th.

    Advertises SETTINGS_MAX_CONCURRENT_STREAMS=N in its preface (§6.5.2)
    and changes it with SETTINGS frames mid-connection; a new limit binds
    once the client has acknowledged it (§6.5.3). A stream over the
    acknowledged limit gets RST_STREAM REFUSED_STREAM (§5.1.2) and a log
    line. Headers: x-open-streams (open when it arrived), x-stream-limit."""
    n = int(arg)

    def done():
        if c.responses_done == n:
            c.update_settings({MAX_CONCURRENT_STREAMS: 1})
        elif c.responses_done == 2 * n:
            c.update_settings({MAX_CONCURRENT_STREAMS: n})

    def respond(req):
        fields = c.ok_fields(req) + [("x-open-streams", req.open_streams),
                                     ("x-stream-limit", c.stream_limit)]
        c.after(0.1, lambda: c.respond(req, 200, fields, b"hello",
                                       on_done=done))

    c.serve(respond, settings={MAX_CONCURRENT_STREAMS: n})


def goaway_after(c, arg):
    """The first N requests on each connection get 200 "hello"; later ones were not processed, and the client retries them on a new connection (§6.8), so every request succeeds; no new stream goes to a connection after its GOAWAY.

    When the N-th request's HEADERS arrive, sends GOAWAY (NO_ERROR,
    last-stream-id = that stream), answers every stream up to it, then
    closes. Streams above last-stream-id are never answered."""
    n = int(arg)
    c.close_when_answered = True

    def headers(req):
        if len(c.requests) == n:
            c.goaway(req.sid)

    c.serve(c.respond_ok, on_headers=headers)


def goaway_random(c, arg):
    """Every request eventually gets 200 "hello": the client retries the streams each GOAWAY left unprocessed on a new connection (§6.8), and never loses or duplicates a processed one.

    Seeded by SEED (default 1) and the connection's number: processes K
    requests (0-5), then either sends GOAWAY naming the last processed
    stream, or shuts down gracefully in two steps (GOAWAY 2^31-1, PING,
    and on its ACK a GOAWAY naming the highest stream received by then,
    §6.8). Responses come after random delays (0-30 ms), so they finish
    out of order; every stream at or below last-stream-id is answered
    before the connection closes."""
    rng = random.Random("%s:%d" % (arg or 1, c.number))
    k = rng.randint(0, 5)
    two_step = rng.random() < 0.5
    c.close_when_answered = True
    c.log("goaway-random: GOAWAY after %d request(s), %s", k,
          "in two steps" if two_step else "at once")

    def shut_down():
        if two_step:
            c.goaway(MAX_WINDOW)
            c.goaway_last = None  # promises nothing yet: streams still come
            c.h2.ping(b"goaway!!")
            c.flush()
        else:
            c.goaway(max([0] + list(c.requests)))

    def ping_ack(data):
        if data == b"goaway!!":
            c.goaway(max([0] + list(c.requests)))

    def headers(req):
        if len(c.requests) == k:
            shut_down()

    def respond(req):
        c.after(rng.random() * 0.03, lambda: c.respond_ok(req))

    c.on_ping_ack = ping_ack
    c.start()
    if k == 0:
        shut_down()
    c.serve(respond, on_headers=headers, start=False)


def refuse_every(c, arg):
    """Every N-th request (counted over all connections) fails with RST_STREAM REFUSED_STREAM, which it may safely retry (§8.7); the others get 200 "hello"; the connection stays usable.

    The refused stream is reset as soon as its HEADERS arrive and is never
    processed (§5.4.2, §8.7)."""
    n = int(arg)

    def headers(req):
        if c.server.count("requests") % n == 0:
            req.ignored = True
            c.log("refusing stream %d", req.sid)
            c.h2.reset_stream(req.sid, REFUSED_STREAM)

    c.serve(c.respond_ok, on_headers=headers)


def close_without_goaway_after(c, arg):
    """The first N requests on each connection get 200 "hello"; then the TCP connection closes with no GOAWAY: requests in flight on it fail (a client may retry only those it knows are safe to repeat), and new ones go to a new connection.

    After the N-th response is written, the server shuts the socket down
    without GOAWAY (§5.4.1 asks for one; this server is rude)."""
    n = int(arg)

    def done():
        if c.responses_done == n:
            c.flush()
            raise Closed("closing without GOAWAY after %d responses" % n)

    c.serve(lambda req: c.respond_ok(req, on_done=done))


def tiny_data_frames(c, arg):
    """200 with N bytes (default 100000) of PATTERN, each byte in a DATA frame of its own; the client gets the whole body intact.

    Legal but wasteful framing (§6.1); the client must keep granting
    window (§6.9) and should not take one-byte frames for an attack."""
    n = parse_size(arg or "100000")
    c.serve(lambda req: c.respond(req, 200, [("content-length", n)],
                                  PatternBody(n), chunk=1))


def informational(c, arg):
    """200 "hello", after a 100 (Continue) and a 103 (Early Hints) that the client skips or reports; the connection stays usable.

    Each 1xx is a HEADERS frame without END_STREAM before the final
    response (§8.1; RFC 9110 §15.2: a client must parse 1xx responses it
    did not expect)."""
    def respond(req):
        c.h2.send_headers(req.sid, [(b":status", b"100")])
        c.h2.send_headers(req.sid, [(b":status", b"103"),
                                    (b"link", b"</style.css>; rel=preload")])
        c.respond_ok(req)

    c.serve(respond)


def trailers(c, arg):
    """200 "hello" with trailer fields x-checksum and x-status after the body; the connection stays usable.

    HEADERS (declaring `trailer: x-checksum, x-status`), DATA "hello", then
    a HEADERS frame with END_STREAM carrying the trailers (§8.1)."""
    c.serve(lambda req: c.respond(req, 200, c.ok_fields(req) + [
        ("trailer", "x-checksum, x-status")], b"hello",
        trailers=[("x-checksum", "5d41402a"), ("x-status", "complete")]))


def padding(c, arg):
    """200 "hello": the client strips the padding of HEADERS and DATA frames; the connection stays usable.

    HEADERS with PADDED and PRIORITY flags (§6.2), then DATA "hello" with
    100 bytes of padding and END_STREAM (§6.1); padding counts against the
    flow-control windows (§6.9)."""
    def respond(req):
        block = c.h2.encoder.encode([]) + field_block(
            [(b":status", b"200")] + [(b(n), b(v)) for n, v in c.ok_fields(req)])
        payload = bytes([20]) + struct.pack(">IB", 0, 15) + block + bytes(20)
        c.raw_frame(HEADERS, PADDED | PRIORITY_FLAG | END_HEADERS, req.sid,
                    payload)
        c.raw_data(req.sid, bytes([100]) + b"hello" + bytes(100),
                   end_stream=True, flags=PADDED)

    c.serve(respond)


def unknown_frames(c, arg):
    """200 "hello": the client ignores frames of unknown type, unknown settings, unknown flags and PRIORITY frames; the connection stays usable.

    Before the response: an unknown frame type 0xfa on stream 0 and on the
    request's stream (§4.1, §5.5), a SETTINGS frame with unknown identifier
    0x0f0f (§6.5.2) and a PRIORITY frame (§5.3.2, §6.3). The HEADERS and
    DATA frames carry unused flags 0x02, 0x10, 0x40 (§4.1)."""
    def respond(req):
        c.raw_frame(0xfa, 0xff, 0, b"unknown extension frame")
        c.raw_frame(0xfa, 0, req.sid, b"")
        c.raw_settings({0x0f0f: 12345})
        c.raw_frame(PRIORITY, 0, req.sid, struct.pack(">IB", 0, 200))
        c.raw_headers(req.sid, [(":status", 200)] + c.ok_fields(req),
                      flags=0x02 | 0x10 | 0x40)
        c.raw_data(req.sid, b"hello", end_stream=True, flags=0x02 | 0x40)

    c.serve(respond)


def early_response(c, arg):
    """200 "hello" before the request body is all sent, then RST_STREAM NO_ERROR: the client stops uploading and reports the 200 as a success; the connection stays usable.

    Answers as soon as the request's HEADERS arrive; if the client is still
    sending, resets the stream with NO_ERROR (§8.1: a server may ask the
    client to stop sending a request it no longer needs)."""
    def headers(req):
        c.respond_ok(req)
        if c.alive(req.sid):  # the client is still sending
            c.h2.reset_stream(req.sid, NO_ERROR)

    c.serve(on_headers=headers)


# --- Hostile scenarios: header blocks -----------------------------------------

def continuation_flood(c, arg):
    """The request fails and the client closes the connection (GOAWAY, ideally ENHANCE_YOUR_CALM or PROTOCOL_ERROR) once the header block passes its limit, with bounded memory; no response.

    HEADERS without END_HEADERS, then CONTINUATION frames of 16 KiB, each
    full of 1 KiB literal fields, for SECONDS (default 30) or until the
    client goes. A header block may not be interrupted (§6.10), so the
    client can only bound it and give up (§10.5, §10.5.1)."""
    def fault(req):
        field = hpack_literal(b"x-flood", b"f" * 1000)
        payload = field * (c.h2.max_outbound_frame_size // len(field))
        c.raw_frame(HEADERS, 0, req.sid, hpack_literal(b":status", b"200"))
        flood(c, frame(CONTINUATION, 0, req.sid, payload), None,
              int(arg or 30))
        raise Closed("continuation flood over")

    c.serve_fault(fault)


def continuation_flood_empty(c, arg):
    """The request fails and the client closes the connection (GOAWAY) once it has seen too many CONTINUATION frames; it must count frames, since these add nothing to the header list.

    HEADERS without END_HEADERS, then empty CONTINUATION frames (9 bytes
    each) for SECONDS (default 30) or until the client goes (§6.10, §10.5)."""
    def fault(req):
        c.raw_frame(HEADERS, 0, req.sid, hpack_literal(b":status", b"200"))
        flood(c, frame(CONTINUATION, 0, req.sid), None, int(arg or 30))
        raise Closed("continuation flood over")

    c.serve_fault(fault)


def hpack_bomb(c, arg):
    """The request fails because its decoded header list is far over the client's limit (tens of MB from a 16 KB block); the client closes the connection (COMPRESSION_ERROR or ENHANCE_YOUR_CALM) or, having decoded the whole block, keeps it usable.

    Inserts a ~4000-byte field into the client's dynamic table (literal with
    incremental indexing, through h2's encoder so the tables stay in step),
    then refers to it REFS times (default 16000, one byte each) in the same
    block, then DATA "hello". §10.5.1: the decoded size is what counts."""
    refs = int(arg or 16000)

    def fault(req):
        table = c.h2.remote_settings.header_table_size
        size = max(1, min(4000, table - 32 - len(b"x-bomb")))
        block = c.h2.encoder.encode([(b":status", b"200"),
                                     (b"x-bomb", b"B" * size)])
        c.log("hpack-bomb: %d references to a %d-byte value", refs, size)
        c.raw_headers(req.sid, block + bytes([0x80 | 62]) * refs)
        c.raw_data(req.sid, b"hello", end_stream=True)

    c.serve_fault(fault)


def header_list_64k(c, arg):
    """With a header-list limit of 64 KiB or less (the usual), the request fails (stream error) and the connection stays usable: the block was decoded in full (§10.5.1).

    A response whose decoded header list is about 74 KiB: 72 literal fields
    of 1000 bytes in HEADERS + CONTINUATION, then DATA "hello". The client's
    advertised SETTINGS_MAX_HEADER_LIST_SIZE is logged (§6.5.2)."""
    def fault(req):
        c.log("client's MAX_HEADER_LIST_SIZE: %s",
              c.client_settings.get(MAX_HEADER_LIST_SIZE, "not sent"))
        fields = [(":status", 200)] + [("x-big-%02d" % i, "h" * 1000)
                                       for i in range(72)]
        c.raw_response(req.sid, fields, b"hello")

    c.serve_fault(fault)


def hpack_bad_index(c, arg):
    """The request fails and the client closes the connection with COMPRESSION_ERROR: the header block refers to a dynamic-table entry that does not exist.

    HEADERS whose block is :status 200 then an indexed field, index 4000
    (RFC 7541 §2.3.3; RFC 9113 §4.3: a decoding error is a connection
    error of type COMPRESSION_ERROR)."""
    def fault(req):
        c.raw_frame(HEADERS, END_HEADERS | END_STREAM, req.sid,
                    b"\x88" + hpack_int(4000, 7, 0x80))
        c.forget(req.sid)

    c.serve_fault(fault)


def frame_inside_header_block(c, arg):
    """The request fails and the client closes the connection with PROTOCOL_ERROR: a PING came between HEADERS and its CONTINUATION.

    HEADERS without END_HEADERS, a PING, then the CONTINUATION with
    END_HEADERS (§6.10: any other frame there is a connection error
    PROTOCOL_ERROR; §4.3)."""
    def fault(req):
        fields = field_block([(b(n), b(v)) for n, v in c.ok_fields(req)])
        c.raw_frame(HEADERS, 0, req.sid, hpack_literal(b":status", b"200"))
        c.raw_frame(PING, 0, 0, b"in-block")
        c.raw_frame(CONTINUATION, END_HEADERS, req.sid, fields)
        c.raw_data(req.sid, b"hello", end_stream=True)

    c.serve_fault(fault)


def continuation_without_headers(c, arg):
    """The request fails and the client closes the connection with PROTOCOL_ERROR: a CONTINUATION frame came with no HEADERS before it.

    CONTINUATION with END_HEADERS on the request's stream as the first
    frame of the response (§6.10)."""
    def fault(req):
        c.raw_frame(CONTINUATION, END_HEADERS, req.sid,
                    hpack_literal(b":status", b"200"))
        c.raw_data(req.sid, b"hello", end_stream=True)

    c.serve_fault(fault)


def headers_frame_too_large(c, arg):
    """The request fails and the client closes the connection with FRAME_SIZE_ERROR: a HEADERS frame is larger than its SETTINGS_MAX_FRAME_SIZE.

    One HEADERS frame of max-frame-size + 1 bytes (§4.2: a frame that
    carries a field block and is too large is a connection error)."""
    def fault(req):
        want = c.h2.max_outbound_frame_size + 1
        status = hpack_literal(b":status", b"200")
        filler = want - len(status)
        while len(status + hpack_literal(b"x-filler", b"x" * filler)) > want:
            filler -= 1
        block = status + hpack_literal(b"x-filler", b"x" * filler)
        assert len(block) == want, len(block)
        c.raw_frame(HEADERS, END_HEADERS, req.sid, block)
        c.raw_data(req.sid, b"hello", end_stream=True)

    c.serve_fault(fault)


# --- Hostile scenarios: malformed responses (stream errors) -------------------

def malformed(fields, doc):
    """A scenario whose response has the header fields `fields`, then DATA
    "hello" with END_STREAM. Each such response is malformed: the client
    fails that request with a stream error PROTOCOL_ERROR and keeps the
    connection (§8.1.1)."""
    def scenario(c, arg):
        c.serve_fault(lambda req: c.raw_response(
            req.sid, fields(req) if callable(fields) else fields, b"hello"))
    scenario.__doc__ = doc
    return scenario


missing_status = malformed(
    [("content-type", "text/plain"), ("content-length", 5)],
    """The request fails (stream error PROTOCOL_ERROR, RST_STREAM) and the connection stays usable: the response has no :status.

    HEADERS without :status, then DATA "hello" (§8.3.2: :status is required;
    §8.1.1: malformed)."""
)

uppercase_header = malformed(
    [(":status", 200), ("Content-Type", "text/plain"), ("X-Upper", "1")],
    """The request fails (stream error PROTOCOL_ERROR) and the connection stays usable: field names carry uppercase letters.

    HEADERS with Content-Type and X-Upper (§8.2.1: a field name with
    characters 0x41-0x5a makes the message malformed, §8.1.1)."""
)

connection_header = malformed(
    [(":status", 200), ("connection", "keep-alive"), ("keep-alive", "5"),
     ("content-length", 5)],
    """The request fails (stream error PROTOCOL_ERROR) and the connection stays usable: the response carries connection: keep-alive.

    HEADERS with the connection-specific fields connection and keep-alive
    (§8.2.2: such a message is malformed)."""
)

transfer_encoding = malformed(
    [(":status", 200), ("transfer-encoding", "chunked")],
    """The request fails (stream error PROTOCOL_ERROR) and the connection stays usable; above all the client must not de-chunk the body.

    HEADERS with transfer-encoding: chunked, then DATA "hello" (§8.2.2:
    connection-specific, malformed)."""
)

pseudo_after_regular = malformed(
    [("content-type", "text/plain"), (":status", 200)],
    """The request fails (stream error PROTOCOL_ERROR) and the connection stays usable: :status comes after a regular field.

    HEADERS content-type, then :status (§8.3: pseudo-header fields come
    first; otherwise the message is malformed)."""
)

request_pseudo_in_response = malformed(
    [(":status", 200), (":path", "/elsewhere"), ("content-length", 5)],
    """The request fails (stream error PROTOCOL_ERROR) and the connection stays usable: the response carries the request pseudo-header :path.

    HEADERS :status 200, :path /elsewhere (§8.3: request pseudo-header
    fields in a response make it malformed)."""
)

duplicate_status = malformed(
    [(":status", 200), (":status", 204), ("content-length", 5)],
    """The request fails (stream error PROTOCOL_ERROR) and the connection stays usable: :status appears twice.

    HEADERS :status 200, :status 204 (§8.3: a pseudo-header field must not
    appear twice)."""
)

empty_header_name = malformed(
    [(":status", 200), ("", "no-name"), ("content-length", 5)],
    """The request fails (stream error PROTOCOL_ERROR) and the connection stays usable: a field has an empty name.

    HEADERS with a zero-length field name (§8.2.1; RFC 9110 §5.1: a name is
    one or more token characters)."""
)

header_value_newline = malformed(
    [(":status", 200), ("x-split", "a\r\nset-cookie: injected=1"),
     ("content-length", 5)],
    """The request fails (stream error PROTOCOL_ERROR) and the connection stays usable; no set-cookie header may come out of it.

    A field value containing CR LF (§8.2.1: CR, LF or NUL in a value make
    the message malformed; an HTTP/1 intermediary would split it)."""
)

content_length_less_data = malformed(
    [(":status", 200), ("content-length", 10)],
    """The request fails (stream error PROTOCOL_ERROR; never a 200 with a 5-byte body) and the connection stays usable: content-length 10, 5 bytes of DATA.

    HEADERS content-length: 10, then DATA "hello" with END_STREAM (§8.1.1:
    a content-length that disagrees with the DATA makes it malformed)."""
)

content_length_more_data = malformed(
    [(":status", 200), ("content-length", 3)],
    """The request fails (stream error PROTOCOL_ERROR; never a 200 with "hel" or "hello") and the connection stays usable: content-length 3, 5 bytes of DATA.

    HEADERS content-length: 3, then DATA "hello" with END_STREAM (§8.1.1)."""
)


def informational_end_stream(c, arg):
    """The request fails (stream error PROTOCOL_ERROR) and the connection stays usable: a 103 ends the stream.

    HEADERS :status 103 with END_STREAM (§8.1: a 1xx HEADERS frame with
    END_STREAM makes the response malformed)."""
    c.serve_fault(lambda req: c.raw_headers(
        req.sid, [(":status", 103), ("link", "</a.css>; rel=preload")],
        end_stream=True))


def trailers_with_pseudo(c, arg):
    """The request fails (stream error PROTOCOL_ERROR) and the connection stays usable: the trailers carry :status.

    HEADERS 200, DATA "hello", then a trailer HEADERS frame with END_STREAM
    holding :status 500 (§8.1: trailers must not include pseudo-header
    fields)."""
    def fault(req):
        c.raw_headers(req.sid, [(":status", 200)])
        c.raw_data(req.sid, b"hello")
        c.raw_headers(req.sid, [(":status", 500), ("x-trailer", "1")],
                      end_stream=True)

    c.serve_fault(fault)


def trailers_without_end_stream(c, arg):
    """The request fails (stream error PROTOCOL_ERROR) and the connection stays usable: a second HEADERS frame after the body lacks END_STREAM.

    HEADERS 200, DATA "hello", HEADERS x-trailer without END_STREAM, then an
    empty DATA with END_STREAM (§8.1: a HEADERS frame after the final
    response without END_STREAM makes it malformed)."""
    def fault(req):
        c.raw_headers(req.sid, [(":status", 200)])
        c.raw_data(req.sid, b"hello")
        c.raw_headers(req.sid, [("x-trailer", "1")])
        c.raw_data(req.sid, b"", end_stream=True)

    c.serve_fault(fault)


def data_before_headers(c, arg):
    """The request fails with PROTOCOL_ERROR: DATA came before any HEADERS (a stream error would do, §8.1.1; nghttp2 closes the connection).

    DATA "hello" with END_STREAM as the only frame of the response (§8.1: a
    response starts with a HEADERS frame; §8.1.1 malformed)."""
    c.serve_fault(lambda req: c.raw_data(req.sid, b"hello", end_stream=True))


# --- Hostile scenarios: frames in the wrong place (connection errors) ---------

def data_on_stream_0(c, arg):
    """The request fails and the client closes the connection with PROTOCOL_ERROR: DATA on stream 0.

    A DATA frame with stream identifier 0 (§6.1)."""
    c.serve_fault(lambda req: c.raw_frame(DATA, 0, 0, b"hello"))


def data_after_end_stream(c, arg):
    """The 200 "hello" response stays a success, its body exactly "hello"; the client closes the connection with STREAM_CLOSED (§5.1 says MUST; nghttp2 ignores the frame, which is lenient).

    A normal response ending in END_STREAM, then DATA "extra" on the same
    stream (§5.1, closed: frames after END_STREAM are a connection error
    STREAM_CLOSED)."""
    def fault(req):
        c.respond_ok(req)
        c.raw_frame(DATA, 0, req.sid, b"extra")

    c.serve_fault(fault)


def headers_on_closed_stream(c, arg):
    """The 200 "hello" response stays a success and no second response appears; the client closes the connection with STREAM_CLOSED (stream id reuse; §5.1 says MUST, nghttp2 ignores it).

    A normal response ending in END_STREAM, then HEADERS :status 200 with
    END_STREAM on that stream again (§5.1 closed; §5.1.1: stream ids are
    never reused)."""
    def fault(req):
        c.respond_ok(req)
        c.raw_frame(HEADERS, END_HEADERS | END_STREAM, req.sid,
                    hpack_literal(b":status", b"200"))

    c.serve_fault(fault)


def rst_idle_stream(c, arg):
    """The client closes the connection with PROTOCOL_ERROR: RST_STREAM on a stream it never opened; the request fails.

    RST_STREAM CANCEL on stream (request's id + 100), an idle stream (§5.1
    idle: any frame but HEADERS or PRIORITY is a connection error
    PROTOCOL_ERROR; §6.4)."""
    def fault(req):
        c.raw_frame(RST_STREAM, 0, req.sid + 100, struct.pack(">I", CANCEL))
        c.after(0.5, lambda: c.respond_ok(req))

    c.serve_fault(fault)


def push_promise(c, arg):
    """The client closes the connection with PROTOCOL_ERROR: a PUSH_PROMISE although it sent SETTINGS_ENABLE_PUSH=0; the request fails. (A client that left push enabled waits for stream 2, which never comes.)

    PUSH_PROMISE on the request's stream promising stream 2 (GET /pushed),
    then the response (§6.5.2, §6.6, §8.4). Logs whether the client
    disabled push."""
    def fault(req):
        c.log("client's ENABLE_PUSH: %s",
              c.client_settings.get(ENABLE_PUSH, "not sent (1)"))
        block = field_block([(b":method", b"GET"), (b":scheme", b"http"),
                             (b":authority", b"127.0.0.1"),
                             (b":path", b"/pushed")])
        c.raw_frame(PUSH_PROMISE, END_HEADERS, req.sid,
                    struct.pack(">I", 2) + block)
        c.respond_ok(req)

    c.serve_fault(fault)


def ping_bad_length(c, arg):
    """The client closes the connection with FRAME_SIZE_ERROR: a PING of 7 bytes; the request fails.

    PING with a 7-byte payload (§6.7)."""
    c.serve_fault(lambda req: c.raw_frame(PING, 0, 0, b"1234567"))


def settings_bad_length(c, arg):
    """The client closes the connection with FRAME_SIZE_ERROR: a SETTINGS frame whose length is not a multiple of 6; the request fails.

    SETTINGS with a 5-byte payload (§6.5)."""
    c.serve_fault(lambda req: c.raw_frame(SETTINGS, 0, 0, b"\x00\x04\x00\x00\x01"))


def settings_enable_push(c, arg):
    """The client closes the connection with PROTOCOL_ERROR right after the preface: the server set SETTINGS_ENABLE_PUSH=1; nothing succeeds, not even /ok.

    A second SETTINGS frame, ENABLE_PUSH=1, right after the preface (§6.5.2:
    a client must treat that as a connection error PROTOCOL_ERROR)."""
    c.start()
    c.raw_settings({ENABLE_PUSH: 1})
    c.serve(c.respond_ok, start=False)


def settings_initial_window_too_big(c, arg):
    """The client closes the connection with FLOW_CONTROL_ERROR right after the preface: SETTINGS_INITIAL_WINDOW_SIZE 2^31; nothing succeeds, not even /ok.

    A second SETTINGS frame with INITIAL_WINDOW_SIZE = 2^31 (§6.5.2)."""
    c.start()
    c.raw_settings({INITIAL_WINDOW_SIZE: 2**31})
    c.serve(c.respond_ok, start=False)


def data_frame_too_large(c, arg):
    """The request fails with FRAME_SIZE_ERROR (a stream error is enough for DATA; closing the connection is also correct): a DATA frame longer than SETTINGS_MAX_FRAME_SIZE.

    HEADERS 200, then one DATA frame of max-frame-size + 1 bytes with
    END_STREAM, within the flow-control windows (§4.2)."""
    def fault(req):
        n = c.h2.max_outbound_frame_size + 1
        c.raw_headers(req.sid, [(":status", 200), ("content-length", n)])
        c.raw_data(req.sid, PatternBody(n).read(0, n), end_stream=True)

    c.serve_fault(fault)


def bad_padding(c, arg):
    """The client closes the connection with PROTOCOL_ERROR: a DATA frame's pad length is as long as its payload; the request fails.

    HEADERS 200, then DATA with PADDED, pad length 10 in a 6-byte payload
    (§6.1: padding at least as long as the payload is a connection error)."""
    def fault(req):
        c.raw_headers(req.sid, [(":status", 200)])
        c.raw_data(req.sid, bytes([10]) + b"hello", end_stream=True,
                   flags=PADDED)

    c.serve_fault(fault)


# --- Hostile scenarios: flow control ------------------------------------------

def data_beyond_window(c, arg):
    """With a stream window under 16 KiB (or a client not reading), the request fails with FLOW_CONTROL_ERROR, usually a connection error: one DATA frame overruns the window. A client that reads eagerly with a larger window has granted the excess before it arrives and may accept the body.

    HEADERS 200, then at once DATA frames totalling one byte more than the
    smaller of the client's stream and connection windows, in frames of up
    to SETTINGS_MAX_FRAME_SIZE (§6.9.1). The receiver can only see the
    overrun if the bytes arrive before it has granted more window: with a
    window under 16 KiB the single frame exceeds it; with 64 KiB a client
    that acknowledges at half-window is never caught."""
    def fault(req):
        window = c.h2.local_flow_control_window(req.sid)
        c.log("client's window is %d; sending %d bytes", window, window + 1)
        c.raw_headers(req.sid, [(":status", 200)])
        body, size = PatternBody(window + 1), c.h2.max_outbound_frame_size
        for offset in range(0, window + 1, size):
            c.raw_data(req.sid, body.read(offset, min(size, window + 1 - offset)))
        c.raw_data(req.sid, b"", end_stream=True)

    c.serve_fault(fault)


def window_update_overflow(c, arg):
    """The client closes the connection with FLOW_CONTROL_ERROR: a WINDOW_UPDATE pushes its connection send window past 2^31-1; the request fails.

    WINDOW_UPDATE on stream 0 with increment 2^31-1 (the window already
    holds 65,535 or more), then the normal response (§6.9.1)."""
    def fault(req):
        c.raw_frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", MAX_WINDOW))
        c.respond_ok(req)

    c.serve_fault(fault)


def window_update_overflow_stream(c, arg):
    """The request fails with a stream error FLOW_CONTROL_ERROR (RST_STREAM) and the connection stays usable: a WINDOW_UPDATE pushes the stream's send window past 2^31-1.

    WINDOW_UPDATE on the request's stream with increment 2^31-1, then the
    normal response (§6.9.1: terminate the stream)."""
    def fault(req):
        c.raw_frame(WINDOW_UPDATE, 0, req.sid, struct.pack(">I", MAX_WINDOW))
        c.respond_ok(req)

    c.serve_fault(fault)


def window_update_zero(c, arg):
    """The request fails with PROTOCOL_ERROR, a stream error that keeps the connection usable (nghttp2 closes the connection instead): a WINDOW_UPDATE with increment 0 on its stream.

    WINDOW_UPDATE increment 0 on the request's stream, then the normal
    response (§6.9: stream error PROTOCOL_ERROR; on stream 0 it would be a
    connection error)."""
    def fault(req):
        c.raw_frame(WINDOW_UPDATE, 0, req.sid, struct.pack(">I", 0))
        c.respond_ok(req)

    c.serve_fault(fault)


# --- Hostile scenarios: floods ------------------------------------------------

def settings_flood(c, arg):
    """Either 200 "hello" after the flood, or the client closes with ENHANCE_YOUR_CALM; either way it ends within seconds, with bounded memory (it must not queue acknowledgements without limit).

    N (default 100000) empty SETTINGS frames, each owed an ACK (§6.5.3),
    written without reading the client's ACKs; then the normal response
    (§10.5: a client may treat this as abuse)."""
    n = int(arg or 100000)

    def fault(req):
        c.settings_unacked.extend({} for _ in range(n))
        flood(c, frame(SETTINGS, 0, 0), n)
        c.respond_ok(req)

    c.serve_fault(fault)


def ping_flood(c, arg):
    """Either 200 "hello" after the flood, or the client closes with ENHANCE_YOUR_CALM; it ends within seconds with bounded memory (it must not queue PING ACKs without limit).

    N (default 100000) PING frames, each owed an ACK (§6.7), written without
    reading; then the normal response (§10.5)."""
    n = int(arg or 100000)

    def fault(req):
        flood(c, frame(PING, 0, 0, b"pingpong"), n)
        c.respond_ok(req)

    c.serve_fault(fault)


def rst_flood(c, arg):
    """The 200 "hello" response stays a success; the client then ignores the resets or closes with ENHANCE_YOUR_CALM (or STREAM_CLOSED), and ends within seconds.

    The normal response with END_STREAM, then N (default 100000)
    RST_STREAM CANCEL frames on that now closed stream. §5.1 lets a peer
    see RST_STREAM shortly after a stream closes, so single ones are
    harmless; a flood is abuse (§10.5). A server cannot reset streams the
    client has not opened (that is rst-idle-stream)."""
    n = int(arg or 100000)

    def fault(req):
        c.respond_ok(req)
        flood(c, frame(RST_STREAM, 0, req.sid, struct.pack(">I", CANCEL)), n)

    c.serve_fault(fault)


def rst_every_request(c, arg):
    """The request fails with a stream reset (INTERNAL_ERROR); the client does not replay it by itself (it may have been processed) and the connection stays usable.

    RST_STREAM INTERNAL_ERROR on every request stream as soon as its
    HEADERS arrive (§6.4, §8.7: only REFUSED_STREAM or a GOAWAY's unprocessed
    streams are known to be safe to retry)."""
    def fault(req):
        req.ignored = True
        c.h2.reset_stream(req.sid, INTERNAL_ERROR)

    c.serve_fault(fault, when="headers")


def empty_data_flood(c, arg):
    """Either 200 "hello" after the flood, or the client fails with ENHANCE_YOUR_CALM; it ends within seconds and does not spin.

    HEADERS 200, then N (default 200000) empty DATA frames without
    END_STREAM, then DATA "hello" with END_STREAM (§10.5: empty frames cost
    the receiver without moving the stream)."""
    n = int(arg or 200000)

    def fault(req):
        c.h2.send_headers(req.sid, [(b":status", b"200")])
        flood(c, frame(DATA, 0, req.sid), n)
        c.h2.send_data(req.sid, b"hello", end_stream=True)
        c.response_done(req.sid)

    c.serve_fault(fault)


# --- Hostile scenarios: connection lifetime -----------------------------------

def no_end_stream_then_close(c, arg):
    """The request fails as truncated (never a 200 success with body "hello"): the connection closes mid-response without END_STREAM or GOAWAY.

    HEADERS 200 without content-length, DATA "hello" without END_STREAM,
    then the TCP connection is shut down (§8.1: a response ends with
    END_STREAM)."""
    def fault(req):
        c.raw_headers(req.sid, [(":status", 200)])
        c.raw_data(req.sid, b"hello")
        raise Closed("closing in the middle of stream %d" % req.sid)

    c.serve_fault(fault)


def goaway_error(c, arg):
    """The request fails with a connection error naming ENHANCE_YOUR_CALM (it was not processed, so a bounded retry on a new connection is allowed, and meets the same fate); the connection is not reused.

    GOAWAY ENHANCE_YOUR_CALM, last-stream-id = the highest stream answered
    so far (0 if none), debug data "scripted: goaway-error", then the
    connection closes (§6.8, §5.4.1)."""
    def fault(req):
        answered = [s for s, r in c.requests.items() if r.done]
        c.goaway(max([0] + answered), ENHANCE_YOUR_CALM,
                 b"scripted: goaway-error")
        raise Closed("closing after GOAWAY with an error")

    c.serve_fault(fault)


def no_settings_silent(c, arg):
    """The client gives up with a timeout (its connect or preface timeout): the server accepts the connection and never sends a byte.

    Reads and discards what the client sends; never sends the server
    preface (§3.4)."""
    c.read_and_discard()


def no_settings_headers(c, arg):
    """The client closes the connection with PROTOCOL_ERROR: the server's first frame is HEADERS, not SETTINGS; the request fails.

    Reads the client's preface and request by hand, then sends HEADERS 200
    and DATA "hello" with no SETTINGS first (§3.4: the server preface is a
    SETTINGS frame)."""
    sid = c.first_request_stream()
    c.sock.sendall(frame(HEADERS, END_HEADERS, sid, field_block(
        [(b":status", b"200"), (b"content-length", b"5")]))
        + frame(DATA, END_STREAM, sid, b"hello"))
    c.read_and_discard()


def http1_server(c, arg):
    """The request fails with an error saying the server does not speak HTTP/2 (PROTOCOL_ERROR or FRAME_SIZE_ERROR at the first bytes); no retry loop.

    An HTTP/1.1 server: reads the client's bytes and answers "HTTP/1.1 400
    Bad Request" with Connection: close, then closes (§3.3: prior knowledge
    can be wrong; §3.4)."""
    c.sock.recv(65536)
    body = b"Bad Request\n"
    c.sock.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n"
                   b"Content-Length: %d\r\nConnection: close\r\n\r\n%s"
                   % (len(body), body))
    raise Closed("answered as HTTP/1.1")


# --- The scenarios ------------------------------------------------------------

# "name:ARG" takes a required argument, "name[:ARG]" an optional one.
SCENARIOS = {
    "ok": ok,
    "echo": echo,
    "echo-trickle": echo_trickle,
    "big:N": big,
    "slow-headers[:MS]": slow_headers,
    "max-streams:N": max_streams,
    "hold-until-goaway[:SECONDS]": hold_until_goaway,
    "goaway-after:N": goaway_after,
    "goaway-random[:SEED]": goaway_random,
    "refuse-every:N": refuse_every,
    "close-without-goaway-after:N": close_without_goaway_after,
    "tiny-data-frames[:N]": tiny_data_frames,
    "informational": informational,
    "trailers": trailers,
    "padding": padding,
    "unknown-frames": unknown_frames,
    "early-response": early_response,
    # Hostile: header blocks.
    "continuation-flood[:SECONDS]": continuation_flood,
    "continuation-flood-empty[:SECONDS]": continuation_flood_empty,
    "hpack-bomb[:REFS]": hpack_bomb,
    "header-list-64k": header_list_64k,
    "hpack-bad-index": hpack_bad_index,
    "frame-inside-header-block": frame_inside_header_block,
    "continuation-without-headers": continuation_without_headers,
    "headers-frame-too-large": headers_frame_too_large,
    # Hostile: malformed responses.
    "missing-status": missing_status,
    "uppercase-header": uppercase_header,
    "connection-header": connection_header,
    "transfer-encoding": transfer_encoding,
    "pseudo-after-regular": pseudo_after_regular,
    "request-pseudo-in-response": request_pseudo_in_response,
    "duplicate-status": duplicate_status,
    "empty-header-name": empty_header_name,
    "header-value-newline": header_value_newline,
    "content-length-less-data": content_length_less_data,
    "content-length-more-data": content_length_more_data,
    "informational-end-stream": informational_end_stream,
    "trailers-with-pseudo": trailers_with_pseudo,
    "trailers-without-end-stream": trailers_without_end_stream,
    "data-before-headers": data_before_headers,
    # Hostile: frames in the wrong place.
    "data-on-stream-0": data_on_stream_0,
    "data-after-end-stream": data_after_end_stream,
    "headers-on-closed-stream": headers_on_closed_stream,
    "rst-idle-stream": rst_idle_stream,
    "push-promise": push_promise,
    "ping-bad-length": ping_bad_length,
    "settings-bad-length": settings_bad_length,
    "settings-enable-push": settings_enable_push,
    "settings-initial-window-too-big": settings_initial_window_too_big,
    "data-frame-too-large": data_frame_too_large,
    "bad-padding": bad_padding,
    # Hostile: flow control.
    "data-beyond-window": data_beyond_window,
    "window-update-overflow": window_update_overflow,
    "window-update-overflow-stream": window_update_overflow_stream,
    "window-update-zero": window_update_zero,
    # Hostile: floods.
    "settings-flood[:N]": settings_flood,
    "ping-flood[:N]": ping_flood,
    "rst-flood[:N]": rst_flood,
    "rst-every-request": rst_every_request,
    "empty-data-flood[:N]": empty_data_flood,
    # Hostile: connection lifetime.
    "no-end-stream-then-close": no_end_stream_then_close,
    "goaway-error": goaway_error,
    "no-settings-silent": no_settings_silent,
    "no-settings-headers": no_settings_headers,
    "http1-server": http1_server,
}


def base_name(key):
    return key.split("[")[0].split(":")[0]


def find_scenario(spec):
    """"big:5M" -> (big, "5M"); raises SystemExit with a reason otherwise."""
    name, _, arg = spec.partition(":")
    for key, fn in SCENARIOS.items():
        if base_name(key) != name:
            continue
        if arg and ":" not in key:
            sys.exit("scenario %s takes no argument" % name)
        if not arg and ":" in key and "[" not in key:
            sys.exit("scenario %s needs an argument: %s" % (name, key))
        return fn, arg or None
    sys.exit("no scenario %r; see --list" % name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0,
                        help="port on 127.0.0.1 (0: any free one)")
    parser.add_argument("--scenario", help="NAME or NAME:ARG, see --list")
    parser.add_argument("--port-file",
                        help="also write the port, alone, to this file")
    parser.add_argument("--list", action="store_true",
                        help="print the scenarios and what a correct client does")
    args = parser.parse_args()

    if args.list:
        for key, fn in SCENARIOS.items():
            print("%-36s %s" % (key, fn.__doc__.strip().split("\n")[0]))
        return
    if not args.scenario:
        parser.error("--scenario is required (see --list)")
    fn, arg = find_scenario(args.scenario)

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.port))
    listener.listen(128)
    port = listener.getsockname()[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, args.port_file)
    sys.stdout.write("PORT %d\n" % port)
    sys.stdout.flush()
    sys.stderr.write("h2_scripted_server: %s on 127.0.0.1:%d\n"
                     % (args.scenario, port))
    try:
        Server(fn, arg).accept_forever(listener)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
