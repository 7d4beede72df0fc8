import CLLHTTP

// llhttp's callbacks: plain C function pointers that capture nothing. Each finds its parser
// through `llhttp_t.data` and calls one method. A method returns 0 to go on, HPE_PAUSED to stop
// after a response that closes the connection, or HPE_USER to refuse the request.

extension RequestParser {
    /// The callback table shared by every parser; llhttp requires it to outlive the parsers, so
    /// it is allocated once and never freed.
    nonisolated(unsafe) static let settings: UnsafePointer<llhttp_settings_t> = {
        let settings = UnsafeMutablePointer<llhttp_settings_t>.allocate(capacity: 1)
        llhttp_settings_init(settings)
        settings.pointee.on_message_begin = { parser in
            withParser(parser) { $0.onMessageBegin() }
        }
        settings.pointee.on_method = { parser, _, length in
            withParser(parser) { $0.countHeadBytes(length) }
        }
        settings.pointee.on_url = { parser, at, length in
            withParser(parser) { $0.onURL(at, length) }
        }
        settings.pointee.on_version = { parser, _, length in
            withParser(parser) { $0.countHeadBytes(length) }
        }
        settings.pointee.on_header_field = { parser, at, length in
            withParser(parser) { $0.onHeaderField(at, length) }
        }
        settings.pointee.on_header_field_complete = { parser in
            withParser(parser) { $0.onHeaderFieldComplete() }
        }
        settings.pointee.on_header_value = { parser, at, length in
            withParser(parser) { $0.onHeaderValue(at, length) }
        }
        settings.pointee.on_header_value_complete = { parser in
            withParser(parser) { $0.onHeaderValueComplete() }
        }
        settings.pointee.on_headers_complete = { parser in
            withParser(parser) { $0.onHeadersComplete() }
        }
        settings.pointee.on_message_complete = { parser in
            withParser(parser) { $0.onMessageComplete() }
        }
        return UnsafePointer(settings)
    }()

    /// A new request starts: forget the previous one's target and fields.
    func onMessageBegin() -> Int32 {
        target.removeAll()
        headBytes = 0
        expectName.reset()
        expectValue.reset()
        fieldIsExpect = false
        expectsContinue = false
        return 0
    }

    /// Counts `length` head bytes; refuses the request once the head is over the limit.
    func countHeadBytes(_ length: Int) -> Int32 {
        headBytes += length
        guard headBytes <= LoopbackHTTPServer.maximumHeadBytes else {
            headTooLarge = true
            return Int32(HPE_USER.rawValue)
        }
        return 0
    }

    /// A piece of the target. Kept whole (the head limit bounds it) so routing sees all of it.
    func onURL(_ at: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
        let status = countHeadBytes(length)
        if status == 0 { target.append(UnsafeRawBufferPointer(start: at, count: length)) }
        return status
    }

    /// A piece of a field name.
    func onHeaderField(_ at: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
        expectName.feed(UnsafeRawBufferPointer(start: at, count: length), "expect")
        return countHeadBytes(length)
    }

    /// The name is complete: note whether its value needs matching.
    func onHeaderFieldComplete() -> Int32 {
        fieldIsExpect = expectName.matches("expect")
        expectName.reset()
        return 0
    }

    /// A piece of a field value.
    func onHeaderValue(_ at: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
        if fieldIsExpect { expectValue.feed(UnsafeRawBufferPointer(start: at, count: length), "100-continue") }
        return countHeadBytes(length)
    }

    /// The field line is complete; ": " and CRLF count towards the limit too.
    func onHeaderValueComplete() -> Int32 {
        if fieldIsExpect && expectValue.matches("100-continue") { expectsContinue = true }
        fieldIsExpect = false
        expectValue.reset()
        return countHeadBytes(4)
    }

    /// The head is complete: settle HEAD and persistence, and invite the body if the client
    /// waits for `100 Continue` before sending it.
    func onHeadersComplete() -> Int32 {
        let state = parser.pointee
        isHEAD = state.method == UInt8(HTTP_HEAD.rawValue)
        // An upgrade (or CONNECT) is refused by answering normally and closing: whatever the
        // client sends next would be in another protocol.
        if llhttp_should_keep_alive(parser) == 0 || state.upgrade != 0 {
            persistence = .close
        } else {
            persistence = state.http_major == 1 && state.http_minor == 0 ? .keepAliveForHTTP10 : .keepAlive
        }
        let hasBody = state.flags & UInt16(F_CHUNKED.rawValue) != 0
            || (state.flags & UInt16(F_CONTENT_LENGTH.rawValue) != 0 && state.content_length > 0)
        if expectsContinue && hasBody && !(state.http_major == 1 && state.http_minor == 0) {
            output.append(Response.continueHead)
        }
        return 0
    }

    /// The request (body included) is complete: answer it. Pause when the connection closes, so
    /// no byte after this request is parsed.
    func onMessageComplete() -> Int32 {
        let route = Route.match(target.bytes)
        Response.write(route, omitsBody: isHEAD, persistence: persistence, into: output)
        return persistence == .close ? Int32(HPE_PAUSED.rawValue) : 0
    }
}

/// Calls `body` with the parser that owns `parser`, without retaining it: the parser owns the
/// llhttp state, so it is alive for as long as llhttp runs.
@inline(__always)
private func withParser(_ parser: UnsafeMutablePointer<llhttp_t>?, _ body: (RequestParser) -> Int32) -> Int32 {
    Unmanaged<RequestParser>.fromOpaque(parser!.pointee.data!)._withUnsafeGuaranteedRef(body)
}
