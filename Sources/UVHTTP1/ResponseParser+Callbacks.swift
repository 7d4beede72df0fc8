import CLLHTTP

// llhttp's callbacks: head complete, body, chunk header, message complete, and one per field name
// that stays in C-level code. They are plain C function pointers that capture nothing: each finds
// its decoder through `parser.data` and calls one method here. A method returns 0 to go on,
// HPE_PAUSED to stop llhttp at a boundary the decoding loop handles, or `failCallback`'s code
// after storing the error to throw.

extension ResponseParser {
    /// The callback table shared by every decoder; llhttp requires it to outlive the parser,
    /// so it is allocated once and never freed.
    package nonisolated(unsafe) static let settings: UnsafePointer<llhttp_settings_t> = {
        let settings = UnsafeMutablePointer<llhttp_settings_t>.allocate(capacity: 1)
        llhttp_settings_init(settings)
        // No callback for the status line, names or values: the scanner has recorded the
        // section (`record`), and llhttp only validates it. The one per-field callback that
        // remains runs no Swift method: it keeps llhttp from parsing Content-Length itself.
        settings.pointee.on_header_field_complete = { parser in
            ResponseParser.releaseContentLength(parser!)
        }
        settings.pointee.on_headers_complete = { parser in
            withDecoder(parser) { $0.onHeadersComplete() }
        }
        settings.pointee.on_body = { parser, at, length in
            withDecoder(parser) { $0.onBody(at, length) }
        }
        settings.pointee.on_chunk_header = { parser in
            withDecoder(parser) { $0.onChunkHeader() }
        }
        settings.pointee.on_message_complete = { parser in
            withDecoder(parser) { $0.onMessageComplete() }
        }
        return UnsafePointer(settings)
    }()

    // MARK: - Fields

    /// llhttp's header_state for a Content-Length name (HEADER_STATE_CONTENT_LENGTH, the same in
    /// 8.x and 9.x).
    package static let contentLengthHeaderState: UInt8 = 2

    /// A field name is complete. A Content-Length is ours to read (`noteFraming`): setting
    /// llhttp's header state back to 0 ("general") before it looks at the value makes llhttp
    /// take the value as any other, so it neither refuses a repeat or a list nor counts it. One
    /// in the trailers frames nothing (RFC 9110 §6.5.1) and is passed on as any field (9.x would
    /// otherwise refuse it next to chunked; 8.1 lets it through).
    @inline(__always)
    package static func releaseContentLength(_ parser: UnsafeMutablePointer<llhttp_t>) -> Int32 {
        if parser.pointee.header_state == contentLengthHeaderState { parser.pointee.header_state = 0 }
        return 0
    }

    /// The recorded section's fields, in one array (`ReceivedFields`): names and values are
    /// bounds into the raw bytes, except a value with an obs-fold, which RFC 9112 §5.2 asks a
    /// user agent to join with one SP per fold (each piece trimmed, empty pieces dropped): those
    /// are written after the raw bytes. The record's storage is kept for the next section.
    ///
    /// For a head (`readingHead`), the same walk reads the framing fields (every Content-Length
    /// and Transfer-Encoding; `framingProblem` is why they cannot frame a body) and finds the
    /// first Date field (`dateIndex`, -1 without one), so no later pass looks at the names again.
    package func takeSection(readingHead: Bool = false) -> (fields: ReceivedFields, framingProblem: String?, dateIndex: Int) {
        var framingProblem: String?
        var dateIndex = -1
        record.walkFields(into: &boundsScratch, folded: &foldBytes) { name, value, _, index in
            guard readingHead else { return }
            switch name.count {
            case 4:
                if dateIndex < 0 && DecoderASCII.equalsLowercase(name, "date") { dateIndex = index }
            case 14, 17:
                if framingProblem == nil { framingProblem = noteFraming(name: name, value: value) }
            default:
                break
            }
        }
        let fields = ReceivedFields(section: record.bytes.bytes, extra: foldBytes.bytes, bounds: boundsScratch.elements)
        return (fields, framingProblem, dateIndex)
    }

    /// Reads one field of a head if it frames the body (a Content-Length or Transfer-Encoding;
    /// the caller picked names of those lengths). Returns why the head cannot frame a body, or nil.
    private func noteFraming(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) -> String? {
        if name.count == 14 && DecoderASCII.equalsLowercase(name, "content-length") { return noteContentLength(value) }
        if name.count == 17 && DecoderASCII.equalsLowercase(name, "transfer-encoding") { noteTransferCodings(value) }
        return nil
    }

