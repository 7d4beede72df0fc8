// Fuzzes UVHTTP1's encoders against its parsers: a message described by the input is encoded
// (ResponseEncoder.swift, RequestEncoder+Public.swift) and parsed back with the strict default
// options, through the public API only.
//
// Input: 4 option bytes, then length-prefixed parts (each length byte taken modulo a bound).
//   byte 0  bit 0: HTTP/1.0 (responses); bits 1-2: body kind (none, Content-Length, chunked,
//           until close; a request reads the last as chunked without chunks)
//           bit 3: a Content-Length field among the fields (its value the next part)
//           bit 4: names from the token alphabet; bit 5: values from printable ASCII
//           bit 6: a Transfer-Encoding: chunked field among the fields
//           bit 7: a request rather than a response
//   bytes 1-2  a response's status = (byte 1 << 8 | byte 2) % 1024 (so some are not 100...999);
//              a request's method (byte 1: one llhttp knows, or bit 7 set: the method part
//              below) and parts (byte 2, bit 0: a Host authority; bit 1: the target not in
//              origin form, as given)
//   byte 3  seed for the split run's feed sizes
//   then: [Content-Length value (<32)], for a response its reason (<32), for a request
//   [method (<16)], target (<48), [authority (<32)]; then field count (<8) × (name (<16),
//   value (<32)), chunk count (<6) × chunk (<256), trailer count (<4) × (name, value).
// Parts are decoded as UTF-8 (an invalid byte becomes U+FFFD), since the encoders take strings.
//
// Invariants (a violation traps with a message):
// - The encoder refuses exactly the descriptions that have a defect, found here independently
//   (a byte outside a token, a control byte in a value or the reason, whitespace at a value's
//   end, a status outside 100...999, a framing field the body contradicts, a body for 1xx, 204
//   or 304, chunked in HTTP/1.0, a framing field as a trailer; for requests a method that is
//   not a token, a target or authority with a byte outside visible ASCII, a Host field beside
//   an authority), and the kind it throws is one of the defects found.
// - An accepted response, parsed in one feed and in pieces cut at splitPoints, then finished,
//   gives back exactly what was encoded: version, status and reason; every field's name and
//   value byte for byte, in order (the encoder's framing field after the caller's); the body
//   (chunks joined); the trailers; one end, last. A 1xx comes back as an interim head before
//   the final response that follows it. The only refusal allowed is a protocol switch (101, or
//   an Upgrade field), which ResponseParser never accepts.
// - An accepted request, parsed the same ways by RequestParser, gives back its method, target,
//   HTTP/1.1, Host (from the authority) then the fields then the framing field, the body and
//   the trailers, one end, last. Refusals allowed: a method llhttp 8.1 does not know (listed in
//   docs/fuzzing.md), a target byte outside RFC 3986's characters, `*` for another method than
//   OPTIONS, and a target in neither origin form nor `*` (llhttp takes absolute form only as
//   letters, "://" and an authority, narrower than RFC 3986's absolute-URI). The parser stops after
//   a request exactly when it ends the stream's HTTP/1.1 (not keep-alive, or an upgrade, which
//   needs CONNECT or an Upgrade field).

import FuzzSupport
import UVHTTP1

/// Ends the run when `condition` is false.
@inline(__always)
private func invariant(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, line: UInt = #line) {
    fuzzCheck(condition(), message(), line: line)
}

