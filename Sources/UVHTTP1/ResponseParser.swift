import CLLHTTP

// Sans-I/O HTTP/1.1 response decoder on top of llhttp 8.1 (strict mode).
//
// Theory of operation
// - Bytes in (`feed`, `finish`); heads, body bytes and the end out, handed to a consumer (the
//   connection) as they are decoded; no socket, no clock. One decoder serves one connection;
//   `expectResponse` arms it for the response to each request in turn.
// - One pass over a head. A `FieldSectionScanner` walks the raw bytes of each field section (a
//   head, or the trailer section) just ahead of llhttp: it checks what llhttp 8.1 lets through
//   (line endings, the status-line shape, empty names) and the byte limit, and copies the section
//   once into `record`, noting where each line and colon lies. When it finds a problem at byte i,
//   llhttp is first run on the bytes before i, so that whichever problem comes first in the
//   stream wins however the stream was split.
// - llhttp validates, with no callback for the status line, names or values. At headers-complete
//   (ResponseParser+Callbacks.swift) the head is built from the record (one `ResponseHead`, one
//   byte array), framing and the first Date are read in the same walk over the recorded lines,
//   and the checks that need the whole head (framing, upgrades) are applied. Body bytes go to
//   the consumer as views of the fed bytes.
// - A head that repeats the connection's template head (the last one built in full) apart from
//   Date's value skips the scan and the build (`HeadReplay`): it is recognised by two compares
//   when it starts a read whole, then llhttp validates it as any other. When the template was a
//   kept-alive response framed by Content-Length alone, llhttp is left out too: the message is
//   that head plus the next Content-Length bytes (ResponseParser+MessageReplay.swift).
// - A bare LF ends a line (RFC 9112 §2.2 allows it; curl, Go and browsers accept it), but strict
//   llhttp 8.1 refuses it in field and chunk lines and has no lenient flag for exactly that (9.x
//   has one, lenient_optional_cr_before_lf; what follows works with both, checked on 9.3). The
//   scanners report each LF that lacks its CR (`ChunkLineScanner` does it for the framing lines
//   of a chunked body), and llhttp is fed the bytes before it, then a lone CR from a constant,
//   then the rest: the input is never copied or changed, and body bytes are never looked at. A
//   bare CR stays an error. On the usual CRLF path this costs nothing beyond the scan the head
//   had anyway.
// - Content-Length is read here, not by llhttp, which refuses a repeat of the same value and a
//   list ("6, 6") that RFC 9110 §8.6 lets a recipient take as one value. The field-complete
//   callback (the one per-field callback left, plain C-level work) turns llhttp's own
//   Content-Length parsing off for the field (header_state back to "general"); the head-complete
//   callback reads the values from the record and hands llhttp the result.
// - Every message ends in a pause (on_message_complete returns HPE_PAUSED), and the trailer section
//   starts with one (on_chunk_header of the last chunk). A pause tells us exactly where we are in
//   the buffer: after a 1xx the parser is reset for the next head on the same buffer, after the
//   final response decoding stops, so bytes of a following message are never consumed.
//
// Rules kept
// - Once complete, nothing more is consumed or emitted until `expectResponse`: a non-empty feed
//   before it traps (the caller's mistake, which would otherwise spin a feeding loop).
// - Once an error is thrown, the decoder is dead: every later `feed`/`finish` throws the same error
//   and emits nothing.
// - Nothing is buffered beyond the limits: a head or trailer section stops at maxHeaderBytes raw
//   bytes, a body at maxBodyBytes.