    /// Counts the transfer codings in one Transfer-Encoding value (a comma list, empty elements allowed).
    private func noteTransferCodings(_ value: UnsafeBufferPointer<UInt8>) {
        sawTransferEncoding = true
        var elementStart = 0
        for index in 0...value.count where index == value.count || value[index] == UInt8(ascii: ",") {
            let element = DecoderASCII.trimmingWhitespace(UnsafeBufferPointer(rebasing: value[elementStart..<index]))
            elementStart = index + 1
            if element.isEmpty { continue }
            transferCodingCount += 1
            if !DecoderASCII.equalsLowercase(element, "chunked") { transferCodingsAllChunked = false }
        }
    }

    /// Reads one Content-Length value: a decimal number, or a list of the same number (RFC 9110
    /// §8.6: "6, 6" is what a proxy makes of two fields). Every value of every field must agree.
    /// Returns why the value cannot frame a body, or nil.
    private func noteContentLength(_ value: UnsafeBufferPointer<UInt8>) -> String? {
        // The usual value, one number of at most 18 digits (so below Int64.max), in one pass
        // without the list walk; anything else takes the general path below.
        if !value.isEmpty && value.count <= 18 && value.allSatisfy(DecoderASCII.isDigit) {
            let parsed = value.reduce(UInt64(0)) { $0 * 10 + UInt64($1 &- UInt8(ascii: "0")) }
            if contentLength != nil && !options.allowsRepeatedContentLength { return "Content-Length repeated" }
            if let contentLength, contentLength != parsed { return "Content-Length fields with differing values" }
            contentLength = parsed
            return nil
        }
        var number: UInt64?
        var elementStart = 0
        for index in 0...value.count where index == value.count || value[index] == UInt8(ascii: ",") {
            let element = DecoderASCII.trimmingWhitespace(UnsafeBufferPointer(rebasing: value[elementStart..<index]))
            elementStart = index + 1
            // Empty list elements are allowed (RFC 9110 §5.6.1).
            if element.isEmpty { continue }
            var parsed: UInt64 = 0
            for byte in element {
                guard DecoderASCII.isDigit(byte) else { return "invalid Content-Length" }
                let digit = UInt64(byte &- UInt8(ascii: "0"))
                // Past Int64.max no body can be counted (nor sent).
                guard parsed <= (UInt64(Int64.max) - digit) / 10 else { return "Content-Length out of range" }
                parsed = parsed * 10 + digit
            }
            if let number, number != parsed { return "Content-Length lists differing values" }
            if number != nil && !options.allowsRepeatedContentLength { return "Content-Length is a list" }
            number = parsed
        }
        guard let number else { return "empty Content-Length" }
        if contentLength != nil && !options.allowsRepeatedContentLength { return "Content-Length repeated" }
        if let contentLength, contentLength != number { return "Content-Length fields with differing values" }
        contentLength = number
        return nil
    }

    // MARK: - Head complete

    /// The head is complete: apply our checks, emit it, and tell llhttp whether a body follows.
    ///
    /// Returns 1 ("no body") for 1xx, HEAD, 204 and 304: strict llhttp 8.1 would otherwise read a
    /// Content-Length body after a 204/304 and wait for one after a HEAD.
    package func onHeadersComplete() -> Int32 {
        // A head that repeats the template's bytes takes its record (`HeadReplay`).
        var replay: (HeadReplay, date: UnsafeRawPointer)?
        let (fields, problem, dateIndex): (ReceivedFields, String?, Int)
        if let start = replayedHead, let headReplay {
            replayedHead = nil
            replay = (headReplay, start + headReplay.dateValue.lowerBound)
            (fields, problem, dateIndex) = takeReplayedSection(of: headReplay)
        } else {
            (fields, problem, dateIndex) = takeSection(readingHead: true)
        }
        if let problem { return failCallback(.malformed(problem)) }
        if let contentLength {
            // What llhttp would have set had it read the field; framing and keep-alive use it.
            parser.pointee.content_length = contentLength
            parser.pointee.flags |= UInt16(F_CONTENT_LENGTH.rawValue)
        }
        let state = parser.pointee
        let status = Int(state.status_code)
        if status == 101 || state.upgrade != 0 {
            return failCallback(HTTP1ParseError(kind: .upgradeRefused, reason: "status \(status): the server switched protocols, which was never requested"))
        }
        if state.http_major != 1 {
            return failCallback(.malformed("HTTP/\(state.http_major).\(state.http_minor) is not HTTP/1.x"))
        }
        if status < 100 { return failCallback(.malformed("status code \(status) below 100")) }
        isInterim = status < 200
        let skipBody = isInterim || toHEAD || status == 204 || status == 304
        if !skipBody, let problem = framingProblem(state) { return failCallback(.malformed(problem)) }
        if skipBody {
            // llhttp sets F_SKIPBODY itself once we return 1; keep-alive must already see it,
            // or a HEAD response without Content-Length would read as EOF-framed.
            parser.pointee.flags |= UInt16(F_SKIPBODY.rawValue)
        }
        let keepAlive = llhttp_should_keep_alive(parser) != 0
        if isInterim {
            interimKeepAlive = interimKeepAlive && keepAlive
            consumer?.parserReceivedInterim(makeHead(state, fields: fields, dateIndex: dateIndex, keepAlive: keepAlive, final: false,
                                                      replaying: replay))
            return 1
        }
        finalKeepAlive = keepAlive
        headBodyLength = skipBody ? 0
            : state.flags & UInt16(F_CONTENT_LENGTH.rawValue) != 0 ? Int64(clamping: state.content_length) : nil
        section = .body
        consumer?.parserReceivedHead(makeHead(state, fields: fields, dateIndex: dateIndex, keepAlive: keepAlive, final: true,
                                               replaying: replay))
        if skipBody { return 1 }
        if let maxBody = options.maxBodyBytes, state.flags & UInt16(F_CONTENT_LENGTH.rawValue) != 0,
           state.content_length > UInt64(maxBody) {
            // The head is fine and already delivered; it is the body that will not fit.
            return failCallback(HTTP1ParseError(kind: .bodyTooLarge, reason: "Content-Length \(state.content_length) exceeds the \(maxBody)-byte body limit"))
        }
        if state.flags & UInt16(F_CHUNKED.rawValue) != 0 {
            // Pause at the body's first byte, so its framing lines are scanned from there.
            pause = .chunkedBody
            return Int32(HPE_PAUSED.rawValue)
        }
        return 0
    }

