import CLLHTTP

// Sans-I/O HTTP/1.1 request parser on top of llhttp 8.1 (strict mode), built like the response
// parser so that the two read alike.
//
// Theory of operation
// - Bytes in (`feed`, `finish`); heads, body bytes and ends out, handed to a consumer (a server's
//   connection) as they are parsed; no socket, no clock. One parser reads one stream: request
//   after request (pipelining), with no call in between.
// - Scanners walk the raw bytes just ahead of llhttp: `RequestLineScanner` over the request line,
//   `FieldSectionScanner` (the response parser's) over the field lines and the trailer section,
//   `ChunkLineScanner` over a chunked body's framing lines. They check what llhttp 8.1 lets
//   through and the limits, and find each bare LF. When one finds a problem at byte i, llhttp is
//   first run on the bytes before i, so that whichever problem comes first in the stream wins
//   however the stream was split; a bare LF (when allowed) reaches llhttp behind a CR from a
//   constant, as in the response parser. The head's lines are copied once (the line into
//   `requestLine`, the fields into `record`), into storage reused from request to request.
// - llhttp validates (methods, target characters, version, field syntax) with no callback for the
//   start line, names or values. At headers-complete (RequestParser+Callbacks.swift) one walk over
//   the recorded field lines reads the framing (Content-Length is ours, as in the response
//   parser: repeats and lists are an option) and Expect, and applies the request smuggling rules
//   of RFC 9112 §6.1 and §6.3.
// - Every request ends in a pause (on_message_complete returns HPE_PAUSED), and the trailer
//   section and a chunked body start with one: a pause says exactly where we are in the bytes.
//   At a request's end llhttp is reset for the next one on the same bytes, unless the request
//   ends the stream's HTTP/1.1 (not keep-alive, an upgrade, a CONNECT): parsing stops there.
//
// Rules kept
// - Once an error is thrown, the parser is dead: every later `feed`/`finish` throws the same error
//   and emits nothing.
// - Nothing is buffered beyond the limits: a head or trailer section stops at maxHeaderBytes raw
//   bytes, a body at maxBodyBytes, a target at maxTargetBytes.

/// Parses the HTTP/1.1 requests of one stream (a server's connection, a capture, a fuzzer's
/// input): bytes in, events out.
///
/// Feed it the stream's bytes as they come, split anywhere (`feed(_:to:)`, or `feed(_:)` for
/// values); call `finish()` at the end of the stream. Requests follow one another on the stream
/// with no call in between. Not thread-safe and not re-entrant: one thread feeds it.
///
/// Strict by default (RFC 9112 as a server must read it); `Options` relaxes three things that
/// some clients send. Refused whatever the options, since a proxy in front could frame the
/// message otherwise (request smuggling, RFC 9112 §6.1, §6.3, §11.2): Content-Length together
/// with Transfer-Encoding, a Transfer-Encoding other than one `chunked` (and any in HTTP/1.0), an
/// invalid Content-Length, a CR not followed by LF, whitespace between a field name and its colon.
public final class RequestParser {
    /// Limits and leniencies. The defaults are strict.
    public struct Options: Equatable, Sendable {
        /// Raw bytes of one head (empty lines before it, request line, fields, final empty line),
        /// and likewise of a trailer section. Beyond: `.headersTooLarge`. 64 KiB by default.
        public var maxHeaderBytes: Int
        /// Bytes of the request target; nil (the default) for no bound but the head's. Beyond:
        /// `.targetTooLong`, so that a server can answer 414 rather than 431.
        public var maxTargetBytes: Int?
        /// Bytes of one body after chunked decoding; nil (the default) for no limit. Beyond, or
        /// announced beyond by Content-Length: `.bodyTooLarge`.
        public var maxBodyBytes: Int?
        /// Take a bare LF as a line end in the head, the chunked framing and the trailers
        /// (RFC 9112 §2.2 lets a recipient do so). Off by default: a bare LF is `.malformed`.
        public var allowsBareLF: Bool
        /// Take an obs-fold (a field line starting with SP or HTAB) as part of the previous
        /// value, joined with one SP (RFC 9112 §5.2). Off by default: `.malformed`, as RFC 9112
        /// §5.2 asks of a server that does not replace each fold with SP itself.
        public var allowsObsFold: Bool
        /// Take several Content-Length values that are all equal (repeated fields, or a list
        /// such as "6, 6") as one (RFC 9110 §8.6). Off by default: `.malformed`. Differing values
        /// are refused either way.
        public var allowsRepeatedContentLength: Bool