/// Decodes the HTTP/1.1 responses received on one connection, handing heads, body bytes and
/// ends to a `ResponseParserConsumer`.
///
/// Not thread-safe and not re-entrant: one connection's loop thread owns it.
public final class ResponseParser {
    /// Limits, and the leniencies RFC 9112 allows a recipient but does not ask of it. The
    /// default is strict: each leniency is off, so what is refused is exactly what RFC 9112 says a
    /// recipient may refuse. The client turns all three on (what curl, Go and browsers accept;
    /// docs/conformance.md).
    public struct Options: Equatable, Sendable {
        /// Raw bytes of one head, status line and final empty line included (each 1xx head is
        /// counted on its own), and likewise of a trailer section. Default 64 KiB.
        public var maxHeaderBytes: Int
        /// Bytes of one response body after chunked decoding; nil (the default) for no limit.
        public var maxBodyBytes: Int?
        /// Whether a bare LF ends a line of the head, of the trailers or of the chunked framing.
        /// RFC 9112 §2.2 lets a recipient take it as a line end; a mismatch of line ends between
        /// two parsers is a smuggling vector, so the default refuses it (`.malformed`). A bare CR
        /// is refused either way.
        public var allowsBareLF: Bool
        /// Whether obs-fold (a field line continued on a line starting with SP or HTAB) is taken,
        /// its pieces joined by one SP as RFC 9112 §5.2 asks of a user agent that accepts it.
        /// RFC 9112 §5.2 deprecates it and lets a user agent refuse it; the default does.
        public var allowsObsFold: Bool
        /// Whether Content-Length may be repeated with the same value, or be a list of the same
        /// value ("6, 6"), which RFC 9110 §8.6 lets a recipient take as one value. The default
        /// refuses any repeat or list (RFC 9112 §6.3 lets a recipient treat it as invalid);
        /// differing values are refused either way.
        public var allowsRepeatedContentLength: Bool

        /// Options with these limits and leniencies; the defaults are strict.
        public init(maxHeaderBytes: Int = 64 * 1024, maxBodyBytes: Int? = nil, allowsBareLF: Bool = false,
                    allowsObsFold: Bool = false, allowsRepeatedContentLength: Bool = false) {
            self.maxHeaderBytes = maxHeaderBytes
            self.maxBodyBytes = maxBodyBytes
            self.allowsBareLF = allowsBareLF
            self.allowsObsFold = allowsObsFold
            self.allowsRepeatedContentLength = allowsRepeatedContentLength
        }

        /// What UVNetworking's client accepts (docs/conformance.md): every leniency on, with these
        /// limits. For a tool that must read responses exactly as the client does (uvfetch's WARC
        /// writer finds head bounds with it).
        public static func client(maxHeaderBytes: Int = 64 * 1024, maxBodyBytes: Int? = nil) -> Options {
            Options(maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes, allowsBareLF: true, allowsObsFold: true,
                    allowsRepeatedContentLength: true)
        }
    }

    /// Which part of the current message llhttp is in; decides where fields go and how EOF reads.
    package enum Section: Equatable {
        case head, body, trailers
    }

    /// Why llhttp last paused (set by the callback that returned HPE_PAUSED).
    package enum Pause: Equatable {
        /// A 1xx ended: the final response follows on the same bytes.
        case interimComplete
        /// A chunked body starts here: its framing lines are scanned from its first byte.
        case chunkedBody
        /// The final response ended.
        case finalComplete
        /// The last chunk's size line ended: the trailer section starts here.
        case lastChunk
    }

    /// The limits and leniencies this parser applies.
    public let options: Options

    /// llhttp's state. A separate allocation so that its address stays fixed while llhttp holds it
    /// and the callbacks reach it without an exclusive access to `self`.
    package let parser: UnsafeMutablePointer<llhttp_t>

    // Mutable state. `@exclusivity(unchecked)`: the decoder is confined to one thread and never
    // re-entered (`executing` guards that), and the runtime's per-access exclusivity checks on
    // class properties were the largest single cost of decoding a small response.

    // Response-level state (one request's response, 1xx included), touched only by this type
    // and its callbacks.
    /// The request was a HEAD: the final response has no body whatever its fields say.
    @exclusivity(unchecked) package var toHEAD = false
    /// A byte of this response has been fed.
    @exclusivity(unchecked) package var receivedBytes = false
    /// The final response has ended.
    @exclusivity(unchecked) package var completed = false
    /// Set once an error was thrown: the decoder is dead.
    @exclusivity(unchecked) package var failure: HTTP1ParseError?
    /// Bytes consumed by the feeds before this one: where the bytes being fed start in the stream.
    @exclusivity(unchecked) package var streamOffset = 0
    /// The bytes being fed (during a feed), so that a callback can say where its error lies.
    @exclusivity(unchecked) package var feedBase: UnsafeRawPointer?
    /// Inside feed/finish (re-entrancy guard).
    @exclusivity(unchecked) package var executing = false
    /// Who gets the heads, body bytes and end, during one feed or finish (its caller keeps it alive).
    @exclusivity(unchecked) unowned(unsafe) var consumer: (any ResponseParserConsumer)?
    /// No 1xx of this response said the connection closes.
    @exclusivity(unchecked) package var interimKeepAlive = true
    /// llhttp's keep-alive verdict on the final head.
    @exclusivity(unchecked) package var finalKeepAlive = false
    /// The final response's body length as its head announced it: Content-Length, 0 when the
    /// response has no body (HEAD, 204, 304), nil when it is chunked or EOF-framed. Valid from
    /// the `.head` event on; taken from llhttp so the caller need not scan the fields again.
    package var announcedBodyLength: Int64? { headBodyLength }
    /// `announcedBodyLength`'s storage. Other modules read it through that getter:
    /// `@exclusivity(unchecked)` binds only this module's code, and a direct read from
    /// UVNetworking costs a dynamic exclusivity check (swift_beginAccess, ~70 instructions) per
    /// response.
    @exclusivity(unchecked) var headBodyLength: Int64?

