// Fuzzes the client's own request encoding, the path every task's request takes
// (PreparedRequest): how the body is framed, decided from the caller's Content-Length and
// Transfer-Encoding (RequestFraming.decide); a session's default fields, checked and encoded once
// (EncodedFields); and the head written with both (the client's RequestEncoder.encode), read back
// by RequestParser with its strict defaults. A wrong framing here desynchronises a keep-alive
// connection, and a field the encoder lets through unchecked is a header injection.
//
// Input: 2 option bytes, then length-prefixed parts (each length byte taken modulo a bound).
//   byte 0  bits 0-2: the method (GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS; 7: the method part)
//           bits 3-4: the body (none, in memory, a stream of known length, one of unknown length)
//           bit 5: values from printable ASCII (otherwise any bytes, read as UTF-8)
//           bit 6: names read from the token alphabet (otherwise any bytes)
//           bit 7: the target in absolute form, as sent to a proxy (http://authority/path)
//   byte 1  bit 0: the authority has a port (the next part, digits)
//   then: [method (<16)], path (<48, RFC 3986's characters), host (<24, a host name's), [port (<6)],
//   body (<256), caller field count (<8) × field, default count (<6) × field. A field is a name
//   (one byte: below 12 a name from `names`; otherwise a part of that byte's value - 12, modulo
//   16, bytes) and a value (<32).
// Parts are decoded as UTF-8 (an invalid byte becomes U+FFFD), since the client's fields are strings.
//
// Invariants (a violation traps with a message):
// - `RequestFraming.decide` gives the framing a byte-level model of its documented rules gives,
//   or refuses exactly when the model does (a malformed or disagreeing Content-Length, a transfer
//   coding other than chunked, compared as ASCII, or both fields).
// - `EncodedFields` keeps every default in order, with its own verdict (the model's: a name that
//   is not a token, a control byte in a value; Host and the framing fields reserved), and bytes
//   that are exactly the sendable fields' `name: value\r\n`, each at its range.
// - The encoder refuses exactly what the model refuses, with the same error: a method that is not
//   a token, then the first caller field with a bad name or value or that repeats Host (RFC 9112
//   §3.2: a server must answer two Host fields with 400), then the first default that would be
//   sent (not reserved, not named by a caller field) with a bad name or value.
// - An accepted request with a method llhttp knows parses back, as one request: the method, the
//   target, HTTP/1.1; the fields Host (the authority, unless the caller gave Host), the caller's
//   fields but the framing ones, the defaults the caller did not name, then exactly one framing
//   field, the library's (values as sent, less the whitespace at their ends, which is not part
//   of a value); the framing the parser reads from them; an in-memory body read back as sent and
//   the end of the request; a streamed body's head alone (its bytes follow from its reader), or
//   the end at once when it announces a length of 0.

import FuzzSupport
@testable import UVHTTP1

/// Ends the run when `condition` is false.
@inline(__always)
private func invariant(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, line: UInt = #line) {
    fuzzCheck(condition(), message(), line: line)
}

