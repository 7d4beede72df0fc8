// Fuzzes UVHTTP1's encoders against its parsers: a message described by the input is encoded
// (ResponseEncoder.swift, RequestEncoder+Public.swift) and parsed back with the strict default
// options, through the public API only.
//
// Input: 4 option bytes, then length-prefixed parts (each length byte taken modulo a bound).
//   byte 0  bit 0: HTTP/1.0; bits 1-2: body kind (none, Content-Length, chunked, until close)
//           bit 3: a Content-Length field among the fields (its value the next part)
//           bit 4: names from the token alphabet; bit 5: values from printable ASCII
//           bit 6: a Transfer-Encoding: chunked field among the fields
//   bytes 1-2  status = (byte 1 << 8 | byte 2) % 1024 (so some are not 100...999)
//   byte 3  seed for the split run's feed sizes
//   then: [Content-Length value (<32)], reason (<32), field count (<8) × (name (<16), value
//   (<32)), chunk count (<6) × chunk (<256), trailer count (<4) × (name, value).
// Parts are decoded as UTF-8 (an invalid byte becomes U+FFFD), since the encoders take strings.
//
// Invariants (a violation traps with a message):
// - The encoder refuses exactly the descriptions that have a defect, found here independently
//   (a byte outside a token, a control byte in a value or the reason, whitespace at a value's
//   end, a status outside 100...999, a framing field the body contradicts, a body for 1xx, 204
//   or 304, chunked in HTTP/1.0, a framing field as a trailer), and the kind it throws is one
//   of the defects found.
// - An accepted encoding, parsed in one feed and in pieces cut at splitPoints, then finished,
//   gives back exactly what was encoded: version, status and reason; every field's name and
//   value byte for byte, in order (the encoder's framing field after the caller's); the body
//   (chunks joined); the trailers; one end, last. A 1xx comes back as an interim head before
//   the final response that follows it. The only refusal allowed is a protocol switch (101, or
//   an Upgrade field), which ResponseParser never accepts.

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

    init(_ input: inout FuzzInput) {
        let flags = input.byte()
        http10 = flags & 1 != 0
        bodyKind = Int(flags >> 1) & 3
        let tokens = flags & 16 != 0, printable = flags & 32 != 0
        status = (Int(input.byte()) << 8 | Int(input.byte())) % 1024
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
        reason = part(32, value)
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
}

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
        if case .body(let more) = event, case .body(let some)? = parse.events.last {
            parse.events[parse.events.count - 1] = .body(some + more)
        } else {
            parse.events.append(event)
        }
    }
    do throws(HTTP1ParseError) {
        var start = 0
        for end in bounds {
            while start < end {
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
    var expectedFields = message.fields
    var expectedBody: [UInt8] = []
    var expectedTrailers: [HeaderField] = []
    switch body {
    case .none: break
    case .contentLength(let bytes):
        expectedFields.append(HeaderField(name: "Content-Length", value: String(bytes.count)))
        expectedBody = bytes
    case .chunked(let chunks, let trailers):
        expectedFields.append(HeaderField(name: "Transfer-Encoding", value: "chunked"))
        expectedBody = chunks.flatMap { $0 }
        expectedTrailers = trailers
    case .untilClose(let bytes):
        expectedBody = bytes
    }

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
        expectedBody = []
        expectedTrailers = []
    }
    guard case .head(let head)? = events.popFirst() else { return invariant(false, "no head: \(whole.events)") }
    if interim {
        checkHead(head, http10: false, status: 204, reason: "No Content", fields: [])
    } else {
        checkHead(head, http10: message.http10, status: message.status, reason: message.reason, fields: expectedFields)
    }
    if case .body(let bytes)? = events.first {
        invariant(bytes == expectedBody, "body \(bytes), not \(expectedBody)")
        events.removeFirst()
    } else {
        invariant(expectedBody.isEmpty, "no body, not \(expectedBody)")
    }
    guard case .end(let trailers)? = events.popFirst() else { return invariant(false, "no end: \(whole.events)") }
    invariant(sameFields(trailers, expectedTrailers), "trailers \(Array(trailers)), not \(expectedTrailers)")
    invariant(events.isEmpty, "events after the end: \(events)")
}

runFuzzer { bytes in
    var input = FuzzInput(bytes)
    let message = Description(&input)
    roundTripResponse(message)
}