/// tchar (RFC 9110 §5.6.2), spelled out here rather than taken from the encoder.
private let tokenAlphabet = Array("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
private let tokenBytes = Set(tokenAlphabet)

/// A message's parts as the input describes them.
private struct Description {
    var http10 = false
    var status = 200
    var reason = ""
    var fields: [HeaderField] = []
    var bodyKind = 0
    var chunks: [[UInt8]] = []
    var trailers: [HeaderField] = []
    var seed: UInt8 = 0
    /// A request's parts (`isRequest`); a response's are the ones above.
    var isRequest = false
    var method = "GET"
    var target = "/"
    var authority: String?

    init(_ input: inout FuzzInput) {
        let flags = input.byte()
        isRequest = flags & 128 != 0
        http10 = flags & 1 != 0 && !isRequest
        bodyKind = Int(flags >> 1) & 3
        let tokens = flags & 16 != 0, printable = flags & 32 != 0
        let (high, low) = (input.byte(), input.byte())
        status = (Int(high) << 8 | Int(low)) % 1024
        seed = input.byte()
        func part(_ bound: Int, _ alphabet: ((UInt8) -> UInt8)?) -> String {
            let count = Int(input.byte()) % bound
            let bytes = input.bytes(count).map { alphabet?($0) ?? $0 }
            return String(decoding: bytes, as: UTF8.self)
        }
        let name: ((UInt8) -> UInt8)? = tokens ? { tokenAlphabet[Int($0) % tokenAlphabet.count] } : nil
        let value: ((UInt8) -> UInt8)? = printable ? { 0x20 + $0 % 95 } : nil
        func section(_ bound: Int) -> [HeaderField] {
            (0..<(Int(input.byte()) % bound)).map { _ in HeaderField(name: part(16, name), value: part(32, value)) }
        }
        if flags & 8 != 0 { fields.append(HeaderField(name: "Content-Length", value: part(32, nil))) }
        if flags & 64 != 0 { fields.append(HeaderField(name: "transfer-encoding", value: "chunked")) }
        if isRequest {
            method = high & 128 != 0 ? part(16, name) : knownMethods[Int(high) % knownMethods.count]
            let given = part(48, value)
            target = low & 2 != 0 ? given : "/" + given
            if low & 1 != 0 { authority = part(32, value) }
        } else {
            reason = part(32, value)
        }
        fields += section(8)
        chunks = (0..<(Int(input.byte()) % 6)).map { _ in Array(input.bytes(Int(input.byte()))) }
        trailers = section(4)
    }

    var responseBody: ResponseEncoder.Body {
        switch bodyKind {
        case 0: .none
        case 1: .contentLength(chunks.flatMap { $0 })
        case 2: .chunked(chunks, trailers: trailers)
        default: .untilClose(chunks.flatMap { $0 })
        }
    }

    var requestBody: RequestEncoder.Body {
        switch bodyKind {
        case 0: .none
        case 1: .contentLength(chunks.flatMap { $0 })
        case 2: .chunked(chunks, trailers: trailers)
        default: .chunked([], trailers: trailers)
        }
    }
}

/// Methods llhttp 8.1 knows but CONNECT, whose target is an authority (tried through the
/// method part instead). Others are tokens RFC 9110 allows and llhttp refuses.
private let knownMethods = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "TRACE", "PATCH", "PROPFIND",
                            "MKCOL", "LOCK", "UNLOCK", "PURGE", "REPORT", "SEARCH"]

/// Field names compared as ASCII case-insensitively (the check must not lean on Unicode case
/// mapping, under which a non-ASCII name could equal an ASCII one).
private func named(_ field: HeaderField, _ lowercase: String) -> Bool {
    Array(field.name.utf8).map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 } == Array(lowercase.utf8)
}

/// Whether `value` can come back unchanged: no control byte but HTAB, no whitespace at an end.
private func valueIsSendable(_ value: String) -> Bool {
    let bytes = Array(value.utf8)
    if bytes.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) { return false }
    guard let first = bytes.first, let last = bytes.last else { return true }
    return ![first, last].contains { $0 == 0x20 || $0 == 0x09 }
}

/// The defects of a field section, as error kinds.
private func sectionDefects(_ fields: [HeaderField]) -> Set<HTTP1EncodeError.Kind> {
    var defects: Set<HTTP1EncodeError.Kind> = []
    for field in fields {
        if field.name.isEmpty || !field.name.utf8.allSatisfy(tokenBytes.contains) { defects.insert(.invalidFieldName) }
        if !valueIsSendable(field.value) { defects.insert(.invalidFieldValue) }
    }
    return defects
}

/// Every defect of a response description, found without the encoder.
private func responseDefects(_ message: Description) -> Set<HTTP1EncodeError.Kind> {
    var defects = sectionDefects(message.fields).union(sectionDefects(message.bodyKind == 2 ? message.trailers : []))
    if !(100...999).contains(message.status) { defects.insert(.invalidStatus) }
    if message.reason.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) { defects.insert(.invalidReason) }
    let noContent = message.status < 200 || message.status == 204 || message.status == 304
    if noContent && message.bodyKind != 0 { defects.insert(.bodyNotAllowed) }
    if message.http10 && message.bodyKind == 2 { defects.insert(.invalidFraming) }
    if message.fields.contains(where: { named($0, "transfer-encoding") }) { defects.insert(.invalidFraming) }
    let lengths = message.fields.filter { named($0, "content-length") }
    if !lengths.isEmpty {
        if message.bodyKind != 0 || lengths.count > 1 { defects.insert(.invalidFraming) }
        if message.status < 200 || message.status == 204 { defects.insert(.bodyNotAllowed) }
        if lengths.contains(where: { $0.value.isEmpty || $0.value.utf8.count > 18 || !$0.value.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }) {
            defects.insert(.invalidFraming)
        }
    }
    if message.bodyKind == 2 && message.trailers.contains(where: { named($0, "content-length") || named($0, "transfer-encoding") }) {
        defects.insert(.invalidFraming)
    }
    return defects
}