/// tchar (RFC 9110 §5.6.2), spelled out here rather than taken from the encoder.
private let tokenAlphabet = Array("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
private let tokenBytes = Set(tokenAlphabet)
/// A path's and query's characters (RFC 3986 pchar, "/" and "?"), as a URL's percent-encoding
/// leaves them; "%" is left out, since a lone one is not an escape.
private let pathAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/?".utf8)
private let hostAlphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789.-".utf8)

private let methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
/// Methods llhttp 8.1 knows but CONNECT (whose target is an authority): a request with one of
/// them parses back. Others are tokens RFC 9110 allows and llhttp refuses.
private let knownMethods = Set(methods + ["TRACE", "PROPFIND", "MKCOL", "LOCK", "UNLOCK", "PURGE", "REPORT", "SEARCH"])
/// Names with a meaning to the encoder, the framing decision or the parser, in several cases.
private let names = ["Content-Length", "content-length", "CONTENT-LENGTH", "Transfer-Encoding", "transfer-encoding",
                     "Host", "HOST", "host", "Accept", "X-Trace", "Expect", "Connection"]

private typealias Field = (name: String, value: String)

/// The request as the input describes it.
private struct Description {
    var method = "GET"
    var path = "/"
    var authority = ""
    var absoluteForm = false
    /// 0: none, 1: in memory, 2: a stream of known length, 3: a stream of unknown length.
    var bodyKind = 0
    var body: [UInt8] = []
    var fields: [Field] = []
    var defaults: [Field] = []

    init(_ input: inout FuzzInput) {
        let flags = input.byte(), more = input.byte()
        let printable = flags & 32 != 0, tokens = flags & 64 != 0
        absoluteForm = flags & 128 != 0
        bodyKind = Int(flags >> 3) & 3
        func part(_ count: Int, _ alphabet: [UInt8]?) -> String {
            let bytes = input.bytes(count).map { byte in alphabet.map { $0[Int(byte) % $0.count] } ?? byte }
            return String(decoding: bytes, as: UTF8.self)
        }
        let methodIndex = Int(flags & 7)
        method = methodIndex < methods.count ? methods[methodIndex] : part(Int(input.byte()) % 16, tokens ? tokenAlphabet : nil)
        path = "/" + part(Int(input.byte()) % 48, pathAlphabet)
        authority = part(Int(input.byte()) % 24, hostAlphabet)
        if authority.isEmpty { authority = "h" }
        if more & 1 != 0 { authority += ":" + part(Int(input.byte()) % 6, Array("0123456789".utf8)) }
        body = Array(input.bytes(Int(input.byte())))
        func fieldList(_ bound: Int) -> [Field] {
            (0..<(Int(input.byte()) % bound)).map { _ in
                let selector = Int(input.byte())
                let name = selector < names.count ? names[selector] : part((selector - names.count) % 16, tokens ? tokenAlphabet : nil)
                let value = part(Int(input.byte()) % 32, printable ? (0x20...0x7E).map { $0 } : nil)
                return (name, value)
            }
        }
        fields = fieldList(8)
        defaults = fieldList(6)
    }

    var framingBody: RequestFraming.Body {
        switch bodyKind {
        case 0: .none
        case 1: .data(body.count)
        case 2: .stream(length: Int64(body.count))
        default: .stream(length: nil)
        }
    }

    /// The request target: origin form, or the absolute form a proxy is sent.
    var target: String { absoluteForm ? "http://" + authority + path : path }
}

// MARK: - The model, byte by byte

/// `text`'s bytes ASCII-lowercased (under Unicode case mapping a non-ASCII name or coding could
/// equal an ASCII one it is not).
private func lowered(_ text: some Sequence<UInt8>) -> [UInt8] {
    text.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
}

private func named(_ name: String, _ lowercase: String) -> Bool {
    lowered(name.utf8) == Array(lowercase.utf8)
}

/// `bytes` without the SP and HTAB at their ends.
private func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    var bytes = bytes
    while let first = bytes.first, first == 0x20 || first == 0x09 { bytes.removeFirst() }
    while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
    return bytes
}

/// The members of a comma-separated list, trimmed.
private func members(_ value: String) -> [ArraySlice<UInt8>] {
    Array(value.utf8).split(separator: 0x2C, omittingEmptySubsequences: false).map(trimmed)
}

/// RequestFraming's documented rules, nil where they refuse.
private func modelFraming(method: String, body: RequestFraming.Body, fields: [Field]) -> RequestFraming? {
    var lengths: [Int64] = []
    var codings: [ArraySlice<UInt8>] = []
    var hasTransferEncoding = false
    for field in fields {
        if named(field.name, "content-length") {
            for member in members(field.value) {
                // 1*DIGIT, at most 18 of them (so that it fits an Int64).
                guard !member.isEmpty, member.count <= 18, member.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
                lengths.append(member.reduce(0) { $0 * 10 + Int64($1 - 0x30) })
            }
        } else if named(field.name, "transfer-encoding") {
            hasTransferEncoding = true
            codings += members(field.value).filter { !$0.isEmpty }
        }
    }
    guard Set(lengths).count <= 1 else { return nil }
    if hasTransferEncoding {
        guard codings.count == 1, lowered(codings[0]) == Array("chunked".utf8), lengths.isEmpty else { return nil }
        return .chunked
    }
    if let length = lengths.first {
        switch body {
        case .none: return length == 0 ? .contentLength(0) : nil
        case .data(let count): return Int64(count) == length ? .contentLength(length) : nil
        case .stream(let declared): return declared == nil || declared == length ? .contentLength(length) : nil
        }
    }
    let definesBody = ["POST", "PUT", "PATCH"].contains { Array($0.utf8) == Array(method.utf8) }
    switch body {
    case .none: return definesBody ? .contentLength(0) : RequestFraming.none
    case .data(let count): return count > 0 || definesBody ? .contentLength(Int64(count)) : RequestFraming.none
    case .stream(let declared): return declared.map { .contentLength($0) } ?? .chunked
    }
}