        /// Options with these values; strict and 64 KiB heads by default.
        public init(maxHeaderBytes: Int = 64 * 1024, maxTargetBytes: Int? = nil, maxBodyBytes: Int? = nil,
                    allowsBareLF: Bool = false, allowsObsFold: Bool = false, allowsRepeatedContentLength: Bool = false) {
            self.maxHeaderBytes = maxHeaderBytes
            self.maxTargetBytes = maxTargetBytes
            self.maxBodyBytes = maxBodyBytes
            self.allowsBareLF = allowsBareLF
            self.allowsObsFold = allowsObsFold
            self.allowsRepeatedContentLength = allowsRepeatedContentLength
        }
    }

    /// Which part of the current request llhttp is in; decides which scanner runs.
    package enum Section: Equatable {
        case requestLine, fields, body, trailers
    }

    /// Why llhttp last paused (set by the callback that returned HPE_PAUSED).
    package enum Pause: Equatable {
        /// A chunked body starts here: its framing lines are scanned from its first byte.
        case chunkedBody
        /// The last chunk's size line ended: the trailer section starts here.
        case lastChunk
        /// The request ended.
        case requestComplete
    }

    /// The options this parser applies.
    public let options: Options

    /// llhttp's state, at a fixed address so the callbacks reach it without an exclusive access
    /// to `self`.
    package let parser: UnsafeMutablePointer<llhttp_t>

    // Mutable state. `@exclusivity(unchecked)`: confined to one thread and never re-entered
    // (`executing` guards that); the per-access checks would cost more than the parsing of a
    // small request.

    // Stream-level state.
    /// Set once an error was thrown: the parser is dead.
    @exclusivity(unchecked) package var failure: RequestParseError?
    /// A request ended the stream's HTTP/1.1: nothing more is consumed.
    @exclusivity(unchecked) package var stopped = false
    /// Inside feed/finish (re-entrancy guard).
    @exclusivity(unchecked) package var executing = false
    /// Who gets the events, during one feed (its caller keeps it alive).
    @exclusivity(unchecked) unowned(unsafe) var consumer: (any RequestParserConsumer)?
    /// Bytes consumed before the bytes of the current feed: stream offset of their first byte.
    @exclusivity(unchecked) package var streamOffset = 0
    /// During an llhttp_execute: the stream offset of its first byte, and that byte's address.
    @exclusivity(unchecked) package var executeOffset = 0
    @exclusivity(unchecked) package var executeBase: UnsafePointer<CChar>?

    // Request-level state, reset by `startRequest`.
    @exclusivity(unchecked) package var section = Section.requestLine
    @exclusivity(unchecked) package var lineScanner = RequestLineScanner.start
    @exclusivity(unchecked) package var scanner = FieldSectionScanner.inactive
    @exclusivity(unchecked) package var chunkScanner = ChunkLineScanner.inactive
    @exclusivity(unchecked) package var pause: Pause?
    /// An error found by a callback, for the parsing loop to throw.
    @exclusivity(unchecked) package var callbackError: RequestParseError?
    /// The request line as received, without its line end.
    @exclusivity(unchecked) package var requestLine = ByteAccumulator(capacity: 128)
    /// The field section (or trailer section) being received, and where its lines lie.
    @exclusivity(unchecked) package var record = SectionRecord()
    /// Stream offset of the first byte of the section in `record`.
    @exclusivity(unchecked) package var recordOffset = 0
    /// Lines of `record` already checked for an obs-fold.
    @exclusivity(unchecked) package var foldCheckedLines = 0
    /// Scratch for the fields' bounds and the values that obs-fold made non-contiguous.
    @exclusivity(unchecked) package var boundsScratch = ScratchList<ReceivedFields.Bounds>(capacity: 16)
    @exclusivity(unchecked) package var foldBytes = ByteAccumulator(capacity: 0)
    /// Framing and Expect as the head's fields gave them.
    @exclusivity(unchecked) package var contentLength: UInt64?
    @exclusivity(unchecked) package var sawTransferEncoding = false
    @exclusivity(unchecked) package var transferCodingCount = 0
    @exclusivity(unchecked) package var transferCodingsAllChunked = true
    @exclusivity(unchecked) package var sawExpectContinue = false
    /// The request ends the stream's HTTP/1.1 (known at headers-complete).
    @exclusivity(unchecked) package var endsStream = false
    /// Body bytes of this request so far, for the limit.
    @exclusivity(unchecked) package var bodyByteCount = 0

