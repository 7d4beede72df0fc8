// Fuzzes the client's HTTP/2 session (HTTP2Session: nghttp2 and our glue) with server bytes:
// three streams are opened (one with a body), then the input is fed as what the server sent.
//
// Input: byte 0 seeds the cuts (the server's bytes fed in pieces), byte 1 the header-list limit
// (1 KiB to 64 KiB); the rest is what the server sent after the connection preface. A valid
// input starts with a SETTINGS frame.
//
// Invariants beyond "no crash":
// - Every stream ends exactly once: a close is reported at most once per stream, and nothing is
//   reported for a stream after its close.
// - A stream's DATA comes only after its final head, its end only once and before its close.
// - At most one final head per stream, and its fields (decoded, counted as RFC 9113 §6.5.2
//   counts them) fit the header-list limit: our bound holds whatever HPACK does.
// - The content-length and date fields a head is read for are where the head's fields have them,
//   and the head made from a block (a template, or a reused head with a new Date) has exactly
//   the block's fields.
// - Only streams the client opened are reported (no pushed stream: ENABLE_PUSH is 0).
// - What the client sends back stays proportional to what it was sent (no amplification).
// - A stream the session reports as never processed (above a GOAWAY's last stream id, or
//   refused) had no head: a replayed request is one the server never answered.

import FuzzSupport
@testable import UVNetworking
import UVHTTP1

final class Recorder: HTTP2SessionDelegate {
    var opened: Set<Int32> = []
    var closed: Set<Int32> = []
    var ended: Set<Int32> = []
    var finalHead: Set<Int32> = []
    var goAwayLast: Int32?
    let limit: Int
    /// Makes the heads as a connection does (a template, then reuse).
    let heads = HTTP2ResponseHeads()

    init(limit: Int) { self.limit = limit }

    private func check(_ stream: Int32, _ what: String) {
        fuzzCheck(opened.contains(stream), "\(what) on stream \(stream), which the client never opened")
        fuzzCheck(!closed.contains(stream), "\(what) on stream \(stream) after its close")
    }

    func sessionChangedStreamLimit(_ limit: Int) {
        fuzzCheck(limit >= 0, "a negative stream limit \(limit)")
    }

    func session(stream: Int32, receivedHead status: Int, block: HTTP2HeaderBlock, isFinal: Bool) {
        let fields = block.receivedFields
        let known = block.known
        check(stream, "a head")
        fuzzCheck(known.contentLength == fields.firstIndex { $0.name == "content-length" } ?? -1, "content-length noted at \(known.contentLength)")
        fuzzCheck(known.date == fields.firstIndex { $0.name == "date" } ?? -1, "date noted at \(known.date)")
        let size = fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 32 } + 32 + 7
        fuzzCheck(size <= limit + 64, "a head of \(size) decoded bytes passed the limit \(limit)")
        guard isFinal else { return }
        // The head the stream would hand on, made anew or reused: exactly the block's fields.
        let head = heads.head(status: status, block: block, streams: opened.count)
        fuzzCheck(head.status == status && head.fields == fields, "a head whose fields are not its block's")
        fuzzCheck(!finalHead.contains(stream), "two final heads on stream \(stream)")
        finalHead.insert(stream)
    }

    func session(stream: Int32, receivedData bytes: UnsafeRawBufferPointer) {
        check(stream, "DATA")
        fuzzCheck(finalHead.contains(stream), "DATA on stream \(stream) before its final head")
        fuzzCheck(!ended.contains(stream), "DATA on stream \(stream) after its end")
    }

    func session(streamEnded stream: Int32) {
        check(stream, "an end")
        fuzzCheck(!ended.contains(stream), "stream \(stream) ended twice")
        ended.insert(stream)
    }

    func session(stream: Int32, closedWith errorCode: UInt32, byClient: Bool) {
        check(stream, "a close")
        closed.insert(stream)
        // Refused or above a GOAWAY's last stream id: replayed by the task, so never answered.
        if errorCode == 7 || (goAwayLast.map { stream > $0 } ?? false) {
            fuzzCheck(!finalHead.contains(stream) || errorCode != 7 || byClient,
                      "stream \(stream) was refused after its final head: a replay would repeat a processed request")
        }
    }

    func sessionReceivedGoAway(lastStreamID: Int32, errorCode: UInt32) {
        goAwayLast = lastStreamID
    }
}

let request: [(name: String, value: String)] = [(":method", "GET"), (":scheme", "http"), (":authority", "fuzz.test"), (":path", "/")]

runFuzzer { bytes in
    var input = FuzzInput(bytes)
    let cutSeed = input.byte()
    let limit = 1024 * (1 + Int(input.byte() % 64))
    let server = Array(input.remaining())
    let recorder = Recorder(limit: limit)
    var settings = HTTP2Session.Settings()
    settings.maximumHeaderListBytes = limit
    settings.initialStreamWindow = 65_535
    guard let session = try? HTTP2Session(delegate: recorder, settings: settings) else {
        fuzzCheck(false, "the session did not start")
        return
    }
    var output: [UInt8] = []
    for index in 0..<3 {
        let body = index == 2 ? HTTP2Session.BodySource(bytes: Array(repeating: 0x61, count: 70_000), isOpen: false) : nil
        guard let stream = try? session.submit(fields: request, body: body) else {
            fuzzCheck(false, "stream \(index) could not be opened")
            return
        }
        recorder.opened.insert(stream)
    }
    try? session.takeOutput(into: &output)
    let sentAtStart = output.count
    output.removeAll(keepingCapacity: true)
    var start = 0
    for cut in splitPoints(count: server.count, seed: cutSeed) {
        let failed = server[start..<cut].withUnsafeBytes { piece -> Bool in
            do {
                try session.receive(piece)
                return false
            } catch {
                return true
            }
        }
        start = cut
        // The client consumes what it got, as a task reading its bodies does.
        for stream in recorder.opened where !recorder.closed.contains(stream) { session.consume(stream, 16_384) }
        try? session.takeOutput(into: &output)
        if failed || session.fatal != nil { break }
    }
    // The body (70,000 bytes) may go out as windows open; beyond it, replies to the server's
    // frames (SETTINGS and PING acks, WINDOW_UPDATEs, RST_STREAMs, one GOAWAY) stay within a
    // few times what it sent.
    fuzzCheck(output.count <= 70_000 + 16 * 1024 + 4 * server.count,
              "\(output.count) bytes sent back for \(server.count) received (\(sentAtStart) at the start)")
}