    // Message-level state (one status line to its message end), reset by `startMessage`.
    /// Checks the raw bytes of the field section being received, if any.
    @exclusivity(unchecked) package var scanner = FieldSectionScanner.inactive
    /// Finds the line ends of a chunked body's framing, while one is received.
    @exclusivity(unchecked) package var chunkScanner = ChunkLineScanner.inactive
    /// Where llhttp is in the message.
    @exclusivity(unchecked) package var section = Section.head
    /// Why llhttp paused, until the decoding loop handles it.
    @exclusivity(unchecked) package var pause: Pause?
    /// An error found by a callback, for the decoding loop to throw.
    @exclusivity(unchecked) package var callbackError: HTTP1ParseError?
    /// Where in the bytes being fed that error lies, when the callback knows better than
    /// llhttp's error position (a body over its limit: the first byte past it).
    @exclusivity(unchecked) package var callbackErrorIndex: Int?
    /// This message is a 1xx (known at headers-complete).
    @exclusivity(unchecked) package var isInterim = false
    /// The raw bytes of the field section being received and where its lines lie, recorded by
    /// `scanner`; the storage is reused from one section (and one response) to the next.
    @exclusivity(unchecked) package var record = SectionRecord()
    /// Scratch for building a section's `ReceivedFields`: the fields' bounds, and the values
    /// that obs-fold made non-contiguous.
    @exclusivity(unchecked) package var boundsScratch = ScratchList<ReceivedFields.Bounds>(capacity: 0)
    @exclusivity(unchecked) package var foldBytes = ByteAccumulator(capacity: 0)
    /// Transfer-Encoding seen in the head, how many codings it listed, and whether all were chunked.
    @exclusivity(unchecked) package var sawTransferEncoding = false
    @exclusivity(unchecked) package var transferCodingCount = 0
    @exclusivity(unchecked) package var transferCodingsAllChunked = true
    /// The Content-Length value the head's fields gave so far (all of them must agree).
    @exclusivity(unchecked) package var contentLength: UInt64?
    /// Body bytes of this response so far, for the limit.
    @exclusivity(unchecked) package var bodyByteCount = 0

    // Connection-level state.
    /// The last final head decoded on this connection that had no template: the next head whose
    /// bytes match it apart from Date takes it as its template (`ResponseHead.template`).
    @exclusivity(unchecked) package var templateHead: ResponseHead?
    /// What a head that repeats `templateHead` may take from it instead of being scanned; nil when
    /// the template cannot be replayed (an obs-fold or a bare LF in it).
    @exclusivity(unchecked) package var headReplay: HeadReplay?
    /// The head being decoded repeats `headReplay`'s: where it starts in the bytes being fed
    /// (valid during this feed only; cleared at headers-complete and by `startMessage`).
    @exclusivity(unchecked) package var replayedHead: UnsafeRawPointer?
    /// Heads that took the replay (tests and profiles: how often the shortcut is taken).
    @exclusivity(unchecked) package private(set) var replayedHeadCount = 0
    /// Whether a message that repeats a replayable template's is decoded without llhttp
    /// (`replayMessage`). Always on in the library; off only to check the replay against llhttp.
    @exclusivity(unchecked) package var replaysMessages = true
    /// Messages of those heads that were decoded without llhttp (tests and profiles).
    @exclusivity(unchecked) package private(set) var replayedMessageCount = 0
    /// Body bytes still to come of a message decoded without llhttp; nil when none is (llhttp
    /// then sits where `startMessage` left it).
    @exclusivity(unchecked) package var replayedBodyRemaining: Int?

    /// Creates a parser armed for a response to a non-HEAD request.
    public init(options: Options = Options()) {
        self.options = options
        parser = .allocate(capacity: 1)
        llhttp_init(parser, HTTP_RESPONSE, ResponseParser.settings)
        // Unretained: the decoder owns the parser, so it outlives every callback.
        parser.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        startMessage()
    }