/// Why a field cannot be sent: a name that is not a token, or a value with a control byte
/// other than HTAB (RFC 9110 §5.5; obs-text is allowed).
private func fieldError(_ field: Field) -> RequestEncoder.EncodeError? {
    if field.name.isEmpty || !field.name.utf8.allSatisfy(tokenBytes.contains) { return .invalidName(field.name) }
    if field.value.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) { return .invalidValue(name: field.name) }
    return nil
}

private func isReserved(_ name: String) -> Bool {
    named(name, "host") || named(name, "content-length") || named(name, "transfer-encoding")
}

/// The defaults a request sends: not reserved, and not named by one of the caller's fields.
private func sentDefaults(_ defaults: [Field], caller: [Field]) -> [Field] {
    defaults.filter { field in !isReserved(field.name) && !caller.contains { lowered($0.name.utf8) == lowered(field.name.utf8) } }
}

/// The error the encoder must throw, if any.
private func expectedError(_ request: Description) -> RequestEncoder.EncodeError? {
    if request.method.isEmpty || !request.method.utf8.allSatisfy(tokenBytes.contains) { return .invalidMethod(request.method) }
    var hosts = 0
    for field in request.fields {
        if let error = fieldError(field) { return error }
        if named(field.name, "host") {
            hosts += 1
            if hosts > 1 { return .repeatedHost }
        }
    }
    return sentDefaults(request.defaults, caller: request.fields).lazy.compactMap(fieldError).first
}

// MARK: - Checks

/// EncodedFields against the model: each default's verdict, and the bytes of the sendable ones.
private func checkDefaults(_ encoded: EncodedFields, _ list: [Field]) {
    invariant(encoded.fields.count == list.count, "\(encoded.fields.count) defaults kept of \(list.count)")
    var expectedBytes: [UInt8] = []
    for (field, given) in zip(encoded.fields, list) {
        invariant(field.name.utf8.elementsEqual(given.name.utf8), "default \(field.name.debugDescription), not \(given.name.debugDescription)")
        invariant(field.isReserved == isReserved(given.name), "\(given.name.debugDescription) reserved: \(field.isReserved)")
        invariant(field.error == fieldError(given), "\(given) judged \(String(describing: field.error))")
        var bytes: [UInt8] = []
        if field.error == nil && !field.isReserved { bytes = Array("\(given.name): \(given.value)\r\n".utf8) }
        invariant(field.range == expectedBytes.count..<(expectedBytes.count + bytes.count), "\(given) at \(field.range)")
        expectedBytes += bytes
    }
    invariant(encoded.bytes == expectedBytes, "default bytes \(encoded.bytes), not \(expectedBytes)")
    let plain = list.allSatisfy { fieldError($0) == nil && !isReserved($0.name) }
    invariant(encoded.isPlain == plain, "isPlain \(encoded.isPlain), not \(plain)")
    invariant(encoded.isEmpty == list.isEmpty, "isEmpty \(encoded.isEmpty)")
}

/// Whether `received` holds `expected` in order: names byte for byte, values less the
/// whitespace at their ends.
private func sameFields(_ received: ReceivedFields, _ expected: [Field]) -> Bool {
    guard received.count == expected.count else { return false }
    for (index, field) in expected.enumerated() {
        let same = received.withField(at: index) { name, value in
            name.elementsEqual(field.name.utf8) && value.elementsEqual(trimmed(Array(field.value.utf8)[...]))
        }
        if !same { return false }
    }
    return true
}

