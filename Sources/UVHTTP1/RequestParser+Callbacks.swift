import CLLHTTP

// llhttp's callbacks: head complete, body, chunk header, request complete, and one per field name
// that stays in C-level code. Plain C function pointers that capture nothing: each finds its
// parser through `parser.data` and calls one method here. A method returns 0 to go on,
// HPE_PAUSED to stop llhttp at a boundary the parsing loop handles, or `failCallback`'s code
// after storing the error to throw.

extension RequestParser {
    /// The callback table shared by every request parser; llhttp requires it to outlive the
    /// parsers, so it is allocated once and never freed.
    package nonisolated(unsafe) static let settings: UnsafePointer<llhttp_settings_t> = {
        let settings = UnsafeMutablePointer<llhttp_settings_t>.allocate(capacity: 1)
        llhttp_settings_init(settings)
        // No callback for the request line, names or values: the scanners recorded them.
        settings.pointee.on_header_field_complete = { parser in
            // Content-Length is ours to read (`noteContentLength`): llhttp's header state goes
            // back to "general" (0) before it sees the value, so it neither refuses a repeat
            // nor counts it. HEADER_STATE_CONTENT_LENGTH is 2 in llhttp 8.x and 9.x.
            if parser!.pointee.header_state == 2 { parser!.pointee.header_state = 0 }
            return 0
        }
        settings.pointee.on_headers_complete = { parser in
            withRequestParser(parser) { $0.onHeadersComplete() }
        }
        settings.pointee.on_body = { parser, at, length in
            withRequestParser(parser) { $0.onBody(at, length) }
        }
        settings.pointee.on_chunk_header = { parser in
            withRequestParser(parser) { $0.onChunkHeader() }
        }
        settings.pointee.on_message_complete = { parser in
            withRequestParser(parser) { $0.onMessageComplete() }
        }
        return UnsafePointer(settings)
    }()

    // MARK: - Fields

    /// Walks the recorded section's lines into `boundsScratch` (names and values as bounds into
    /// the record; a value with an obs-fold joined with one SP per fold into `foldBytes`, as RFC
    /// 9112 §5.2 says). For a head (`readingHead`) the same walk reads Content-Length,
    /// Transfer-Encoding and Expect. Returns the first framing problem and its stream offset.
    private func walkSection(readingHead: Bool) -> (reason: String, offset: Int)? {
        var problem: (reason: String, offset: Int)?
        record.walkFields(into: &boundsScratch, folded: &foldBytes) { name, value, lineStart, _ in
            guard readingHead && problem == nil && (name.count == 6 || name.count == 14 || name.count == 17) else { return }
            if let reason = noteField(name: name, value: value) { problem = (reason, recordOffset + Int(lineStart)) }
        }
        return problem
    }

    /// The section walked by `walkSection`, as received fields (a copy).
    private func takeFields() -> ReceivedFields {
        ReceivedFields(section: record.bytes.bytes, extra: foldBytes.bytes, bounds: boundsScratch.elements)
    }

