#!/usr/bin/env python3
"""What h11 (PyPI, pinned by scripts/install-deps.sh) makes of HTTP/1.1 byte streams.

The other half of the differential tests: our parsers and h11, a parser no one here wrote, read the
same input files, and the Swift suite compares the two input by input (ResponseParserH11Differential-
Tests; the disagreements it allows, and why, are in docs/fuzzing.md).

    h11_outcome.py response [--seeds DIR]... [DIR]...
    h11_outcome.py request DIR...

Inputs
- response mode: each file holds the bytes a server sends on one connection. h11 plays the client
  (h11.Connection(h11.CLIENT)): before each response it is sent a request (target "/", a Host field,
  no body) whose method decides the response's framing (HEAD, CONNECT).
  - A DIR of our own cases: the methods come from DIR/methods.txt, lines "FILE METHOD [METHOD...]"
    (one per response on the connection; the last one repeats); a file not listed is all GET.
    Files ending in .txt or .md are not inputs.
  - --seeds DIR: the response fuzz harness's seeds (Fuzz/ResponseDecoderFuzzer.swift): 4 option
    bytes, then the stream. Byte 0 bit 0: the first request is a HEAD; bit 1: later requests
    alternate HEAD / GET. The limit bits are ignored: h11 has no body limit, and the comparison
    runs both parsers at their default limits.
- request mode: each file holds the bytes a client sends on one connection; h11 plays the server
  (h11.Connection(h11.SERVER)) and answers each complete request with an empty 200, so that the next
  pipelined request is read.

Each stream is parsed twice, fed in one piece and fed one byte at a time.

Output: one JSON line per input, in file-name order:
    {"name": "responses/cl-basic", "methods": ["GET"], "result": RESULT,
     "split_invariant": true, "byte_by_byte": RESULT (only when it differs from "result" in more than error texts)}
RESULT:
    {"messages": [MESSAGE...], "outcome": "complete" | "error" | "incomplete", "error": str | null,
     "at_eof": "complete" | "error" | null, "eof_error": str | null, "unparsed": int,
     "stopped": str | null}
- outcome: after every byte was fed. "complete": the last message ended (and no byte of a next one
  came); "error": h11 raised, "error" holding its message; "incomplete": h11 needs more data.
- at_eof: only when incomplete: what h11 makes of the peer closing the connection then (an
  EOF-framed body completes; anything else unfinished is an error).
- unparsed: bytes after the last complete message that were not read because the connection cannot
  carry another message (a response or request that closes it, a protocol switch).
- stopped: why reading stopped before the end of the input with no error, e.g. "protocol switch".
MESSAGE (response mode):
    {"method": "GET", "interim": [HEAD...], "status": 200, "reason": BYTES, "version": "1.1",
     "fields": [[BYTES, BYTES]...], "body": BYTES, "trailers": [[BYTES, BYTES]...], "complete": bool}
  with HEAD = {"status", "reason", "version", "fields"} for each 1xx; a message cut short by an
  error or by the end of the input has what h11 delivered of it, status null before its head.
MESSAGE (request mode):
    {"method": BYTES, "target": BYTES, "version": "1.1", "fields": ..., "body": ..., "trailers": ...,
     "complete": bool}
BYTES are byte strings as JSON strings of the code points 0-255 (latin-1), so no byte is lost.

How h11 hands fields over (the Swift side brings ours to the same form before comparing):
- names as received (Headers.raw_items(); h11's own iteration lowercases them), values without
  leading and trailing SP/HTAB;
- an obs-fold line is joined to the line before it by one SP, the fold's leading whitespace dropped;
- Content-Length: a list of equal values ("5, 5") becomes that value, and a repeat of the field with
  an equal value is dropped (different values are an error);
- Transfer-Encoding: its value is lowercased (only "chunked" is accepted, once).
"""

import json
import os
import sys

try:
    import h11
