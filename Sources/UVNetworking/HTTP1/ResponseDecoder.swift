import CLLHTTP

// Sans-I/O HTTP/1.1 response decoder on top of llhttp 8.1 (strict mode).
//
// Theory of operation
// - Bytes in (`feed`, `finish`), events out; no socket, no clock. One decoder serves one
//   connection; `expectResponse` arms it for the response to each request in turn.
// - llhttp does the tokenising. Its callbacks (ResponseDecoder+Callbacks.swift) accumulate names,
//   values and body bytes and apply the checks that need decoded data (empty names, framing,
//   limits, upgrades).
// - llhttp 8.1 lets some things through that we refuse, and it cannot tell us where a line ended.
//   So a `FieldSectionScanner` walks the raw bytes of each field section (a head, or the trailer
//   section) just ahead of llhttp: it enforces CRLF line endings, the status-line shape and the
//   byte limit. When it finds a problem at byte i, llhttp is first run on the bytes before i, so
//   that whichever problem comes first in the stream wins however the stream was split.
// - Every message ends in a pause (on_message_complete returns HPE_PAUSED), and the trailer section
//   starts with one (on_chunk_header of the last chunk). A pause tells us exactly where we are in
//   the buffer: after a 1xx the parser is reset for the next head on the same buffer, after the
//   final response decoding stops, so bytes of a following message are never consumed.
//
// Rules kept
// - Once complete, nothing more is consumed or emitted until `expectResponse`.
// - Once an error is thrown, the decoder is dead: every later `feed`/`finish` throws the same error
//   and emits nothing.
// - Nothing is buffered beyond the limits: a head or trailer section stops at maxHeaderBytes raw
//   bytes, a body at maxBodyBytes.

/// Decodes the HTTP/1.1 responses received on one connection into `ResponseEvent`s.
///
/// Not thread-safe and not re-entrant: one connection's loop thread owns it.
final class ResponseDecoder {
    /// Bounds on what one response may make the decoder hold.
    struct Limits: Sendable {
        /// Raw bytes of one head, status line and final empty line included (each 1xx head is
        /// counted on its own), and likewise of a trailer section.
        var maxHeaderBytes: Int = 64 * 1024
        /// Bytes of one response body after chunked decoding; nil for no limit.
        var maxBodyBytes: Int? = nil
    }

    /// Which part of the current message llhttp is in; decides where fields go and how EOF reads.
    enum Section: Equatable {
        case head, body, trailers
    }

    /// Why llhttp last paused (set by the callback that returned HPE_PAUSED).
    enum Pause: Equatable {
        /// A 1xx ended: the final response follows on the same bytes.
        case interimComplete
        /// The final response ended.
        case finalComplete
        /// The last chunk's size line ended: the trailer section starts here.
        case lastChunk
    }

    let limits: Limits

    /// llhttp's state. A separate allocation so that its address stays fixed while llhttp holds it
    /// and the callbacks reach it without an exclusive access to `self`.
    let parser: UnsafeMutablePointer<llhttp_t>

    // Mutable state. `@exclusivity(unchecked)`: the decoder is confined to one thread and never
    // re-entered (`executing` guards that), and the runtime's per-access exclusivity checks on
    // class properties were the largest single cost of decoding a small response.

    // Connection-level state, touched only by this type and its callbacks.
    @exclusivity(unchecked) var toHEAD = false
    @exclusivity(unchecked) var receivedBytes = false
    @exclusivity(unchecked) var completed = false
    @exclusivity(unchecked) var failure: ResponseDecoderError?
    @exclusivity(unchecked) var executing = false
    /// Events produced during one feed: the caller's array, swapped in so callbacks can append.
    @exclusivity(unchecked) var sink: [ResponseEvent] = []
    @exclusivity(unchecked) var interimKeepAlive = true
    @exclusivity(unchecked) var finalKeepAlive = false

    // Message-level state, reset by `startMessage`.
    @exclusivity(unchecked) var scanner = FieldSectionScanner.inactive
    @exclusivity(unchecked) var section = Section.head
    @exclusivity(unchecked) var pause: Pause?
    @exclusivity(unchecked) var callbackError: ResponseDecoderError?
    @exclusivity(unchecked) var isInterim = false
    /// Where the current llhttp_execute started, and the byte before it: how a value callback
    /// finds what precedes its span (obs-fold detection).
    @exclusivity(unchecked) var executeStart: UnsafePointer<CChar>?
    @exclusivity(unchecked) var byteBeforeExecute: UInt8 = 0
    // Buffers reused from one field (and one response) to the next.
    @exclusivity(unchecked) var reasonBytes: [UInt8] = []
    @exclusivity(unchecked) var nameBytes: [UInt8] = []
    @exclusivity(unchecked) var valueBytes: [UInt8] = []
    @exclusivity(unchecked) var skippingFoldWhitespace = false
    @exclusivity(unchecked) var fields: [HeaderField] = []
    @exclusivity(unchecked) var sawTransferEncoding = false
    @exclusivity(unchecked) var transferCodingCount = 0
    @exclusivity(unchecked) var transferCodingsAllChunked = true
    @exclusivity(unchecked) var pendingBody: [UInt8] = []
    @exclusivity(unchecked) var bodyByteCount = 0