    /// A parser at the start of a stream.
    public init(options: Options = Options()) {
        self.options = options
        parser = .allocate(capacity: 1)
        llhttp_init(parser, HTTP_REQUEST, RequestParser.settings)
        // Unretained: the parser owns llhttp's state, so it outlives every callback.
        parser.pointee.data = Unmanaged.passUnretained(self).toOpaque()
    }

    /// Frees llhttp's state (plain data).
    deinit {
        parser.deallocate()
    }

    /// Parses `bytes`, handing heads, body bytes and ends to `consumer` as they are parsed, and
    /// returns how many bytes were consumed: all of them, unless a request ended the stream's
    /// HTTP/1.1 (`isStopped`: not keep-alive, an upgrade or a CONNECT), after whose end nothing
    /// more is consumed. On throw, `consumer` has had what was parsed before the error and the
    /// parser is dead (every later call throws the same error).
    @discardableResult
    public func feed(_ bytes: UnsafeRawBufferPointer, to consumer: any RequestParserConsumer) throws(RequestParseError) -> Int {
        precondition(!executing, "RequestParser is not re-entrant")
        if let failure { throw failure }
        guard !stopped, !bytes.isEmpty else { return 0 }
        executing = true
        self.consumer = consumer
        defer {
            self.consumer = nil
            executing = false
        }
        let consumed = try parse(bytes)
        streamOffset += consumed
        return consumed
    }

    /// The stream ended. Fine between requests (empty lines included) and after a stop; inside a
    /// request it throws `.truncatedBody`, at the stream's length.
    public func finish() throws(RequestParseError) {
        precondition(!executing, "RequestParser is not re-entrant")
        if let failure { throw failure }
        if stopped || (section == .requestLine && !lineScanner.hasBegun) { return }
        let reason: String
        switch section {
        case .requestLine, .fields: reason = "stream ended inside the request head"
        case .body: reason = "stream ended inside the body"
        case .trailers: reason = "stream ended inside the trailer section"
        }
        throw fail(RequestParseError(kind: .truncatedBody, reason: reason, offset: streamOffset))
    }

    /// A request ended the stream's HTTP/1.1 (not keep-alive, an upgrade, a CONNECT): the bytes
    /// after its end are not consumed. Whoever serves an upgrade takes them from there.
    public var isStopped: Bool { stopped }

    /// No request is in progress: the stream may end here cleanly.
    public var isBetweenRequests: Bool { stopped || (section == .requestLine && !lineScanner.hasBegun) }

    /// Bytes consumed since the parser was created (the offset of the next byte to feed).
    public var consumedByteCount: Int { streamOffset }

    // MARK: - Parsing loop

    /// Runs llhttp over `bytes`, stopping it early where a scanner found a problem or a bare LF,
    /// and handling each pause. Returns the bytes consumed.
    private func parse(_ bytes: UnsafeRawBufferPointer) throws(RequestParseError) -> Int {
        let base = bytes.baseAddress!.assumingMemoryBound(to: CChar.self)
        // llhttp has bytes[..<offset]; the active scanner has looked at bytes[..<scanned].
        var offset = 0
        var scanned = 0
        while offset < bytes.count {
            let found = scanAhead(bytes, from: scanned, llhttpAt: offset)
            let stop = found?.index ?? bytes.count
            scanned = found.map { $0.insertsCR ? $0.index + 1 : $0.index } ?? bytes.count
            if stop > offset {
                if let consumed = try execute(base + offset, count: stop - offset, at: offset) {
                    offset += consumed
                    // Every pause starts a new section, whose scanner starts here.
                    scanned = offset
                    if handlePause(at: offset) { return offset }
                    continue
                }
                offset = stop
            }
            guard let found else { continue }
            // llhttp took every byte before this one without complaint: ours is the first problem.
            if var problem = found.problem {
                problem.offset = streamOffset + found.index
                throw fail(problem)
            }
            if found.insertsCR {
                // A bare LF: llhttp gets the CR it wants first, then the LF with the bytes after it.
                let paused = try execute(Self.carriageReturn, count: 1, at: found.index)
                assert(paused == nil, "llhttp paused on a CR")
            }
        }
        return offset
    }