except ImportError:  # The Swift suite skips on this exit status and says why.
    print("h11 is not importable by this python3 (scripts/install-deps.sh installs it)", file=sys.stderr)
    sys.exit(3)

EXIT_NO_H11 = 3


def text(data):
    """Bytes as a JSON-safe string of code points 0-255."""
    return bytes(data).decode("latin-1")


def fields(headers):
    return [[text(name), text(value)] for name, value in headers.raw_items()]


def version(event):
    return event.http_version.decode("ascii")


class Run:
    """One pass of h11 over one stream, fed in the given pieces."""

    def __init__(self, mode, methods):
        self.mode = mode
        self.methods = methods
        self.conn = h11.Connection(h11.CLIENT if mode == "response" else h11.SERVER)
        self.messages = []
        self.message = None
        self.error = None
        self.stopped = None
        self.unread = 0

    def method(self, index):
        return self.methods[min(index, len(self.methods) - 1)]

    def send_request(self):
        """Response mode: the request the next response answers."""
        method = self.method(len(self.messages))
        self.conn.send(h11.Request(method=method, target="/", headers=[("Host", "example.test")]))
        self.conn.send(h11.EndOfMessage())

    def begin(self):
        if self.mode == "response":
            self.message = {"method": self.method(len(self.messages)), "interim": [], "status": None,
                            "reason": "", "version": None, "fields": [], "body": "", "trailers": [],
                            "complete": False}
        else:
            self.message = {"method": None, "target": None, "version": None, "fields": [], "body": "",
                            "trailers": [], "complete": False}
        self.messages.append(self.message)

    def start(self):
        if self.mode == "response":
            self.send_request()

    def handle(self, event):
        """Records one event; returns False when reading must stop."""
        if isinstance(event, (h11.InformationalResponse, h11.Response, h11.Request)) and self.message is None:
            self.begin()
        message = self.message
        if isinstance(event, h11.InformationalResponse):
            message["interim"].append({"status": event.status_code, "reason": text(event.reason),
                                       "version": version(event), "fields": fields(event.headers)})
        elif isinstance(event, h11.Response):
            message.update(status=event.status_code, reason=text(event.reason), version=version(event),
                           fields=fields(event.headers))
        elif isinstance(event, h11.Request):
            message.update(method=text(event.method), target=text(event.target), version=version(event),
                           fields=fields(event.headers))
        elif isinstance(event, h11.Data):
            message["body"] += text(event.data)
        elif isinstance(event, h11.EndOfMessage):
            message["trailers"] = fields(event.headers)
            message["complete"] = True
            self.message = None
            if self.conn.their_state is h11.MIGHT_SWITCH_PROTOCOL:
                # CONNECT or Upgrade: what follows may be another protocol; h11 reads no further.
                self.stopped = "protocol switch"
                return False
            if self.mode == "request":
                # The empty answer that lets h11 read a pipelined request next.
                self.conn.send(h11.Response(status_code=200, headers=[("Content-Length", "0")]))
                self.conn.send(h11.EndOfMessage())
            if self.conn.their_state is h11.MUST_CLOSE:
                self.stopped = "connection closes after this message"
                return False
        elif isinstance(event, h11.ConnectionClosed):
            if self.message is not None or self.conn.their_state not in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.IDLE) \
                    or (self.mode == "response" and self.conn.their_state is h11.IDLE):
                raise h11.RemoteProtocolError("connection closed before a complete message (ConnectionClosed)")
            return False
        return True

    def drain(self):
        """Takes every event h11 can make of the bytes so far; returns False when reading stops."""
        while True:
            event = self.conn.next_event()
            if event is h11.NEED_DATA:
                return True
            if event is h11.PAUSED:
                if self.conn.our_state is h11.DONE and self.conn.their_state is h11.DONE:
                    self.conn.start_next_cycle()
                    self.start()
                    continue
                self.stopped = "protocol switch" if self.conn.their_state in (
                    h11.MIGHT_SWITCH_PROTOCOL, h11.SWITCHED_PROTOCOL) else f"paused in {self.conn.their_state}"
                return False
            if not self.handle(event):
                return False

    def feed(self, pieces):
        self.start()
        total = sum(len(piece) for piece in pieces)
        fed = 0
        try:
            for piece in pieces:
                if not piece:
                    continue  # receive_data(b"") would say the peer closed
                self.conn.receive_data(piece)
                fed += len(piece)
                if not self.drain():
                    self.unread = len(self.conn.trailing_data[0]) + total - fed
                    return self.result("complete")
        except h11.RemoteProtocolError as error:
            self.error = str(error)
            return self.result("error")
        # Complete: the last message ended and no byte of a next one is waiting.
        complete = self.message is None and self.messages and self.messages[-1]["complete"] \
            and not self.conn.trailing_data[0]
        if complete:
            return self.result("complete")
        result = self.result("incomplete")
        try:
            self.conn.receive_data(b"")
            self.drain()
            done = self.message is None and self.messages and self.messages[-1]["complete"]
            if not done:
                raise h11.RemoteProtocolError("connection closed before a complete message")
            result["at_eof"] = "complete"
        except h11.RemoteProtocolError as error:
            result["at_eof"] = "error"
            result["eof_error"] = str(error)
        result["messages"] = self.messages
        return result

    def result(self, outcome):
        return {"messages": self.messages, "outcome": outcome, "error": self.error, "at_eof": None,
                "eof_error": None, "unparsed": self.unread, "stopped": self.stopped}