    /// Reads one head field if it is Expect, Content-Length or Transfer-Encoding (the caller
    /// picked names of those lengths). Returns why the head cannot frame a body, or nil.
    private func noteField(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) -> String? {
        switch name.count {
        case 6:
            if DecoderASCII.equalsLowercase(name, "expect") && DecoderASCII.equalsLowercase(value, "100-continue") {
                sawExpectContinue = true
            }
        case 14:
            if DecoderASCII.equalsLowercase(name, "content-length") { return noteContentLength(value) }
        default:
            if DecoderASCII.equalsLowercase(name, "transfer-encoding") { noteTransferCodings(value) }
        }
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

    /// Reads one Content-Length value: a decimal number; with `allowsRepeatedContentLength`, also
    /// a list of the same number and a repeat of the field with it (RFC 9110 §8.6). Returns why
    /// the value cannot frame a body, or nil.
    private func noteContentLength(_ value: UnsafeBufferPointer<UInt8>) -> String? {
        if contentLength != nil && !options.allowsRepeatedContentLength { return "more than one Content-Length field" }
        var number: UInt64?
        var elementStart = 0
        for index in 0...value.count where index == value.count || value[index] == UInt8(ascii: ",") {
            let element = DecoderASCII.trimmingWhitespace(UnsafeBufferPointer(rebasing: value[elementStart..<index]))
            elementStart = index + 1
            if element.isEmpty {
                // Empty list elements are allowed in a list (RFC 9110 §5.6.1), not alone.
                if options.allowsRepeatedContentLength { continue }
                return "invalid Content-Length"
            }
            var parsed: UInt64 = 0
            for byte in element {
                guard DecoderASCII.isDigit(byte) else { return "invalid Content-Length" }
                let digit = UInt64(byte &- UInt8(ascii: "0"))
                // Past Int64.max no body can be counted.
                guard parsed <= (UInt64(Int64.max) - digit) / 10 else { return "Content-Length out of range" }
                parsed = parsed * 10 + digit
            }
            if let number {
                guard options.allowsRepeatedContentLength else { return "Content-Length is a list" }
                if number != parsed { return "Content-Length lists differing values" }
            }
            number = parsed
        }
        guard let number else { return "invalid Content-Length" }
        if let contentLength, contentLength != number { return "Content-Length fields with differing values" }
        contentLength = number
        return nil
    }

    // MARK: - Head complete

    /// The head is complete: apply the framing rules, hand the head over, and tell llhttp what
    /// follows.
    package func onHeadersComplete() -> Int32 {
        // The byte after the final empty line: the record holds the whole field section.
        let headEnd = recordOffset + record.bytes.count
        if let (reason, offset) = walkSection(readingHead: true) {
            return failCallback(RequestParseError(kind: .malformed, reason: reason, offset: offset))
        }
        if let contentLength {
            // What llhttp would have set had it read the field; framing and keep-alive use it.
            parser.pointee.content_length = contentLength
            parser.pointee.flags |= UInt16(F_CONTENT_LENGTH.rawValue)
        }
        let state = parser.pointee
        if state.http_major != 1 || state.http_minor > 1 {
            // The version is the request line's last 8 bytes.
            let versionOffset = recordOffset - lineScanner.lineEndLength - 8
            return failCallback(RequestParseError(kind: .malformed, reason: "HTTP/\(state.http_major).\(state.http_minor) is not HTTP/1.0 or HTTP/1.1",
                                                  offset: versionOffset))
        }
        if let reason = framingProblem(state) {
            return failCallback(RequestParseError(kind: .malformed, reason: reason, offset: headEnd))
        }
        let keepAlive = llhttp_should_keep_alive(parser) != 0
        let isUpgrade = state.upgrade != 0
        endsStream = !keepAlive || isUpgrade
        let chunked = state.flags & UInt16(F_CHUNKED.rawValue) != 0
        section = .body
        consumer?.parserReceivedHead(makeView(state, keepAlive: keepAlive, isUpgrade: isUpgrade, chunked: chunked))
        if let maxBody = options.maxBodyBytes, let contentLength, contentLength > UInt64(maxBody) {
            // The head is fine and already delivered; it is the body that will not fit.
            return failCallback(RequestParseError(kind: .bodyTooLarge, reason: "Content-Length \(contentLength) exceeds the \(maxBody)-byte body limit",
                                                  offset: headEnd))
        }
        if chunked {
            // Pause at the body's first byte, so its framing lines are scanned from there.
            pause = .chunkedBody
            return Int32(HPE_PAUSED.rawValue)
        }
        return 0
    }

    /// The head as the consumer sees it: views of the request line and the recorded fields.
    private func makeView(_ state: llhttp_t, keepAlive: Bool, isUpgrade: Bool, chunked: Bool) -> RequestHeadView {
        let line = UnsafeRawBufferPointer(requestLine.bytes)
        // llhttp let the line through: "method SP target SP version", single spaces.
        let methodEnd = line.firstIndex(of: DecoderASCII.space) ?? 0
        let targetEnd = line.count - 9
        return RequestHeadView(
            method: UnsafeRawBufferPointer(rebasing: line[..<methodEnd]),
            target: UnsafeRawBufferPointer(rebasing: line[(methodEnd + 1)..<max(targetEnd, methodEnd + 1)]),
            versionMajor: Int(state.http_major), versionMinor: Int(state.http_minor),
            keepAlive: keepAlive,
            // RFC 9110 §10.1.1: a server ignores 100-continue from an HTTP/1.0 client.
            expectsContinue: sawExpectContinue && state.http_minor >= 1,
            isUpgrade: isUpgrade,
            framing: chunked ? .chunked : .contentLength(contentLength ?? 0),
            section: record.bytes.bytes, extra: foldBytes.bytes, bounds: boundsScratch.elements)
    }

    /// Why the body of this request cannot be framed reliably (RFC 9112 §6.1, §6.3), or nil.
    private func framingProblem(_ state: llhttp_t) -> String? {
        let hasTransferEncoding = sawTransferEncoding || state.flags & UInt16(F_TRANSFER_ENCODING.rawValue) != 0
        guard hasTransferEncoding else { return nil }
        if contentLength != nil { return "Content-Length together with Transfer-Encoding" }
        // RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message means faulty framing.
        if state.http_minor == 0 { return "Transfer-Encoding in an HTTP/1.0 request" }
        // RFC 9112 §6.3: a request whose final coding is not chunked cannot be framed; we also
        // refuse any coding but one chunked, which no server here decodes.
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
            // Deliver what fits, so the bytes delivered do not depend on how the stream was split.
            accepted = maxBody - bodyByteCount
            overflow = true
        }
        if accepted > 0 {
            bodyByteCount += accepted
            consumer?.parserReceivedBody(UnsafeRawBufferPointer(start: at, count: accepted))
        }
        if overflow {
            return failCallback(RequestParseError(kind: .bodyTooLarge, reason: "body exceeds the \(options.maxBodyBytes ?? 0)-byte limit",
                                                  offset: streamOffset(of: at) + accepted))
        }
        return 0
    }

    /// A chunk-size line ended; after the last chunk, pause so that the trailer section is
    /// scanned from its first byte.
    package func onChunkHeader() -> Int32 {
        guard parser.pointee.content_length == 0 else { return 0 }
        pause = .lastChunk
        return Int32(HPE_PAUSED.rawValue)
    }

    /// The request ended: hand over its end and pause, so that the next request starts afresh
    /// (or nothing more is consumed).
    package func onMessageComplete() -> Int32 {
        var trailers = ReceivedFields()
        if section == .trailers {
            _ = walkSection(readingHead: false)
            trailers = takeFields()
        }
        pause = .requestComplete
        consumer?.parserReceivedEnd(trailers: trailers)
        return Int32(HPE_PAUSED.rawValue)
    }

    /// Stores `error` for the parsing loop to throw and returns the code that stops llhttp.
    private func failCallback(_ error: RequestParseError) -> Int32 {
        callbackError = error
        return Int32(HPE_USER.rawValue)
    }
}

/// Calls `body` with the parser that owns `parser`, without retaining it: the parser owns the
/// llhttp state, so it is alive for as long as llhttp runs.
@inline(__always)
private func withRequestParser(_ parser: UnsafeMutablePointer<llhttp_t>?, _ body: (RequestParser) -> Int32) -> Int32 {
    Unmanaged<RequestParser>.fromOpaque(parser!.pointee.data!)._withUnsafeGuaranteedRef(body)
}