/// Whether `received` holds exactly `expected`, names and values byte for byte, in order.
private func sameFields(_ received: ReceivedFields, _ expected: [HeaderField]) -> Bool {
    guard received.count == expected.count else { return false }
    for (index, field) in expected.enumerated() {
        let same = received.withField(at: index) { name, value in
            name.elementsEqual(field.name.utf8) && value.elementsEqual(field.value.utf8)
        }
        if !same { return false }
    }
    return true
}

/// What a parse must give back besides the head: the framing field the encoder adds after the
/// caller's fields, the body (chunks joined) and the trailers.
private struct ExpectedBody {
    var framingField: HeaderField?
    var bytes: [UInt8] = []
    var trailers: [HeaderField] = []

    static func contentLength(_ bytes: [UInt8]) -> ExpectedBody {
        ExpectedBody(framingField: HeaderField(name: "Content-Length", value: String(bytes.count)), bytes: bytes)
    }

    static func chunked(_ chunks: [[UInt8]], trailers: [HeaderField]) -> ExpectedBody {
        ExpectedBody(framingField: HeaderField(name: "Transfer-Encoding", value: "chunked"), bytes: chunks.flatMap { $0 }, trailers: trailers)
    }

    /// `fields` followed by the framing field, if any.
    func fields(after fields: [HeaderField]) -> [HeaderField] {
        fields + (framingField.map { [$0] } ?? [])
    }

    /// Checks what follows the head: at most one body event (pieces joined) equal to `bytes`,
    /// then an end with `trailers`, then nothing. `trailersOf` reads an end event's trailers.
    func check<Event>(_ events: ArraySlice<Event>, body: (Event) -> [UInt8]?, trailersOf: (Event) -> ReceivedFields?) {
        var events = events
        if let first = events.first, let bytes = body(first) {
            invariant(bytes == self.bytes, "body \(bytes), not \(self.bytes)")
            events.removeFirst()
        } else {
            invariant(bytes.isEmpty, "no body, not \(bytes)")
        }
        guard let end = events.popFirst(), let trailers = trailersOf(end) else { return invariant(false, "no end: \(events)") }
        invariant(sameFields(trailers, self.trailers), "trailers \(Array(trailers)), not \(self.trailers)")
        invariant(events.isEmpty, "events after the end: \(events)")
    }
}

extension ResponseEncoder.Body {
    fileprivate var expected: ExpectedBody {
        switch self {
        case .none: ExpectedBody()
        case .contentLength(let bytes): .contentLength(bytes)
        case .chunked(let chunks, let trailers): .chunked(chunks, trailers: trailers)
        case .untilClose(let bytes): ExpectedBody(bytes: bytes)
        }
    }
}

extension RequestEncoder.Body {
    fileprivate var expected: ExpectedBody {
        switch self {
        case .none: ExpectedBody()
        case .contentLength(let bytes): .contentLength(bytes)
        case .chunked(let chunks, let trailers): .chunked(chunks, trailers: trailers)
        }
    }
}

private func responseBody(_ event: ResponseParser.Event) -> [UInt8]? {
    if case .body(let bytes) = event { bytes } else { nil }
}

private func requestBody(_ event: RequestParser.Event) -> [UInt8]? {
    if case .body(let bytes) = event { bytes } else { nil }
}

/// What a parse gave: its events (body pieces joined) and the error, if any.
private struct Parse {
    var events: [ResponseParser.Event] = []
    var error: HTTP1ParseError?
}

