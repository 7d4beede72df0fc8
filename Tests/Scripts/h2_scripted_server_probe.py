#!/usr/bin/python3
"""A small, careful HTTP/2 client for h2_scripted_server_check.sh.

    h2_scripted_server_probe.py PORT requests COUNT CONCURRENCY
    h2_scripted_server_probe.py PORT stall SIZE
    h2_scripted_server_probe.py PORT overrun

curl 7.88 cannot multiplex or reuse an h2c connection, and nghttp does not
retry, so the check uses this client (h2 4.1, client side) for what a
correct client does across GOAWAY, REFUSED_STREAM, closes and limits:

requests: GET /r0 ... /r<COUNT-1>, at most CONCURRENCY at a time and never
  more than the server's MAX_CONCURRENT_STREAMS (RFC 9113 §5.1.2); streams
  refused (REFUSED_STREAM) or above a GOAWAY's last-stream-id go again on a
  new connection (§8.7), and so do GETs cut off by a close without GOAWAY
  (they are idempotent). Fails if a response is not 200 "hello", if a
  stream the server promised to process (at or below last-stream-id) is
  never answered, or if one it declared unprocessed is answered.

stall: GET /a and /b of big:SIZE on one connection; reads /b but not /a.
  Fails unless /b completes while /a holds exactly the initial stream
  window (65,535 bytes), and /a completes once read (§6.9).

overrun: for data-beyond-window. Advertises an 8,191-byte stream window,
  waits until the server has acknowledged it, then sends one GET; fails
  unless h2 sees the response's DATA overrun the window
  (FLOW_CONTROL_ERROR, §6.9.1).

Prints one summary line; exit status 0 if all held.
"""

import select
import socket
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings

REFUSED_STREAM = 7
PATTERN = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-\n"


class GracefulH2(h2.connection.H2Connection):
    """h2 4.1 closes its state machine on GOAWAY and then rejects the
    frames of streams the GOAWAY let finish; keep reading them."""

    def _receive_goaway_frame(self, frame):
        frames, events = super()._receive_goaway_frame(frame)
        self.state_machine.state = h2.connection.ConnectionState.CLIENT_OPEN
        return frames, events