    /// Frees llhttp's state (plain data: nothing to deinitialise).
    deinit {
        parser.deallocate()
    }

    /// Prepares for the response to one request. Call before feeding that response's first byte.
    ///
    /// Legal before any byte of the current response or after its `.end`; calling it in between
    /// traps. A dead decoder stays dead. Whether the connection may carry another request is the
    /// caller's decision (`keepAlive`, leftover bytes); the decoder starts afresh either way.
    public func expectResponse(toHEAD: Bool) {
        precondition(!executing, "ResponseParser is not re-entrant")
        guard failure == nil else { return }
        precondition(completed || !receivedBytes, "expectResponse(toHEAD:) called in the middle of a response")
        self.toHEAD = toHEAD
        receivedBytes = false
        completed = false
        interimKeepAlive = true
        finalKeepAlive = false
        startMessage()
    }

    /// Decodes bytes, handing heads, body bytes and the end to `consumer` as they are decoded.
    /// Returns how many bytes were consumed: decoding stops right after the final response's
    /// end; bytes left over belong to no request (the caller then must not reuse the connection).
    /// On throw, `consumer` has had what was decoded before the error and the decoder is dead
    /// (every later call throws the same error).
    ///
    /// Precondition: once the response has ended (`isComplete`), bytes are fed only after
    /// `expectResponse(toHEAD:)` armed the parser for the next response; feeding them before
    /// traps, naming that call. (It would consume nothing and report nothing, and a loop that
    /// feeds until every byte is consumed would never end. A trap, not a thrown error: thrown
    /// errors always mean the input broke the protocol, and this is the caller's order of calls.)
    /// An empty feed is always allowed and consumes nothing.
    public func feed(_ bytes: UnsafeRawBufferPointer, to consumer: any ResponseParserConsumer) throws(HTTP1ParseError) -> Int {
        precondition(!executing, "ResponseParser is not re-entrant")
        if let failure { throw failure }
        guard !bytes.isEmpty else { return 0 }
        precondition(!completed, "ResponseParser.feed after the response's end: call expectResponse(toHEAD:) before feeding the next response's bytes")
        receivedBytes = true
        executing = true
        self.consumer = consumer
        feedBase = bytes.baseAddress
        defer {
            self.consumer = nil
            feedBase = nil
            executing = false
        }
        let consumed = try decode(bytes)
        streamOffset += consumed
        return consumed
    }

    /// The peer closed the connection: ends an EOF-framed body (tells `consumer` of the end) or
    /// throws truncatedBody / closedBeforeResponse.
    public func finish(to consumer: any ResponseParserConsumer) throws(HTTP1ParseError) {
        precondition(!executing, "ResponseParser is not re-entrant")
        if let failure { throw failure }
        if completed { return }
        guard receivedBytes else {
            throw fail(HTTP1ParseError(kind: .closedBeforeResponse, reason: "connection closed before any byte of the response"), at: 0)
        }
        executing = true
        self.consumer = consumer
        defer {
            self.consumer = nil
            executing = false
        }
        // llhttp_finish calls on_message_complete only for an EOF-framed body; anything else
        // unfinished is INVALID_EOF_STATE (or OK with nothing begun, right after a 1xx).
        _ = llhttp_finish(parser)
        if completed { return }
        if let callbackError { throw fail(callbackError, at: 0) }
        let reason: String
        switch section {
        case .head:
            // A fresh head scanner that saw nothing means the last message was a complete 1xx.
            reason = scanner.byteCount == 0 ? "connection closed after an interim response" : "connection closed inside the response head"
        case .body: reason = "connection closed inside the body"
        case .trailers: reason = "connection closed inside the trailer section"
        }
        throw fail(HTTP1ParseError(kind: .truncatedBody, reason: reason), at: 0)
    }

    /// The connection went idle: scratch that a large head (or trailer section) grew is given
    /// back, so that an idle connection holds only what a usual head needs. Storage of the usual
    /// size is kept: the next response reuses it without allocating.
    /// Called per request that ends on a kept connection, so the usual case is four compares.
    @inline(__always)
    package func releaseIdleMemory() {
        if record.bytes.capacity > SectionRecord.keptBytes || record.lines.capacity > SectionRecord.keptLines
            || boundsScratch.capacity > SectionRecord.keptLines || foldBytes.capacity > SectionRecord.keptBytes {
            shrinkScratch()
        }
    }