    /// Creates a decoder armed for a response to a non-HEAD request.
    init(limits: Limits = Limits()) {
        self.limits = limits
        parser = .allocate(capacity: 1)
        llhttp_init(parser, HTTP_RESPONSE, ResponseDecoder.settings)
        reasonBytes.reserveCapacity(32)
        nameBytes.reserveCapacity(64)
        valueBytes.reserveCapacity(256)
        // Unretained: the decoder owns the parser, so it outlives every callback.
        parser.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        startMessage()
    }

    deinit {
        parser.deallocate()
    }

    /// Prepares for the response to one request. Call before feeding that response's first byte.
    ///
    /// Legal before any byte of the current response or after its `.end`; calling it in between
    /// traps. A dead decoder stays dead. Whether the connection may carry another request is the
    /// caller's decision (`keepAlive`, leftover bytes); the decoder starts afresh either way.
    func expectResponse(toHEAD: Bool) {
        precondition(!executing, "ResponseDecoder is not re-entrant")
        guard failure == nil else { return }
        precondition(completed || !receivedBytes, "expectResponse(toHEAD:) called in the middle of a response")
        self.toHEAD = toHEAD
        receivedBytes = false
        completed = false
        interimKeepAlive = true
        finalKeepAlive = false
        startMessage()
    }

    /// Decodes bytes, appending events. Returns how many bytes were consumed: decoding stops right after the final
    /// response's `.end`; bytes left over belong to no request (the caller then must not reuse the connection).
    /// On throw, `events` keeps what was decoded before the error and the decoder is dead (every later call throws the same error).
    func feed(_ bytes: UnsafeRawBufferPointer, into events: inout [ResponseEvent]) throws(ResponseDecoderError) -> Int {
        precondition(!executing, "ResponseDecoder is not re-entrant")
        if let failure { throw failure }
        guard !completed, !bytes.isEmpty else { return 0 }
        receivedBytes = true
        executing = true
        swap(&sink, &events)
        defer {
            flushBody()
            swap(&sink, &events)
            executing = false
        }
        return try decode(bytes)
    }

    /// The peer closed the connection: ends an EOF-framed body (appends `.end`) or throws truncatedBody / closedBeforeResponse.
    func finish(into events: inout [ResponseEvent]) throws(ResponseDecoderError) {
        precondition(!executing, "ResponseDecoder is not re-entrant")
        if let failure { throw failure }
        if completed { return }
        guard receivedBytes else {
            throw fail(ResponseDecoderError(kind: .closedBeforeResponse, reason: "connection closed before any byte of the response"))
        }
        executing = true
        swap(&sink, &events)
        defer {
            flushBody()
            swap(&sink, &events)
            executing = false
        }
        // llhttp_finish calls on_message_complete only for an EOF-framed body; anything else
        // unfinished is INVALID_EOF_STATE (or OK with nothing begun, right after a 1xx).
        _ = llhttp_finish(parser)
        if completed { return }
        if let callbackError { throw fail(callbackError) }
        let reason: String
        switch section {
        case .head:
            // A fresh head scanner that saw nothing means the last message was a complete 1xx.
            reason = scanner.byteCount == 0 ? "connection closed after an interim response" : "connection closed inside the response head"
        case .body: reason = "connection closed inside the body"
        case .trailers: reason = "connection closed inside the trailer section"
        }
        throw fail(ResponseDecoderError(kind: .truncatedBody, reason: reason))
    }

    /// Whether any byte of the current response (1xx included) has been received.
    var hasReceivedBytes: Bool { receivedBytes }

    /// Whether the final response has ended.
    var isComplete: Bool { completed }

    /// After `.end`: whether the connection may carry another request (llhttp keep-alive, and no leftover bytes were seen is the caller's business).
    ///
    /// False before `.end`. An interim response that announced `Connection: close` also makes it false.
    var keepAlive: Bool { completed && finalKeepAlive && interimKeepAlive }