/// Parses the encoded request and checks it against the description.
private func checkParse(_ encoded: [UInt8], _ request: Description, framing: RequestFraming, inMemory body: [UInt8]?) {
    let parser = RequestParser()
    var events: [RequestParser.Event] = []
    let outcome = encoded.withUnsafeBytes { raw in
        Result { () throws(RequestParseError) in
            try parser.feed(raw) { appendJoiningBodies($0, to: &events, body: requestBody, makeBody: RequestParser.Event.body) }
        }
    }
    switch outcome {
    case .success(let consumed):
        invariant(consumed == encoded.count, "\(encoded.count - consumed) bytes left of \(encoded.count)")
    case .failure(let error):
        invariant(false, "the encoding of \(request) failed to parse: \(error)\n\(String(decoding: encoded, as: UTF8.self).debugDescription)")
    }
    guard case .head(let head)? = events.first else { return invariant(false, "no head: \(events)") }
    invariant(head.method == request.method, "method \(head.method), not \(request.method)")
    invariant(head.targetBytes.elementsEqual(request.target.utf8), "target \(head.target), not \(request.target)")
    invariant(head.versionMajor == 1 && head.versionMinor == 1, "version \(head.versionMajor).\(head.versionMinor)")

    var expected: [Field] = request.fields.contains { named($0.name, "host") } ? [] : [("Host", request.authority)]
    expected += request.fields.filter { !named($0.name, "content-length") && !named($0.name, "transfer-encoding") }
    expected += sentDefaults(request.defaults, caller: request.fields)
    switch framing {
    case .none: break
    case .contentLength(let length): expected.append(("Content-Length", String(length)))
    case .chunked: expected.append(("Transfer-Encoding", "chunked"))
    }
    invariant(sameFields(head.fields, expected), "fields \(Array(head.fields)), not \(expected)")
    let readFraming: RequestHead.Framing = switch framing {
    case .none: .contentLength(0)
    case .contentLength(let length): .contentLength(UInt64(length))
    case .chunked: .chunked
    }
    invariant(head.framing == readFraming, "read as \(head.framing), sent as \(framing)")

    var rest = events.dropFirst()
    if let body {
        if case .body(let bytes)? = rest.first {
            invariant(bytes == body, "body \(bytes), not \(body)")
            rest.removeFirst()
        } else {
            invariant(body.isEmpty, "no body, not \(body)")
        }
    } else if head.framing != .contentLength(0) {
        // A stream's bytes follow the head, from its reader.
        return invariant(rest.isEmpty, "events after a streamed request's head: \(rest)")
    }
    guard case .end(let trailers)? = rest.popFirst() else { return invariant(false, "no end: \(rest)") }
    invariant(trailers.count == 0, "trailers \(Array(trailers))")
    invariant(rest.isEmpty, "events after the end: \(rest)")
}

private func requestBody(_ event: RequestParser.Event) -> [UInt8]? {
    if case .body(let bytes) = event { bytes } else { nil }
}

// MARK: - The run

runFuzzer { data in
    var input = FuzzInput(data)
    let request = Description(&input)

    let model = modelFraming(method: request.method, body: request.framingBody, fields: request.fields)
    let framing: RequestFraming
    do throws(RequestFraming.Conflict) {
        framing = try RequestFraming.decide(method: request.method, body: request.framingBody, fields: request.fields)
    } catch {
        return invariant(model == nil, "refused (\(error.reason)), but the rules frame \(request) with \(model!)")
    }
    invariant(framing == model, "framed \(request) with \(framing), the rules with \(String(describing: model))")

    let defaults = EncodedFields(request.defaults)
    checkDefaults(defaults, request.defaults)

    // As PreparedRequest passes the body: a stream's follows the head later; no body under
    // chunked framing is still the empty chunked body.
    let inMemory: [UInt8]? = switch request.bodyKind {
    case 0: framing == .chunked ? [] : nil
    case 1: request.body
    default: nil
    }
    let expectedError = expectedError(request)
    let encoded: [UInt8]
    do throws(RequestEncoder.EncodeError) {
        encoded = try withBody(inMemory) { raw throws(RequestEncoder.EncodeError) in
            try RequestEncoder.encode(method: request.method, target: request.target, authority: request.authority,
                                      fields: request.fields, defaults: defaults, framing: framing, body: raw)
        }
    } catch {
        return invariant(error == expectedError, "refused with \(error), expected \(String(describing: expectedError)): \(request)")
    }
    invariant(expectedError == nil, "accepted despite \(expectedError!): \(request)")
    // The list form encodes the defaults for one request: the same bytes.
    let once = try? withBody(inMemory) { raw throws(RequestEncoder.EncodeError) in
        try RequestEncoder.encode(method: request.method, target: request.target, authority: request.authority,
                                  fields: request.fields, defaults: request.defaults, framing: framing, body: raw)
    }
    invariant(once == encoded, "the defaults as a list encode otherwise")

    guard knownMethods.contains(request.method) else { return }
    checkParse(encoded, request, framing: framing, inMemory: inMemory)
}

/// Calls `body` with `bytes` as a buffer (nil for nil; an empty array gives an empty buffer, as
/// PreparedRequest's `UnsafeRawBufferPointer(start: nil, count: 0)`).
private func withBody<T>(_ bytes: [UInt8]?, _ body: (UnsafeRawBufferPointer?) throws(RequestEncoder.EncodeError) -> T)
    throws(RequestEncoder.EncodeError) -> T {
    guard let bytes else { return try body(nil) }
    return try bytes.withUnsafeBytes { raw in
        Result { () throws(RequestEncoder.EncodeError) in try body(raw) }
    }.get()
}