    private func shrinkScratch() {
        precondition(!executing, "ResponseParser is not re-entrant")
        record.shrinkIfGrown()
        if boundsScratch.capacity > SectionRecord.keptLines { boundsScratch = ScratchList(capacity: 0) }
        foldBytes.removeAll(shrinkingPast: SectionRecord.keptBytes, to: 0)
    }

    /// Bytes and lines the decoder's scratch has room for (tests: what an idle connection keeps).
    package var scratchCapacity: (bytes: Int, lines: Int, bounds: Int, foldBytes: Int) {
        (record.bytes.capacity, record.lines.capacity, boundsScratch.capacity, foldBytes.capacity)
    }

    /// Whether any byte of the current response (1xx included) has been received.
    public var hasReceivedBytes: Bool { receivedBytes }

    /// Whether the final response has ended.
    public var isComplete: Bool { completed }

    /// Whether the final response's body is being read and only the end of the connection can
    /// end it (no Content-Length, not chunked). Over TLS such a body is complete only if the
    /// server said close_notify first: a bare EOF may be an attacker's truncation.
    package var isReadingBodyUntilEOF: Bool {
        !completed && section == .body && headBodyLength == nil
            && parser.pointee.flags & UInt16(F_CHUNKED.rawValue) == 0
    }

    /// After `.end`: whether the connection may carry another request (llhttp keep-alive, and no leftover bytes were seen is the caller's business).
    ///
    /// False before `.end`. An interim response that announced `Connection: close` also makes it false.
    public var keepAlive: Bool { completed && finalKeepAlive && interimKeepAlive }

    // MARK: - Decoding loop

    /// Runs llhttp over `bytes`, stopping it early where a scanner found a problem or a bare LF,
    /// and handling each pause. Returns the bytes consumed.
    private func decode(_ bytes: UnsafeRawBufferPointer) throws(HTTP1ParseError) -> Int {
        // The rest of a replayed message's body, which llhttp never saw the head of.
        if replayedBodyRemaining != nil { return try replayBody(bytes, from: 0) }
        let base = bytes.baseAddress!.assumingMemoryBound(to: CChar.self)
        // llhttp has bytes[..<offset]; the active scanner has looked at bytes[..<scanned].
        var offset = 0
        var scanned = 0
        while offset < bytes.count {
            var stop = bytes.count
            var found: ScanStop?
            if scanner.isActive && scanner.byteCount == 0 && section == .head,
               let headReplay, headReplay.matches(bytes, at: offset) {
                replayedHeadCount &+= 1
                // llhttp has seen nothing of this message (fresh since `startMessage`), as it had
                // seen nothing of the template's: the same bytes frame the same message.
                if replaysMessages, !toHEAD, let bodyLength = headReplay.bodyLength {
                    replayedMessageCount &+= 1
                    return try replayMessage(bytes, at: offset, of: headReplay, bodyLength: bodyLength)
                }
                // The template's record holds for this head: llhttp alone goes over it.
                replayedHead = UnsafeRawPointer(bytes.baseAddress! + offset)
                scanner = .inactive
            }
            if scanner.isActive {
                found = scanner.scan(bytes, from: scanned, limit: options.maxHeaderBytes, allowsBareLF: options.allowsBareLF,
                                     allowsObsFold: options.allowsObsFold, into: &record)
            } else if chunkScanner.isActive, let lf = chunkScanner.scan(bytes, from: scanned) {
                found = ScanStop(index: lf, problem: options.allowsBareLF ? nil : .malformed("bare LF ending a line of the chunked framing"))
            }
            if let found { stop = found.index }
            scanned = found == nil ? bytes.count : stop + 1
            if stop > offset {
                if let consumed = try execute(base + offset, count: stop - offset, at: offset) {
                    offset += consumed
                    // Every pause starts a new section, whose scanner starts here.
                    scanned = offset
                    if handlePause() { return offset }
                    continue
                }
                offset = stop
            }
            guard let found else { continue }
            // llhttp took every byte before this one without complaint: ours is the first problem.
            if let problem = found.problem { throw fail(problem, at: found.index) }
            // A bare LF: llhttp gets the CR it wants first, then the LF with the bytes after it.
            let paused = try execute(Self.carriageReturn, count: 1, at: found.index)
            assert(paused == nil, "llhttp paused on a CR")
        }
        return offset
    }