    /// Where llhttp must stop: before a problem, before a bare LF it must get a CR in front of
    /// (`insertsCR`), or at the end of the request line (neither).
    private struct Stop {
        var index: Int
        var problem: RequestParseError?
        var insertsCR: Bool
    }

    /// Where the active scanner stops llhttp in `bytes` from `start` (llhttp being at `offset`);
    /// nil to run llhttp to the end of the bytes.
    private func scanAhead(_ bytes: UnsafeRawBufferPointer, from start: Int, llhttpAt offset: Int) -> Stop? {
        switch section {
        case .requestLine:
            guard lineScanner.isActive else { return nil }
            let (stop, end) = lineScanner.scan(bytes, from: start, options: options, into: &requestLine)
            if let stop {
                // A bare LF that ended the line: the field lines start after it.
                if stop.problem == nil && !lineScanner.isActive { beginFieldSection(at: end) }
                return Stop(index: stop.index, problem: stop.problem, insertsCR: stop.problem == nil)
            }
            guard !lineScanner.isActive else { return nil }
            // The line ended with CRLF: llhttp runs to its end, the field lines are scanned from there.
            beginFieldSection(at: end)
            return Stop(index: end, problem: nil, insertsCR: false)
        case .fields, .trailers:
            guard scanner.isActive else { return nil }
            // The request line counts towards the head's limit.
            let limit = section == .fields ? options.maxHeaderBytes - lineScanner.byteCount : options.maxHeaderBytes
            var result: Stop?
            // Bare LF and obs-fold are judged here, against this parser's options (the scanner reports
            // each bare LF as a stop either way; folds are found by `firstFoldStart`).
            if let found = scanner.scan(bytes, from: start, limit: limit, allowsBareLF: true, allowsObsFold: true, into: &record) {
                if let problem = found.problem {
                    let reason = problem.kind == .headersTooLarge
                        ? "\(section == .fields ? "head" : "trailer section") larger than \(options.maxHeaderBytes) bytes"
                        : problem.reason
                    result = Stop(index: found.index, problem: RequestParseError(
                        kind: problem.kind == .headersTooLarge ? .headersTooLarge : .malformed, reason: reason, offset: 0), insertsCR: false)
                } else if options.allowsBareLF {
                    result = Stop(index: found.index, problem: nil, insertsCR: true)
                } else {
                    result = Stop(index: found.index, problem: RequestParseError(
                        kind: .malformed, reason: "bare LF ending a line of a field section", offset: 0), insertsCR: false)
                }
            }
            if !options.allowsObsFold, let fold = firstFoldStart(), fold - streamOffset < (result?.index ?? bytes.count) {
                // The fold's first byte is the first problem; llhttp has not had it yet.
                return Stop(index: max(fold - streamOffset, offset), problem: RequestParseError(
                    kind: .malformed, reason: "obs-fold (a field line starting with whitespace)", offset: 0), insertsCR: false)
            }
            return result
        case .body:
            guard chunkScanner.isActive, let lf = chunkScanner.scan(bytes, from: start) else { return nil }
            if options.allowsBareLF { return Stop(index: lf, problem: nil, insertsCR: true) }
            return Stop(index: lf, problem: RequestParseError(kind: .malformed, reason: "bare LF in chunked framing", offset: 0),
                        insertsCR: false)
        }
    }

    /// The stream offset of the first byte of an obs-fold line scanned so far in `record`, or nil.
    /// Looks at each line start once: the recorded lines' own, and the line being scanned.
    private func firstFoldStart() -> Int? {
        let lines = record.lines.elements
        while foldCheckedLines < lines.count {
            let line = lines[foldCheckedLines]
            if line.colon == SectionRecord.Line.continuation { return recordOffset + Int(line.start) }
            foldCheckedLines += 1
        }
        // The line being scanned starts after the last one's end (its CR or LF).
        let bytes = record.bytes.bytes
        var next = 0
        if let last = lines.last {
            next = Int(last.end) + (bytes[Int(last.end)] == DecoderASCII.cr ? 2 : 1)
        }
        if next < bytes.count && DecoderASCII.isWhitespace(bytes[next]) { return recordOffset + next }
        return nil
    }

