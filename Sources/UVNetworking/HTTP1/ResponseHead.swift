// What the HTTP/1.1 response decoder hands to the connection: heads, body bytes and the end.
// Only the standard library is used here so that the fuzz harness can compile these files alone.

/// One header or trailer field as received (obs-fold already replaced by a space).
///
/// The name keeps the peer's spelling (compare it case-insensitively). The value has its leading
/// and trailing whitespace removed. Both are decoded as UTF-8; a byte that is not valid UTF-8
/// (obs-text) becomes U+FFFD, which is why a field must never be re-serialised from this form.
struct HeaderField: Equatable, Sendable {
    var name: String
    var value: String
}

/// A field section (a head's fields, or trailers) as received, kept as bytes.
///
/// Names and values sit back to back in one byte array: two allocations per head however many
/// fields it has, and no String is made on the loop thread. Strings are made where they are
/// needed, off the loop (see `ResponseHead.httpResponse`), or by the `HeaderField` view for tests.
struct ReceivedFields: RandomAccessCollection, ExpressibleByArrayLiteral, Equatable, Sendable {
    /// Where one field's name and value end in `bytes`; its name starts where the previous
    /// field's value ended.
    struct Bounds: Equatable, Sendable {
        var nameEnd: Int32
        var valueEnd: Int32
    }

    /// Every field's name then value, in order, with nothing between them.
    private(set) var bytes: [UInt8]
    private(set) var bounds: [Bounds]

    /// No field.
    init() {
        bytes = []
        bounds = []
    }

    /// Takes bytes and bounds as the decoder gathered them.
    init(bytes: [UInt8], bounds: [Bounds]) {
        self.bytes = bytes
        self.bounds = bounds
    }

    /// Fields given as strings (tests, and the fuzz harness's expectations).
    init(_ fields: some Sequence<HeaderField>) {
        self.init()
        for field in fields {
            bytes += field.name.utf8
            let nameEnd = Int32(bytes.count)
            bytes += field.value.utf8
            bounds.append(Bounds(nameEnd: nameEnd, valueEnd: Int32(bytes.count)))
        }
    }

    init(arrayLiteral fields: HeaderField...) {
        self.init(fields)
    }

    var startIndex: Int { 0 }
    var endIndex: Int { bounds.count }

    /// The field at `index`, decoded as UTF-8 (invalid bytes become U+FFFD).
    subscript(index: Int) -> HeaderField {
        withField(at: index) { name, value in
            HeaderField(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self))
        }
    }

    /// The index of the first field named `lowercaseName`, compared ASCII case-insensitively on
    /// the raw bytes: no String is made, nothing is allocated.
    private func firstIndex(named lowercaseName: StaticString) -> Int? {
        let expected = lowercaseName.utf8Start
        let count = lowercaseName.utf8CodeUnitCount
        return bytes.withUnsafeBufferPointer { all in
            var nameStart = 0
            for (index, field) in bounds.enumerated() {
                defer { nameStart = Int(field.valueEnd) }
                guard Int(field.nameEnd) - nameStart == count else { continue }
                var offset = 0
                while offset < count {
                    let byte = all[nameStart + offset]
                    guard (byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) == expected[offset] else { break }
                    offset += 1
                }
                if offset == count { return index }
            }
            return nil
        }
    }

    /// Whether a field is named `lowercaseName` (ASCII case-insensitively).
    func contains(lowercaseName: StaticString) -> Bool {
        firstIndex(named: lowercaseName) != nil
    }

    /// The value of the first field named `lowercaseName` (ASCII case-insensitively), or nil.
    func firstValue(named lowercaseName: StaticString) -> String? {
        guard let index = firstIndex(named: lowercaseName) else { return nil }
        return withField(at: index) { _, value in String(decoding: value, as: UTF8.self) }
    }

    /// Calls `body` with the raw name and value of the field at `index`.
    func withField<Result>(at index: Int, _ body: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        let nameStart = index == 0 ? 0 : Int(bounds[index - 1].valueEnd)
        let field = bounds[index]
        return try bytes.withUnsafeBufferPointer { all in
            try body(UnsafeBufferPointer(rebasing: all[nameStart..<Int(field.nameEnd)]),
                     UnsafeBufferPointer(rebasing: all[Int(field.nameEnd)..<Int(field.valueEnd)]))
        }
    }
}

/// A response head as it came off the wire.
///
/// A class, though immutable: a head travels from the decoder through the connection, the task
/// runner and the task to the worker, and each hand-off is then one retain rather than a copy of
/// every field.
final class ResponseHead: Equatable, Sendable {
    /// Always 1: the decoder rejects any other major version.
    let versionMajor: Int
    /// 0 or 1 (llhttp rejects HTTP/1.2 and later).
    let versionMinor: Int
    /// Three digits, 100...999. Codes 600...999 are passed through: RFC 9110 §15 asks a client to
    /// treat them as 5xx, a policy decision left to the caller.
    let status: Int
    /// The reason phrase, possibly empty; RFC 9112 §4 says a client should ignore it.
    let reason: String
    /// The fields in the order received, duplicates kept.
    let headers: ReceivedFields
    /// llhttp_should_keep_alive() at headers-complete: false for HTTP/1.0 without keep-alive, Connection: close, EOF-framed bodies.
    let keepAlive: Bool

    init(versionMajor: Int, versionMinor: Int, status: Int, reason: String, headers: ReceivedFields, keepAlive: Bool) {
        self.versionMajor = versionMajor
        self.versionMinor = versionMinor
        self.status = status
        self.reason = reason
        self.headers = headers
        self.keepAlive = keepAlive
    }

    static func == (lhs: ResponseHead, rhs: ResponseHead) -> Bool {
        lhs.versionMajor == rhs.versionMajor && lhs.versionMinor == rhs.versionMinor && lhs.status == rhs.status
            && lhs.reason == rhs.reason && lhs.headers == rhs.headers && lhs.keepAlive == rhs.keepAlive
    }
}

/// What the decoder produced from the bytes it was fed, in wire order.
///
/// One response is `informational* head body* end`; an error can cut that sequence short.
enum ResponseEvent: Equatable, Sendable {
    /// 1xx other than 101; the decoder then waits for the final response.
    case informational(ResponseHead)
    /// The final response head.
    case head(ResponseHead)
    /// Consecutive body bytes of one feed merged into one event (never empty).
    case body([UInt8])
    /// The final response is complete; `trailers` is empty unless a chunked body carried some.
    case end(trailers: ReceivedFields)
}
