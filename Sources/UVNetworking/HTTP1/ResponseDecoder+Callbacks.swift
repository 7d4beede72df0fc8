import CLLHTTP

// llhttp's callbacks. They are plain C function pointers that capture nothing: each finds its
// decoder through `parser.data` and calls one method here. A method returns 0 to go on,
// HPE_PAUSED to stop llhttp at a boundary the decoding loop handles, or `failCallback`'s code
// after storing the error to throw.

extension ResponseDecoder {
    /// The callback table shared by every decoder; llhttp requires it to outlive the parser,
    /// so it is allocated once and never freed.
    nonisolated(unsafe) static let settings: UnsafePointer<llhttp_settings_t> = {
        let settings = UnsafeMutablePointer<llhttp_settings_t>.allocate(capacity: 1)
        llhttp_settings_init(settings)
        settings.pointee.on_status = { parser, at, length in
            withDecoder(parser) { $0.onStatus(at, length) }
        }
        settings.pointee.on_header_field = { parser, at, length in
            withDecoder(parser) { $0.onHeaderField(at, length) }
        }
        settings.pointee.on_header_field_complete = { parser in
            withDecoder(parser) { $0.onHeaderFieldComplete() }
        }
        settings.pointee.on_header_value = { parser, at, length in
            withDecoder(parser) { $0.onHeaderValue(at, length) }
        }
        settings.pointee.on_header_value_complete = { parser in
            withDecoder(parser) { $0.onHeaderValueComplete() }
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

    // MARK: - Status line and fields

    /// A piece of the reason phrase (the scanner has already checked its bytes).
    func onStatus(_ at: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
        reasonBytes.append(DecoderASCII.bytes(at, length))
        return 0
    }

    /// A piece of a field name; names arrive in several pieces when a read splits them.
    func onHeaderField(_ at: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
        nameBytes.append(DecoderASCII.bytes(at, length))
        return 0
    }

    /// The name is complete: llhttp 8.1 accepts an empty one (": value"), RFC 9110 §5.1 does not.
    ///
    /// A Content-Length of the head is ours to read (`onHeaderValueComplete`): setting llhttp's
    /// header state back to 0 ("general", as in 8.x and 9.x) before it looks at the value makes
    /// llhttp take the value as any other, so it neither refuses a repeat or a list nor counts it.
    /// One in the trailers frames nothing (RFC 9110 §6.5.1) and is passed on as any field (9.x
    /// would otherwise refuse it next to chunked; 8.1 lets it through).
    func onHeaderFieldComplete() -> Int32 {
        if nameBytes.isEmpty { return failCallback(.malformed("empty field name")) }
        if nameBytes.count == 14 && DecoderASCII.equalsLowercase(nameBytes.bytes, "content-length") {
            fieldIsContentLength = section == .head
            parser.pointee.header_state = 0
        }
        return 0
    }

    /// A piece of a field value.
    ///
    /// llhttp 8.1 strips the CRLF of an obs-fold and starts a new span at the continuation line's
    /// whitespace, so a span that begins right after an LF is a continuation. RFC 9112 §5.2 asks a
    /// user agent to replace each obs-fold (OWS CRLF RWS) with one SP: trim the whitespace before
    /// the fold, add one SP, then skip the continuation's leading whitespace (which may itself
    /// arrive split across reads).
    func onHeaderValue(_ at: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
        guard length > 0, let at else { return 0 }
        var span = DecoderASCII.bytes(at, length)
        if byteBefore(at) == DecoderASCII.lf {
            valueBytes.trimTrailingWhitespace()
            valueBytes.append(DecoderASCII.space)
            skippingFoldWhitespace = true
        }
        if skippingFoldWhitespace {
            guard let first = span.firstIndex(where: { !DecoderASCII.isWhitespace($0) }) else { return 0 }
            span = UnsafeBufferPointer(rebasing: span[first...])
            skippingFoldWhitespace = false
        }
        valueBytes.append(span)
        return 0
    }

    /// The value is complete: add the field to the section's bytes and note framing.
    func onHeaderValueComplete() -> Int32 {
        // Unsafe buffers rather than slices: no retain/release of the reused arrays per field.
        let name = nameBytes.bytes
        // llhttp already drops leading OWS on the first line; trailing OWS is ours to drop.
        let value = DecoderASCII.trimmingWhitespace(valueBytes.bytes)
        if section == .head && DecoderASCII.equalsLowercase(name, "transfer-encoding") {
            noteTransferCodings(value)
        }
        if fieldIsContentLength {
            fieldIsContentLength = false
            if let problem = noteContentLength(value) { return failCallback(.malformed(problem)) }
        }
        fieldBytes.append(name)
        let nameEnd = Int32(truncatingIfNeeded: fieldBytes.count)
        fieldBytes.append(value)
        if fieldBounds.capacity == 0 { fieldBounds.reserveCapacity(16) }
        fieldBounds.append(ReceivedFields.Bounds(nameEnd: nameEnd, valueEnd: Int32(truncatingIfNeeded: fieldBytes.count)))
        nameBytes.removeAll()
        valueBytes.removeAll()
        skippingFoldWhitespace = false
        return 0
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
            number = parsed
        }
        guard let number else { return "empty Content-Length" }
        if let contentLength, contentLength != number { return "Content-Length fields with differing values" }
        contentLength = number
        return nil
    }

    // MARK: - Head complete

    /// The head is complete: apply our checks, emit it, and tell llhttp whether a body follows.
    ///
    /// Returns 1 ("no body") for 1xx, HEAD, 204 and 304: strict llhttp 8.1 would otherwise read a
    /// Content-Length body after a 204/304 and wait for one after a HEAD.
    func onHeadersComplete() -> Int32 {
        if let contentLength {
            // What llhttp would have set had it read the field; framing and keep-alive use it.
            parser.pointee.content_length = contentLength
            parser.pointee.flags |= UInt16(F_CONTENT_LENGTH.rawValue)
        }
        let state = parser.pointee
        let status = Int(state.status_code)
        if status == 101 || state.upgrade != 0 {
            return failCallback(ResponseDecoderError(kind: .upgradeRefused, reason: "status \(status): the server switched protocols, which was never requested"))
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
        let head = ResponseHead(
            versionMajor: Int(state.http_major),
            versionMinor: Int(state.http_minor),
            status: status,
            reason: String(decoding: reasonBytes.bytes, as: UTF8.self),
            headers: takeFields(),
            keepAlive: llhttp_should_keep_alive(parser) != 0
        )
        reasonBytes.removeAll()
        if isInterim {
            interimKeepAlive = interimKeepAlive && head.keepAlive
            sink.append(.informational(head))
            return 1
        }
        finalKeepAlive = head.keepAlive
        announcedBodyLength = skipBody ? 0
            : state.flags & UInt16(F_CONTENT_LENGTH.rawValue) != 0 ? Int64(clamping: state.content_length) : nil
        sink.append(.head(head))
        section = .body
        if skipBody { return 1 }
        if let maxBody = limits.maxBodyBytes, state.flags & UInt16(F_CONTENT_LENGTH.rawValue) != 0,
           state.content_length > UInt64(maxBody) {
            // The head is fine and already delivered; it is the body that will not fit.
            return failCallback(ResponseDecoderError(kind: .bodyTooLarge, reason: "Content-Length \(state.content_length) exceeds the \(maxBody)-byte body limit"))
        }
        if state.flags & UInt16(F_CHUNKED.rawValue) != 0 {
            // Pause at the body's first byte, so its framing lines are scanned from there.
            pause = .chunkedBody
            return Int32(HPE_PAUSED.rawValue)
        }
        return 0
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

    /// Body bytes, after chunked decoding: gathered until the feed ends, up to the body limit.
    func onBody(_ at: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
        var accepted = length
        var overflow = false
        if let maxBody = limits.maxBodyBytes, length > maxBody - bodyByteCount {
            // Deliver what fits, so the bytes delivered do not depend on how reads were split.
            accepted = maxBody - bodyByteCount
            overflow = true
        }
        if accepted > 0 {
            pendingBody.append(contentsOf: DecoderASCII.bytes(at, accepted))
            bodyByteCount += accepted
        }
        if overflow {
            return failCallback(ResponseDecoderError(kind: .bodyTooLarge, reason: "body exceeds the \(limits.maxBodyBytes ?? 0)-byte limit"))
        }
        return 0
    }

    /// A chunk-size line ended; after the last chunk, pause so the trailer section can be scanned
    /// from its first byte (llhttp stops right after the line's LF).
    func onChunkHeader() -> Int32 {
        guard parser.pointee.content_length == 0 else { return 0 }
        pause = .lastChunk
        return Int32(HPE_PAUSED.rawValue)
    }

    /// A message ended: a 1xx (the final response follows) or the final response. Always pause,
    /// so no byte after the message is consumed.
    func onMessageComplete() -> Int32 {
        if isInterim {
            pause = .interimComplete
        } else {
            flushBody()
            sink.append(.end(trailers: takeFields()))
            completed = true
            pause = .finalComplete
        }
        return Int32(HPE_PAUSED.rawValue)
    }

    // MARK: - Helpers

    /// The fields gathered so far, copied out (two exact-size allocations, none when there are
    /// no fields); the gathering storage is kept for the next section.
    private func takeFields() -> ReceivedFields {
        guard !fieldBounds.isEmpty else { return ReceivedFields() }
        let taken = ReceivedFields(bytes: Array(fieldBytes.bytes), bounds: Array(fieldBounds))
        fieldBytes.removeAll()
        fieldBounds.removeAll(keepingCapacity: true)
        return taken
    }

    /// Stores `error` for the decoding loop to throw and returns the code that stops llhttp.
    private func failCallback(_ error: ResponseDecoderError) -> Int32 {
        callbackError = error
        return Int32(HPE_USER.rawValue)
    }

    /// The stream byte just before `pointer`, which lies inside the current llhttp_execute call.
    private func byteBefore(_ pointer: UnsafePointer<CChar>) -> UInt8 {
        if let executeStart, pointer > executeStart { return UInt8(bitPattern: pointer[-1]) }
        return byteBeforeExecute
    }
}

/// Calls `body` with the decoder that owns `parser`, without retaining it: the decoder owns the
/// parser, so it is alive for as long as llhttp runs.
@inline(__always)
private func withDecoder(_ parser: UnsafeMutablePointer<llhttp_t>?, _ body: (ResponseDecoder) -> Int32) -> Int32 {
    Unmanaged<ResponseDecoder>.fromOpaque(parser!.pointee.data!)._withUnsafeGuaranteedRef(body)
}