    /// One CR, fed to llhttp in front of a bare LF; never written to, never freed.
    nonisolated(unsafe) private static let carriageReturn: UnsafePointer<CChar> = {
        let byte = UnsafeMutablePointer<CChar>.allocate(capacity: 1)
        byte.initialize(to: CChar(bitPattern: DecoderASCII.cr))
        return UnsafePointer(byte)
    }()

    /// One llhttp_execute of the bytes fed from `index` on (or of the CR fed before the bare LF at
    /// `index`). Returns nil when every byte was consumed, or the count consumed up to a pause.
    private func execute(_ start: UnsafePointer<CChar>, count: Int, at index: Int) throws(HTTP1ParseError) -> Int? {
        let result = llhttp_execute(parser, start, count)
        if result == HPE_OK { return nil }
        if result == HPE_PAUSED {
            precondition(pause != nil, "llhttp paused without a callback asking for it")
            // error_pos is the first byte not consumed (checked against llhttp 8.1).
            return llhttp_get_error_pos(parser).map { $0 - start } ?? count
        }
        // llhttp's error position is the byte it stopped at (the LF itself for the CR fed before it).
        let position = callbackErrorIndex
            ?? index + (start == Self.carriageReturn ? 0 : llhttp_get_error_pos(parser).map { $0 - start } ?? 0)
        throw fail(callbackError ?? Self.llhttpError(result, parser: parser), at: position)
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
        case .chunkedBody:
            llhttp_resume(parser)
            chunkScanner = .start
            return false
        case .lastChunk:
            llhttp_resume(parser)
            scanner = .trailers
            record.removeAll()
            chunkScanner = .inactive
            section = .trailers
            return false
        case nil:
            preconditionFailure("pause handled twice")
        }
    }

    /// Resets llhttp and the per-message state for the next status line.
    package func startMessage() {
        llhttp_reset(parser)
        scanner = .head
        replayedHead = nil
        replayedBodyRemaining = nil
        chunkScanner = .inactive
        section = .head
        pause = nil
        callbackError = nil
        callbackErrorIndex = nil
        isInterim = false
        record.removeAll()
        sawTransferEncoding = false
        transferCodingCount = 0
        transferCodingsAllChunked = true
        contentLength = nil
        bodyByteCount = 0
    }

    /// Marks the parser dead with `error`, found at `index` in the bytes being fed (at the end of
    /// the stream for `finish`), and returns it for throwing.
    package func fail(_ error: HTTP1ParseError, at index: Int) -> HTTP1ParseError {
        var error = error
        error.offset = streamOffset + index
        failure = error
        return error
    }

    /// Builds a `.malformed` error from llhttp's errno and reason (which may be NULL).
    package static func llhttpError(_ code: llhttp_errno_t, parser: UnsafePointer<llhttp_t>) -> HTTP1ParseError {
        let error = LLHTTPError(code, parser: parser)
        return .malformed(error.reason, llhttpCode: error.name)
    }
}

/// Byte constants and helpers shared by the response decoder files.
package enum DecoderASCII {
    package static let cr = UInt8(ascii: "\r")
    package static let lf = UInt8(ascii: "\n")
    package static let space = UInt8(ascii: " ")
    package static let tab = UInt8(ascii: "\t")
    package static let colon = UInt8(ascii: ":")

    /// SP or HTAB: optional whitespace (RFC 9110 §5.6.3).
    @inline(__always) package static func isWhitespace(_ byte: UInt8) -> Bool { byte == space || byte == tab }

    /// 0-9.
    @inline(__always) package static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    /// ASCII case-insensitive comparison of `bytes` with a lowercase `literal`.
    package static func equalsLowercase(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        let expected = literal.utf8Start
        for index in 0..<bytes.count {
            let byte = bytes[index]
            let folded = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
            if folded != expected[index] { return false }
        }
        return true
    }

    /// `bytes` without leading and trailing SP/HTAB.
    package static func trimmingWhitespace(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var start = 0
        var end = bytes.count
        while start < end && isWhitespace(bytes[start]) { start += 1 }
        while end > start && isWhitespace(bytes[end - 1]) { end -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    /// The bytes of an llhttp span. Int8 and UInt8 may alias, so viewing the chars as bytes is sound.
    @inline(__always) package static func bytes(_ at: UnsafePointer<CChar>?, _ count: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: UnsafeRawPointer(at)?.assumingMemoryBound(to: UInt8.self), count: count)
    }
}