/// Parses `bytes` fed in pieces ending at `bounds`, as the response to a HEAD when `toHEAD`,
/// then finishes the stream.
private func parseResponse(_ bytes: [UInt8], bounds: [Int], toHEAD: Bool) -> Parse {
    let parser = ResponseParser()
    parser.expectResponse(toHEAD: toHEAD)
    var parse = Parse()
    func record(_ event: ResponseParser.Event) {
        appendJoiningBodies(event, to: &parse.events, body: responseBody, makeBody: ResponseParser.Event.body)
    }
    do throws(HTTP1ParseError) {
        var start = 0
        // Not past the end: bytes after it are left over (reported below), never fed again.
        for end in bounds {
            while start < end && !parser.isComplete {
                let consumed = try bytes.withUnsafeBytes { raw -> Result<Int, HTTP1ParseError> in
                    do throws(HTTP1ParseError) {
                        return .success(try parser.feed(UnsafeRawBufferPointer(rebasing: raw[start..<end]), onEvent: record))
                    } catch {
                        return .failure(error)
                    }
                }.get()
                invariant(consumed > 0 || parser.isComplete, "feed consumed nothing mid-message")
                if consumed == 0 { break }
                start += consumed
            }
        }
        invariant(start == bytes.count, "\(bytes.count - start) bytes left after the message")
        for event in try parser.finish() { record(event) }
    } catch {
        parse.error = error
    }
    return parse
}

/// The status line and fields a head should have.
private func checkHead(_ head: ResponseHead, http10: Bool, status: Int, reason: String, fields: [HeaderField]) {
    invariant(head.versionMajor == 1 && head.versionMinor == (http10 ? 0 : 1), "version 1.\(head.versionMinor), not 1.\(http10 ? 0 : 1)")
    invariant(head.status == status, "status \(head.status), not \(status)")
    invariant(head.reason.utf8.elementsEqual(reason.utf8), "reason \(head.reason.debugDescription), not \(reason.debugDescription)")
    invariant(sameFields(head.fields, fields), "fields \(Array(head.fields)), not \(fields)")
}

private func roundTripResponse(_ message: Description) {
    let defects = responseDefects(message)
    let body = message.responseBody
    let encoded: [UInt8]
    do throws(HTTP1EncodeError) {
        encoded = try ResponseEncoder.encode(version: message.http10 ? .http1_0 : .http1_1, status: message.status,
                                             reason: message.reason, fields: message.fields, body: body)
    } catch {
        invariant(defects.contains(error.kind), "refused for \(error), but the defects are \(defects)")
        return
    }
    invariant(defects.isEmpty, "accepted despite \(defects)")

    var stream = encoded
    let interim = message.status < 200
    // A 1xx is followed by the final response it announces.
    if interim { stream += try! ResponseEncoder.encode(status: 204, reason: "No Content") }
    var expected = body.expected
    var expectedFields = expected.fields(after: message.fields)

    let whole = parseResponse(stream, bounds: [stream.count], toHEAD: body == .none)
    let split = parseResponse(stream, bounds: splitPoints(count: stream.count, seed: message.seed), toHEAD: body == .none)
    invariant(whole.events == split.events && whole.error == split.error, "split parse differs: \(whole) vs \(split)")
    if let error = whole.error {
        let upgrade = message.status == 101 || message.fields.contains { named($0, "upgrade") }
        invariant(error.kind == .upgradeRefused && upgrade, "the encoding of \(message) failed to parse: \(error)")
        return
    }
    var events = whole.events[...]
    if interim {
        guard case .interim(let head)? = events.popFirst() else { return invariant(false, "no interim head: \(whole.events)") }
        checkHead(head, http10: message.http10, status: message.status, reason: message.reason, fields: expectedFields)
        expectedFields = []
        expected = ExpectedBody()
    }
    guard case .head(let head)? = events.popFirst() else { return invariant(false, "no head: \(whole.events)") }
    if interim {
        checkHead(head, http10: false, status: 204, reason: "No Content", fields: [])
    } else {
        checkHead(head, http10: message.http10, status: message.status, reason: message.reason, fields: expectedFields)
    }
    expected.check(events, body: responseBody) { if case .end(let trailers) = $0 { trailers } else { nil } }
}

/// Every defect of a request description, found without the encoder.
private func requestDefects(_ message: Description) -> Set<HTTP1EncodeError.Kind> {
    let isChunked = message.requestBody != .none && message.bodyKind >= 2
    var defects = sectionDefects(message.fields).union(sectionDefects(isChunked ? message.trailers : []))
    if message.method.isEmpty || !message.method.utf8.allSatisfy(tokenBytes.contains) { defects.insert(.invalidMethod) }
    let visible = { (text: String) in text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F } }
    if message.target.isEmpty || !visible(message.target) { defects.insert(.invalidTarget) }
    if let authority = message.authority, !visible(authority) { defects.insert(.invalidAuthority) }
    if message.fields.contains(where: { named($0, "transfer-encoding") || named($0, "content-length") }) { defects.insert(.invalidFraming) }
    if message.authority != nil && message.fields.contains(where: { named($0, "host") }) { defects.insert(.invalidFraming) }
    if isChunked && message.trailers.contains(where: { named($0, "content-length") || named($0, "transfer-encoding") }) {
        defects.insert(.invalidFraming)
    }
    return defects
}