    /// The request line ended at `end` (an index in the bytes being fed): field lines follow.
    private func beginFieldSection(at end: Int) {
        section = .fields
        scanner = .trailers
        record.removeAll()
        recordOffset = streamOffset + end
        foldCheckedLines = 0
    }

    /// One CR, fed to llhttp in front of a bare LF; never written to, never freed.
    nonisolated(unsafe) private static let carriageReturn: UnsafePointer<CChar> = {
        let byte = UnsafeMutablePointer<CChar>.allocate(capacity: 1)
        byte.initialize(to: CChar(bitPattern: DecoderASCII.cr))
        return UnsafePointer(byte)
    }()

    /// One llhttp_execute of bytes starting at index `index` of the feed (for the injected CR,
    /// the LF's). Returns nil when every byte was consumed, or the count consumed up to a pause.
    private func execute(_ start: UnsafePointer<CChar>, count: Int, at index: Int) throws(RequestParseError) -> Int? {
        executeOffset = streamOffset + index
        executeBase = start
        let result = llhttp_execute(parser, start, count)
        if result == HPE_OK { return nil }
        if result == HPE_PAUSED {
            precondition(pause != nil, "llhttp paused without a callback asking for it")
            // error_pos is the first byte not consumed.
            return llhttp_get_error_pos(parser).map { $0 - start } ?? count
        }
        if let callbackError { throw fail(callbackError) }
        // llhttp's error position, unclamped: for some errors it is the byte after the offending
        // one, which may be the end of this piece; clamping it into the piece made the offset
        // depend on how the stream was split (found by the request-parser harness).
        let position = llhttp_get_error_pos(parser).map { max($0 - start, 0) } ?? 0
        throw fail(Self.llhttpError(result, parser: parser, offset: executeOffset + position))
    }

    /// The stream offset of a byte llhttp handed a callback.
    package func streamOffset(of pointer: UnsafePointer<CChar>?) -> Int {
        guard let pointer, let executeBase else { return executeOffset }
        return executeOffset + (pointer - executeBase)
    }

    /// Acts on the pause llhttp just returned, `offset` bytes into the feed. Returns true when
    /// parsing stops for good (the request ended the stream's HTTP/1.1).
    private func handlePause(at offset: Int) -> Bool {
        let reason = pause
        pause = nil
        switch reason {
        case .requestComplete:
            if endsStream {
                stopped = true
                return true
            }
            startRequest()
            return false
        case .chunkedBody:
            llhttp_resume(parser)
            chunkScanner = .start
            return false
        case .lastChunk:
            llhttp_resume(parser)
            section = .trailers
            scanner = .trailers
            chunkScanner = .inactive
            record.removeAll()
            recordOffset = streamOffset + offset
            foldCheckedLines = 0
            return false
        case nil:
            preconditionFailure("pause handled twice")
        }
    }

    /// Resets llhttp and the per-request state for the next request line.
    private func startRequest() {
        llhttp_reset(parser)
        section = .requestLine
        lineScanner = .start
        scanner = .inactive
        chunkScanner = .inactive
        callbackError = nil
        requestLine.removeAll()
        record.shrinkIfGrown()
        if boundsScratch.capacity > SectionRecord.keptLines { boundsScratch = ScratchList(capacity: 16) }
        foldBytes.removeAll(shrinkingPast: SectionRecord.keptBytes, to: 0)
        requestLine.removeAll(shrinkingPast: SectionRecord.keptBytes, to: 128)
        contentLength = nil
        sawTransferEncoding = false
        transferCodingCount = 0
        transferCodingsAllChunked = true
        sawExpectContinue = false
        endsStream = false
        bodyByteCount = 0
    }

    /// Marks the parser dead with `error` and returns it for throwing.
    package func fail(_ error: RequestParseError) -> RequestParseError {
        failure = error
        return error
    }

    /// A `.malformed` error from llhttp's errno and reason (which may be NULL).
    package static func llhttpError(_ code: llhttp_errno_t, parser: UnsafePointer<llhttp_t>, offset: Int) -> RequestParseError {
        let error = LLHTTPError(code, parser: parser)
        return RequestParseError(kind: .malformed, reason: error.reason, offset: offset, llhttpCode: error.name)
    }
}