    // MARK: - Decoding loop

    /// Runs llhttp over `bytes`, stopping it early where the scanner found a problem and handling
    /// each pause. Returns the bytes consumed.
    private func decode(_ bytes: UnsafeRawBufferPointer) throws(ResponseDecoderError) -> Int {
        let base = bytes.baseAddress!.assumingMemoryBound(to: CChar.self)
        var offset = 0
        while offset < bytes.count {
            var stop = bytes.count
            var problem: ResponseDecoderError?
            if scanner.isActive, let found = scanner.scan(bytes, from: offset, limit: limits.maxHeaderBytes) {
                stop = found.index
                problem = found.error
            }
            if stop > offset {
                if let consumed = try execute(base + offset, count: stop - offset) {
                    offset += consumed
                    if handlePause() { return offset }
                    continue
                }
                offset = stop
            }
            // llhttp took every byte before the offending one without complaint: ours is the first problem.
            if let problem { throw fail(problem) }
        }
        return offset
    }

    /// One llhttp_execute. Returns nil when every byte was consumed, or the count consumed up to a pause.
    private func execute(_ start: UnsafePointer<CChar>, count: Int) throws(ResponseDecoderError) -> Int? {
        executeStart = start
        let result = llhttp_execute(parser, start, count)
        if result == HPE_OK {
            byteBeforeExecute = UInt8(bitPattern: start[count - 1])
            return nil
        }
        if result == HPE_PAUSED {
            precondition(pause != nil, "llhttp paused without a callback asking for it")
            // error_pos is the first byte not consumed (checked against llhttp 8.1).
            let consumed = llhttp_get_error_pos(parser).map { $0 - start } ?? count
            if consumed > 0 { byteBeforeExecute = UInt8(bitPattern: start[consumed - 1]) }
            return consumed
        }
        throw fail(callbackError ?? Self.llhttpError(result, parser: parser))
    }

    /// Acts on the pause llhttp just returned. Returns true when the final response is complete.
    private func handlePause() -> Bool {
        let reason = pause
        pause = nil
        switch reason {
        case .finalComplete:
            return true
        case .interimComplete:
            // A fresh parser per message: strict llhttp would otherwise refuse bytes after a 1xx
            // without keep-alive, and the scanner must start on the new status line.
            startMessage()
            return false
        case .lastChunk:
            llhttp_resume(parser)
            scanner = .trailers
            section = .trailers
            return false
        case nil:
            preconditionFailure("pause handled twice")
        }
    }

    /// Resets llhttp and the per-message state for the next status line.
    func startMessage() {
        llhttp_reset(parser)
        scanner = .head
        section = .head
        pause = nil
        callbackError = nil
        isInterim = false
        reasonBytes.removeAll(keepingCapacity: true)
        nameBytes.removeAll(keepingCapacity: true)
        valueBytes.removeAll(keepingCapacity: true)
        skippingFoldWhitespace = false
        fields = []
        sawTransferEncoding = false
        transferCodingCount = 0
        transferCodingsAllChunked = true
        bodyByteCount = 0
    }

    /// Moves the body bytes gathered during this feed into one `.body` event.
    func flushBody() {
        guard !pendingBody.isEmpty else { return }
        sink.append(.body(pendingBody))
        pendingBody = []
    }

    /// Marks the decoder dead with `error` and returns it for throwing.
    private func fail(_ error: ResponseDecoderError) -> ResponseDecoderError {
        failure = error
        return error
    }

    /// Builds a `.malformed` error from llhttp's errno and reason (which may be NULL).
    static func llhttpError(_ code: llhttp_errno_t, parser: UnsafePointer<llhttp_t>) -> ResponseDecoderError {
        let name = llhttp_errno_name(code).map { String(cString: $0) } ?? "HPE_\(code.rawValue)"
        let detail = llhttp_get_error_reason(parser).map { String(cString: $0) } ?? "no reason given"
        return .malformed("\(name): \(detail)")
    }
}

/// Walks the raw bytes of one field section (a head, or a trailer section) ahead of llhttp.
///
/// It exists because strict llhttp 8.1 accepts a bare LF after the status line and as the final
/// empty line, skips CR/LF before a status line, and accepts status codes of 1, 2 or 4 digits,
/// and because a limit counted on raw bytes reads the same whatever the read sizes were.
struct FieldSectionScanner {
    /// Scanning a head, whose first line is a status line.
    static let head = FieldSectionScanner(isActive: true, onStatusLine: true)
    /// Scanning a trailer section.
    static let trailers = FieldSectionScanner(isActive: true, onStatusLine: false)
    /// Not in a field section (body, or between messages).
    static let inactive = FieldSectionScanner(isActive: false, onStatusLine: false)