    /// The framing of a head that repeats the template's bytes (`replaying`): its fields'. The
    /// fields are the head's own (`HeadReplay.replayedHead`), made with it in `makeHead`.
    private func takeReplayedSection(of replaying: HeadReplay)
        -> (fields: ReceivedFields, framingProblem: String?, dateIndex: Int) {
        contentLength = replaying.contentLength
        sawTransferEncoding = replaying.sawTransferEncoding
        transferCodingCount = replaying.transferCodingCount
        transferCodingsAllChunked = replaying.transferCodingsAllChunked
        // The fields themselves come with the head (`HeadReplay.replayedHead`).
        return (ReceivedFields(), nil, replaying.dateIndex)
    }

    /// The head from the recorded section. A final head whose bytes equal those of the
    /// connection's template head apart from Date's value takes it as its template; one that
    /// does not becomes the template for the heads after it (unless it has an obs-fold, which
    /// moves values out of the raw bytes). A head that repeats the template (`replaying`) was
    /// not recorded: it is the replay's head with this head's Date (`HeadReplay.replayedHead`).
    private func makeHead(_ state: llhttp_t, fields: ReceivedFields, dateIndex fieldsDateIndex: Int, keepAlive: Bool, final: Bool,
                          replaying: (HeadReplay, date: UnsafeRawPointer)?) -> ResponseHead {
        if let (replay, date) = replaying { return replay.replayedHead(date: date, keepAlive: keepAlive) }
        let statusLineEnd = Int(record.statusLineEnd)
        // "HTTP/1.1 200 " is 13 bytes: the reason phrase, if any, follows.
        let reason = statusLineEnd > 13
            ? String(decoding: UnsafeBufferPointer(rebasing: record.bytes.bytes[13..<statusLineEnd]), as: UTF8.self) : ""
        var template: ResponseHead?
        var dateIndex = -1
        if final && !record.hasFold, let candidate = templateHead, let match = ResponseHead.templateMatch(fields, dateIndex: fieldsDateIndex, candidate) {
            template = candidate
            dateIndex = match
        }
        let head = ResponseHead(versionMajor: Int(state.http_major), versionMinor: Int(state.http_minor),
                                status: Int(state.status_code), reason: reason, headers: fields, keepAlive: keepAlive,
                                template: template, dateIndex: dateIndex)
        if final && template == nil {
            templateHead = record.hasFold ? nil : head
            headReplay = record.hasFold || record.hasBareLF ? nil : HeadReplay(
                head: head, dateIndex: fieldsDateIndex,
                dateValue: fieldsDateIndex < 0 ? fields.sectionByteCount..<fields.sectionByteCount : fields.valueRange(at: fieldsDateIndex),
                contentLength: contentLength, sawTransferEncoding: sawTransferEncoding,
                transferCodingCount: transferCodingCount, transferCodingsAllChunked: transferCodingsAllChunked,
                bodyLength: final && keepAlive ? replayableBodyLength(state) : nil)
        }
        return head
    }