class Probe:
    def __init__(self, port):
        self.port = port
        self.connections = 0
        self.failures = []

    def connect(self, window=1 << 24, stream_window=65535):
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        conn = GracefulH2(config=h2.config.H2Configuration(
            client_side=True, header_encoding=None))
        conn.local_settings = h2.settings.Settings(client=True, initial_values={
            h2.settings.SettingCodes.ENABLE_PUSH: 0,
            h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 100,
            h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: stream_window})
        conn.initiate_connection()
        if window:
            conn.increment_flow_control_window(window)
        sock.sendall(conn.data_to_send())
        self.connections += 1
        return sock, conn

    def events(self, sock, conn, timeout):
        ready, _, _ = select.select([sock], [], [], timeout)
        if not ready:
            return []
        try:
            data = sock.recv(65536)
        except ConnectionResetError:
            data = b""
        if not data:
            return None
        events = conn.receive_data(data)
        out = conn.data_to_send()
        if out:
            sock.sendall(out)
        return events

    def get(self, sock, conn, path):
        sid = conn.get_next_available_stream_id()
        conn.send_headers(sid, [(b":method", b"GET"), (b":scheme", b"http"),
                                (b":authority", b"127.0.0.1"),
                                (b":path", path)], end_stream=True)
        sock.sendall(conn.data_to_send())
        return sid

    def requests(self, count, concurrency):
        todo = [b"/r%d" % i for i in range(count)]
        done = {}
        stats = {"refused": 0, "unprocessed": 0, "after-close": 0}
        max_open = 0
        deadline = time.monotonic() + 60
        while todo and time.monotonic() < deadline:
            sock, conn = self.connect()
            streams, goaway, heard = {}, None, False
            while time.monotonic() < deadline:
                # Open what the limits allow once the server has spoken.
                while (heard and goaway is None and todo
                       and len(streams) < concurrency
                       and conn.open_outbound_streams
                       < conn.remote_settings.max_concurrent_streams):
                    path = todo.pop(0)
                    streams[self.get(sock, conn, path)] = {
                        "path": path, "status": None, "body": b"",
                        "headers": {}}
                    max_open = max(max_open, len(streams))
                if not streams and (goaway is not None or not todo):
                    break
                events = self.events(sock, conn, 5)
                if events is None:
                    # Closed. Streams at or below last-stream-id were promised.
                    for sid, s in streams.items():
                        if goaway is not None and sid <= goaway:
                            self.failures.append("stream %d (%s) was at or "
                                                 "below last-stream-id %d and "
                                                 "never answered"
                                                 % (sid, s["path"], goaway))
                        else:
                            stats["after-close"] += 1
                            todo.append(s["path"])
                    break
                for ev in events:
                    if isinstance(ev, h2.events.RemoteSettingsChanged):
                        heard = True
                    elif isinstance(ev, h2.events.ResponseReceived):
                        s = streams[ev.stream_id]
                        s["headers"] = dict(ev.headers)
                        s["status"] = s["headers"].get(b":status")
                    elif isinstance(ev, h2.events.DataReceived):
                        streams[ev.stream_id]["body"] += ev.data
                        conn.acknowledge_received_data(
                            ev.flow_controlled_length, ev.stream_id)
                    elif isinstance(ev, h2.events.StreamEnded):
                        s = streams.pop(ev.stream_id)
                        if goaway is not None and ev.stream_id > goaway:
                            self.failures.append(
                                "stream %d answered though above "
                                "last-stream-id %d" % (ev.stream_id, goaway))
                        self.check_response(s)
                        done[s["path"]] = done.get(s["path"], 0) + 1
                    elif isinstance(ev, h2.events.StreamReset):
                        s = streams.pop(ev.stream_id)
                        if ev.error_code == REFUSED_STREAM:
                            stats["refused"] += 1
                            todo.append(s["path"])
                        else:
                            self.failures.append("stream %d reset, error %d"
                                                 % (ev.stream_id,
                                                    ev.error_code))
                    elif isinstance(ev, h2.events.ConnectionTerminated):
                        goaway = ev.last_stream_id
                        for sid in [s for s in streams if s > goaway]:
                            stats["unprocessed"] += 1
                            todo.append(streams.pop(sid)["path"])
                out = conn.data_to_send()
                if out:
                    sock.sendall(out)
            sock.close()
        for path in todo:
            self.failures.append("%s never answered" % path)
        for path, n in done.items():
            if n != 1:
                self.failures.append("%s answered %d times" % (path, n))
        return ("requests: %d answered on %d connections; retried %d refused, "
                "%d unprocessed, %d after a close; at most %d open at once"
                % (len(done), self.connections, stats["refused"],
                   stats["unprocessed"], stats["after-close"], max_open))

    def check_response(self, s):
        h = s["headers"]
        if s["status"] != b"200" or s["body"] != b"hello":
            self.failures.append("%s: status %r body %r" % (
                s["path"], s["status"], s["body"][:40]))
        if h.get(b"x-path") != s["path"]:
            self.failures.append("%s: x-path %r" % (s["path"], h.get(b"x-path")))
        limit = h.get(b"x-stream-limit")
        if limit not in (None, b"None") and \
                int(h[b"x-open-streams"]) > int(limit):
            self.failures.append("%s: %s streams open, limit %s" % (
                s["path"], h[b"x-open-streams"].decode(), limit.decode()))

    def stall(self, size):
        sock, conn = self.connect()
        a, b = self.get(sock, conn, b"/a"), self.get(sock, conn, b"/b")
        body = {a: b"", b: b""}
        ended = set()
        deadline = time.monotonic() + 30
        read_a = False
        while len(ended) < 2 and time.monotonic() < deadline:
            events = self.events(sock, conn, 0.3)
            if events is None:
                self.failures.append("server closed the connection")
                break
            if b in ended and not read_a and not events:
                # /b is done and nothing moves: /a must be stalled at its window.
                if len(body[a]) != 65535:
                    self.failures.append("/a got %d bytes unread, not 65535"
                                         % len(body[a]))
                read_a = True
                conn.acknowledge_received_data(len(body[a]), a)
            for ev in events:
                if isinstance(ev, h2.events.DataReceived):
                    body[ev.stream_id] += ev.data
                    if ev.stream_id == b or read_a:
                        conn.acknowledge_received_data(
                            ev.flow_controlled_length, ev.stream_id)
                elif isinstance(ev, h2.events.StreamEnded):
                    ended.add(ev.stream_id)
                    if ev.stream_id == a and not read_a:
                        self.failures.append("/a finished though unread")
            out = conn.data_to_send()
            if out:
                sock.sendall(out)
        expected = (PATTERN * (size // len(PATTERN) + 1))[:size]
        for sid, name in ((a, "/a"), (b, "/b")):
            if body[sid] != expected:
                self.failures.append("%s: %d bytes, not the %d expected"
                                     % (name, len(body[sid]), size))
        sock.close()
        return "stall: /b read in full while /a waited at 65535 bytes; " \
               "/a completed once read"

    def overrun(self):
        sock, conn = self.connect(window=0, stream_window=8191)
        acked = False
        deadline = time.monotonic() + 10
        while not acked and time.monotonic() < deadline:
            events = self.events(sock, conn, 1) or []
            acked = any(isinstance(ev, h2.events.SettingsAcknowledged)
                        for ev in events)
        self.get(sock, conn, b"/fault")
        try:
            while time.monotonic() < deadline:
                events = self.events(sock, conn, 1)
                if events is None:
                    break
                for ev in events:
                    if isinstance(ev, h2.events.StreamEnded):
                        self.failures.append("the response ended within "
                                             "the window")
        except h2.exceptions.FlowControlError as e:
            sock.close()
            return "overrun: h2 saw the window overrun (%s)" % e
        self.failures.append("no flow-control error seen")
        sock.close()
        return ""


def main():
    port, mode = int(sys.argv[1]), sys.argv[2]
    probe = Probe(port)
    if mode == "requests":
        summary = probe.requests(int(sys.argv[3]), int(sys.argv[4]))
    elif mode == "stall":
        summary = probe.stall(int(sys.argv[3]))
    elif mode == "overrun":
        summary = probe.overrun()
    else:
        sys.exit("unknown mode %s" % mode)
    if probe.failures:
        print("probe FAILED: " + "; ".join(probe.failures[:10]))
        sys.exit(1)
    print("probe ok: " + summary)


if __name__ == "__main__":
    main()