    /// False once the section's empty line has been seen.
    private(set) var isActive: Bool
    /// Bytes of the section scanned so far.
    private(set) var byteCount = 0
    private var onStatusLine: Bool
    /// Bytes on the current line so far, CR excluded.
    private var column = 0
    private var sawCR = false

    private init(isActive: Bool, onStatusLine: Bool) {
        self.isActive = isActive
        self.onStatusLine = onStatusLine
    }

    /// Scans from `start` until the section ends or the bytes run out. Returns the index of the
    /// first byte that must not reach llhttp, with the error it causes; nil if there is none.
    mutating func scan(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int) -> (index: Int, error: ResponseDecoderError)? {
        var index = start
        let end = bytes.count
        while index < end {
            if !sawCR && !onStatusLine {
                // Inside a field line only CR, LF and the limit matter: skip to the next of them.
                let window = min(end, index + (limit - byteCount))
                var next = index
                while next < window {
                    let byte = bytes[next]
                    if byte <= ASCII.cr && (byte == ASCII.cr || byte == ASCII.lf) { break }
                    next += 1
                }
                column += next - index
                byteCount += next - index
                index = next
                if index == end { return nil }
            }
            let byte = bytes[index]
            if byteCount >= limit {
                return (index, ResponseDecoderError(kind: .headersTooLarge, reason: "field section larger than \(limit) bytes"))
            }
            byteCount += 1
            if sawCR {
                guard byte == ASCII.lf else { return (index, .malformed("CR not followed by LF in a field section")) }
                sawCR = false
                if column == 0 {
                    isActive = false  // the empty line: llhttp takes it from here
                    return nil
                }
                column = 0
                onStatusLine = false
            } else if byte == ASCII.lf {
                return (index, .malformed("line ending in a bare LF in a field section"))
            } else if byte == ASCII.cr {
                // "HTTP/1.1 200" is the shortest status line; this also refuses CRLF before it.
                if onStatusLine && column < 12 { return (index, .malformed("status line too short")) }
                sawCR = true
            } else {
                if onStatusLine, let problem = Self.statusLineProblem(byte, at: column) {
                    return (index, .malformed(problem))
                }
                column += 1
            }
            index += 1
        }
        return nil
    }

    /// Checks one byte of `HTTP/d.d SP ddd [SP reason]` (RFC 9112 §4) at `column`.
    private static func statusLineProblem(_ byte: UInt8, at column: Int) -> String? {
        switch column {
        case 0:
            return byte == UInt8(ascii: "H") ? nil : "status line does not start with HTTP/"
        case 1, 2:
            return byte == UInt8(ascii: "T") ? nil : "status line does not start with HTTP/"
        case 3:
            return byte == UInt8(ascii: "P") ? nil : "status line does not start with HTTP/"
        case 4:
            return byte == UInt8(ascii: "/") ? nil : "status line does not start with HTTP/"
        case 5, 7:
            return ASCII.isDigit(byte) ? nil : "malformed HTTP version"
        case 6:
            return byte == UInt8(ascii: ".") ? nil : "malformed HTTP version"
        case 8, 12:
            return byte == ASCII.space ? nil : "status line fields not separated by one space"
        case 9...11:
            return ASCII.isDigit(byte) ? nil : "status code is not three digits"
        default:
            // reason-phrase = 1*( HTAB / SP / VCHAR / obs-text )
            return byte == ASCII.tab || (byte >= 0x20 && byte != 0x7F) ? nil : "control character in the reason phrase"
        }
    }
}

/// Byte constants shared by the decoder files.
enum ASCII {
    static let cr = UInt8(ascii: "\r")
    static let lf = UInt8(ascii: "\n")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")

    /// SP or HTAB: optional whitespace (RFC 9110 §5.6.3).
    @inline(__always) static func isWhitespace(_ byte: UInt8) -> Bool { byte == space || byte == tab }

    /// 0-9.
    @inline(__always) static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    /// ASCII case-insensitive comparison of `bytes` with a lowercase `literal`.
    static func equalsLowercase<Bytes: Collection<UInt8>>(_ bytes: Bytes, _ literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        return literal.withUTF8Buffer { expected in
            var index = 0
            for byte in bytes {
                let folded = (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) ? byte | 0x20 : byte
                if folded != expected[index] { return false }
                index += 1
            }
            return true
        }
    }
}