/// RFC 3986's characters: unreserved, reserved and '%'.
private let uriBytes = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=%".utf8)

/// Parses `bytes` fed in pieces ending at `bounds`, then finishes the stream.
private func parseRequest(_ bytes: [UInt8], bounds: [Int]) -> (events: [RequestParser.Event], error: RequestParseError?, stopped: Bool) {
    let parser = RequestParser()
    var events: [RequestParser.Event] = []
    func record(_ event: RequestParser.Event) {
        appendJoiningBodies(event, to: &events, body: requestBody, makeBody: RequestParser.Event.body)
    }
    do throws(RequestParseError) {
        var start = 0
        for end in bounds where !parser.isStopped {
            let consumed = try bytes.withUnsafeBytes { raw -> Result<Int, RequestParseError> in
                do throws(RequestParseError) {
                    return .success(try parser.feed(UnsafeRawBufferPointer(rebasing: raw[start..<end]), onEvent: record))
                } catch {
                    return .failure(error)
                }
            }.get()
            invariant(consumed == end - start || parser.isStopped, "fed \(end - start) bytes, \(consumed) consumed, not stopped")
            start += consumed
        }
        if !parser.isStopped { try parser.finish() }
    } catch {
        return (events, error, parser.isStopped)
    }
    return (events, nil, parser.isStopped)
}

private func roundTripRequest(_ message: Description) {
    let defects = requestDefects(message)
    let body = message.requestBody
    let encoded: [UInt8]
    do throws(HTTP1EncodeError) {
        encoded = try RequestEncoder.encode(method: message.method, target: message.target, authority: message.authority,
                                            fields: message.fields, body: body)
    } catch {
        invariant(defects.contains(error.kind), "refused for \(error), but the defects are \(defects)")
        return
    }
    invariant(defects.isEmpty, "accepted despite \(defects)")

    let expected = body.expected
    let host = message.authority.map { [HeaderField(name: "Host", value: $0)] } ?? []
    let expectedFields = expected.fields(after: host + message.fields)

    let whole = parseRequest(encoded, bounds: [encoded.count])
    let split = parseRequest(encoded, bounds: splitPoints(count: encoded.count, seed: message.seed))
    invariant(whole.events == split.events && whole.error == split.error && whole.stopped == split.stopped,
              "split parse differs: \(whole) vs \(split)")
    if let error = whole.error {
        let target = Array(message.target.utf8)
        // Origin form, and `*` for OPTIONS, must read back; absolute form only as llhttp reads it
        // (scheme letters and "://", narrower than RFC 3986's absolute-URI), so not checked.
        let checkedForm = message.target == "*" ? message.method == "OPTIONS" : target.first == 0x2F
        let allowed = !knownMethods.contains(message.method) || !target.allSatisfy(uriBytes.contains) || !checkedForm
        invariant(error.kind == .malformed && allowed, "the encoding of \(message.method) \(message.target.debugDescription) failed to parse: \(error)")
        return
    }
    guard case .head(let head)? = whole.events.first else { return invariant(false, "no head: \(whole.events)") }
    invariant(head.method == message.method, "method \(head.method), not \(message.method)")
    invariant(head.targetBytes.elementsEqual(message.target.utf8), "target \(head.target.debugDescription), not \(message.target.debugDescription)")
    invariant(head.versionMajor == 1 && head.versionMinor == 1, "version \(head.versionMajor).\(head.versionMinor), not 1.1")
    invariant(sameFields(head.fields, expectedFields), "fields \(Array(head.fields)), not \(expectedFields)")
    // A request after which the stream is no longer HTTP/1.1 stops the parser at its end.
    invariant(whole.stopped == (!head.keepAlive || head.isUpgrade), "stopped \(whole.stopped), but keep-alive \(head.keepAlive), upgrade \(head.isUpgrade)")
    if head.isUpgrade {
        invariant(message.method == "CONNECT" || message.fields.contains { named($0, "upgrade") }, "an upgrade without CONNECT or Upgrade")
    }
    expected.check(whole.events.dropFirst(), body: requestBody) { if case .end(let trailers) = $0 { trailers } else { nil } }
}

runFuzzer { bytes in
    var input = FuzzInput(bytes)
    let message = Description(&input)
    if message.isRequest {
        roundTripRequest(message)
    } else {
        roundTripResponse(message)
    }
}