    /// The body length of a kept-alive final head (`state`, as llhttp left it at headers-complete)
    /// when a later message with the same head bytes may be replayed whole (`HeadReplay.bodyLength`):
    /// a response to a request other than HEAD, not 204 or 304, whose only framing is
    /// Content-Length and whose only other llhttp flag is keep-alive (no close, upgrade,
    /// Transfer-Encoding or chunked). nil for any other head.
    private func replayableBodyLength(_ state: llhttp_t) -> Int? {
        let status = state.status_code
        let allowed = UInt16(F_CONNECTION_KEEP_ALIVE.rawValue | F_CONTENT_LENGTH.rawValue)
        guard !toHEAD, status != 204, status != 304, !sawTransferEncoding, state.upgrade == 0,
              state.flags & ~allowed == 0, state.flags & UInt16(F_CONTENT_LENGTH.rawValue) != 0 else { return nil }
        return Int(exactly: state.content_length)
    }

    /// Why the body of this response cannot be framed reliably (RFC 9112 §6), or nil.
    ///
    /// We never send TE, so a server may apply no transfer coding but chunked (RFC 9112 §7.4),
    /// and chunked exactly once. llhttp 8.1 would read "chunked, gzip" or "gzip" as EOF-framed and
    /// "chunked, chunked" as chunked; all of those are refused here.
    private func framingProblem(_ state: llhttp_t) -> String? {
        let hasTransferEncoding = sawTransferEncoding || state.flags & UInt16(F_TRANSFER_ENCODING.rawValue) != 0
        guard hasTransferEncoding else { return nil }
        if state.flags & UInt16(F_CONTENT_LENGTH.rawValue) != 0 {
            // llhttp refuses this already; kept so the rule does not depend on a lenient flag.
            return "Content-Length together with Transfer-Encoding"
        }
        if state.http_minor == 0 {
            // RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message means faulty framing.
            return "Transfer-Encoding in an HTTP/1.0 response"
        }
        if transferCodingCount != 1 || !transferCodingsAllChunked || state.flags & UInt16(F_CHUNKED.rawValue) == 0 {
            return "Transfer-Encoding other than a single chunked"
        }
        return nil
    }

    // MARK: - Body and end

    /// Body bytes, after chunked decoding: handed to the consumer as they come, up to the body limit.
    package func onBody(_ at: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
        var accepted = length
        var overflow = false
        if let maxBody = options.maxBodyBytes, length > maxBody - bodyByteCount {
            // Deliver what fits, so the bytes delivered do not depend on how reads were split.
            accepted = maxBody - bodyByteCount
            overflow = true
        }
        if accepted > 0 {
            bodyByteCount += accepted
            consumer?.parserReceivedBody(UnsafeRawBufferPointer(start: at, count: accepted))
        }
        if overflow {
            // The first byte past the limit, wherever llhttp stops.
            if let at, let feedBase { callbackErrorIndex = UnsafeRawPointer(at) + accepted - feedBase }
            return failCallback(HTTP1ParseError(kind: .bodyTooLarge, reason: "body exceeds the \(options.maxBodyBytes ?? 0)-byte limit"))
        }
        return 0
    }

    /// A chunk-size line ended; after the last chunk, pause so the trailer section can be scanned
    /// from its first byte (llhttp stops right after the line's LF).
    package func onChunkHeader() -> Int32 {
        guard parser.pointee.content_length == 0 else { return 0 }
        pause = .lastChunk
        return Int32(HPE_PAUSED.rawValue)
    }

    /// A message ended: a 1xx (the final response follows) or the final response. Always pause,
    /// so no byte after the message is consumed.
    package func onMessageComplete() -> Int32 {
        if isInterim {
            pause = .interimComplete
        } else {
            completed = true
            pause = .finalComplete
            consumer?.parserReceivedEnd(trailers: section == .trailers ? takeSection().fields : ReceivedFields())
        }
        return Int32(HPE_PAUSED.rawValue)
    }

    // MARK: - Helpers

    /// Stores `error` for the decoding loop to throw and returns the code that stops llhttp.
    private func failCallback(_ error: HTTP1ParseError) -> Int32 {
        callbackError = error
        return Int32(HPE_USER.rawValue)
    }
}

/// Calls `body` with the decoder that owns `parser`, without retaining it: the decoder owns the
/// parser, so it is alive for as long as llhttp runs.
@inline(__always)
private func withDecoder(_ parser: UnsafeMutablePointer<llhttp_t>?, _ body: (ResponseParser) -> Int32) -> Int32 {
    Unmanaged<ResponseParser>.fromOpaque(parser!.pointee.data!)._withUnsafeGuaranteedRef(body)
}