def parse(mode, stream, methods):
    one = Run(mode, methods).feed([stream])
    bytewise = Run(mode, methods).feed([stream[i:i + 1] for i in range(len(stream))])
    return one, bytewise


def without_error_texts(result):
    """A result with its error texts left out: h11 words the same failure differently when the
    bytes come one at a time."""
    return dict(result, error=None, eof_error=None)


def seed_methods(flags, count=16):
    """The fuzz harness's request methods, response by response (FuzzOptions.isHEAD)."""
    first = flags & 1 != 0
    alternate = flags & 2 != 0
    return ["HEAD" if ((not first) if alternate and i % 2 == 1 else first) else "GET" for i in range(count)]


def read_methods(directory):
    table = {}
    path = os.path.join(directory, "methods.txt")
    if os.path.exists(path):
        with open(path) as listing:
            for line in listing:
                words = line.split("#", 1)[0].split()
                if words:
                    table[words[0]] = words[1:]
    return table


def inputs(directory):
    return sorted(name for name in os.listdir(directory)
                  if os.path.isfile(os.path.join(directory, name)) and not name.endswith((".txt", ".md", ".py")))


def main(argv):
    if len(argv) < 2 or argv[0] not in ("response", "request"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    mode = argv[0]
    jobs = []  # (directory, is_seed_dir)
    args = iter(argv[1:])
    for arg in args:
        if arg == "--seeds":
            jobs.append((next(args), True))
        else:
            jobs.append((arg, False))
    for directory, seeds in jobs:
        label = os.path.basename(os.path.normpath(directory))
        methods_table = read_methods(directory)
        for name in inputs(directory):
            with open(os.path.join(directory, name), "rb") as source:
                data = source.read()
            if seeds:
                flags = data[0] if len(data) >= 4 else 0
                stream = data[4:] if len(data) >= 4 else b""
                methods = seed_methods(flags)
            else:
                stream = data
                methods = methods_table.get(name, ["GET"])
            if mode == "request":
                methods = []
            one, bytewise = parse(mode, stream, methods or ["GET"])
            used = methods[:max(1, len(one["messages"]))]
            line = {"name": f"{label}/{name}", "methods": used, "result": one,
                    "split_invariant": without_error_texts(one) == without_error_texts(bytewise)}
            if not line["split_invariant"]:
                line["byte_by_byte"] = bytewise
            print(json.dumps(line, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
