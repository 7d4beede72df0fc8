import Synchronization

// What the HTTP/1.1 response decoder hands to the connection: a head is one object and one byte
// array (its `ReceivedFields`). Only the standard library is used here so that the fuzz harness
// can compile these files alone.

/// A response head as it came off the wire.
///
/// A class, though immutable: a head travels from the decoder through the connection, the task
/// runner and the task to the worker, and each hand-off is then one retain rather than a copy of
/// every field.
public final class ResponseHead: Equatable, Sendable {
    /// Always 1: the decoder rejects any other major version.
    public let versionMajor: Int
    /// 0 or 1 (llhttp rejects HTTP/1.2 and later).
    public let versionMinor: Int
    /// Three digits, 100...999. Codes 600...999 are passed through: RFC 9110 §15 asks a client to
    /// treat them as 5xx, a policy decision left to the caller.
    public let status: Int
    /// The reason phrase, possibly empty; RFC 9112 §4 says a client should ignore it.
    public let reason: String
    /// The fields in the order received, duplicates kept. For a decoded head the storage also
    /// holds the raw head, status line included. Written only by `reuse`, when nothing else
    /// holds the head (so no other thread can read it), hence nonisolated(unsafe); no access
    /// overlaps a write either, so no exclusivity check (two calls a head).
    @exclusivity(unchecked) nonisolated(unsafe) package private(set) var headers: ReceivedFields
    /// llhttp_should_keep_alive() at headers-complete: false for HTTP/1.0 without keep-alive, Connection: close, EOF-framed bodies.
    /// Written only by `reuse`, as `headers`.
    @exclusivity(unchecked) nonisolated(unsafe) public package(set) var keepAlive: Bool
    /// An earlier head of the same connection whose raw bytes equal this one's apart from the
    /// value of its first Date field: the heads naming it share their swift-http-types response,
    /// rebuilt only when Date's value changes (see ResponseHead+HTTPTypes.swift). Always a head
    /// without a template.
    package let template: ResponseHead?
    /// The fields in the order received, duplicates kept (obs-fold joined by SP when the parser
    /// allows it); `httpFields` has them as swift-http-types fields.
    public var fields: ReceivedFields { headers }
    /// The index of the first Date field, when `template` is set.
    package let dateIndex: Int
    /// Whether a field is named Content-Encoding: most responses have none, and then the task
    /// plans no decoding (`ContentDecoder.plan`). Looked up once per template; a head with a
    /// template has the same field names.
    package let hasContentEncoding: Bool
    /// What the heads that name this one as their template share: the swift-http-types response
    /// last built for one Date value (a `DatedResponseBox`; the type lives with swift-http-types).
    package let followersResponse = Mutex<AnyObject?>(nil)
    /// The swift-http-types response of a head made from one (the cache's stored responses,
    /// `ResponseHead.built`), handed back by `httpResponse` instead of being built from the
    /// bytes; nil for a received head.
    package let builtResponse: (any AnyObject & Sendable)?

    package init(versionMajor: Int, versionMinor: Int, status: Int, reason: String, headers: ReceivedFields, keepAlive: Bool,
         template: ResponseHead? = nil, dateIndex: Int = -1, builtResponse: (any AnyObject & Sendable)? = nil) {
        self.versionMajor = versionMajor
        self.versionMinor = versionMinor
        self.status = status
        self.reason = reason
        self.headers = headers
        self.keepAlive = keepAlive
        self.template = template
        self.dateIndex = dateIndex
        self.builtResponse = builtResponse
        self.hasContentEncoding = template?.hasContentEncoding ?? headers.contains(lowercaseName: "content-encoding")
    }

    /// Makes this head (one replayed from its template, see `HeadReplay`) the next replayed head:
    /// `bytes` over the Date value at `dateValue`, in place, and its keep-alive. The caller holds
    /// the only reference (isKnownUniquelyReferenced): no task, response or thread sees it change.
    package func reuse(dateValue: Range<Int>, with bytes: UnsafeRawPointer, keepAlive: Bool) {
        headers.overwriteSection(dateValue, with: bytes)
        self.keepAlive = keepAlive
    }

    /// Whether two heads have the same version, status, reason, fields (bytes included) and keep-alive.
    public static func == (lhs: ResponseHead, rhs: ResponseHead) -> Bool {
        lhs.versionMajor == rhs.versionMajor && lhs.versionMinor == rhs.versionMinor && lhs.status == rhs.status
            && lhs.reason == rhs.reason && lhs.headers == rhs.headers && lhs.keepAlive == rhs.keepAlive
    }

    /// Whether `headers` (a head just decoded, with no obs-fold) can take `candidate` as its
    /// template: the same raw bytes, except for the value of the first Date field (at
    /// `dateIndex`, -1 when there is none), which must lie at the same place. Returns
    /// `dateIndex`, or nil.
    package static func templateMatch(_ headers: ReceivedFields, dateIndex: Int, _ candidate: ResponseHead) -> Int? {
        let other = candidate.headers
        guard other.sectionByteCount == headers.sectionByteCount, other.count == headers.count,
              other.boundsOffset == headers.boundsOffset else { return nil }
        var skipStart = headers.sectionByteCount
        var skipEnd = headers.sectionByteCount
        if dateIndex >= 0 {
            let date = headers.bounds(at: dateIndex)
            guard other.bounds(at: dateIndex) == date else { return nil }
            skipStart = Int(date.valueStart)
            skipEnd = Int(date.valueEnd)
        }
        let equal = headers.withSectionBytes { mine in
            other.withSectionBytes { theirs in
                Self.equalBytes(mine, theirs, 0, skipStart) && Self.equalBytes(mine, theirs, skipEnd, mine.count)
            }
        }
        return equal ? dateIndex : nil
    }

    /// Whether a[start..<end] == b[start..<end] (both at least `end` long).
    private static func equalBytes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Bool {
        guard end > start, let left = a.baseAddress, let right = b.baseAddress else { return true }
        return memcmpBytes(left + start, right + start, end - start)
    }
}

/// Whether `a` and `b` hold the same bytes.
package func equalBytes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
    guard a.count == b.count else { return false }
    guard let left = a.baseAddress, let right = b.baseAddress else { return true }
    return memcmpBytes(left, right, a.count)
}

/// Compares `count` bytes eight at a time (no Foundation or libc import in the fuzz build); from
/// eight bytes on, the last word overlaps the one before it rather than ending byte by byte
/// (Date's 29 bytes: four loads, not three and five single bytes).
package func memcmpBytes(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
    let left = UnsafeRawPointer(a)
    let right = UnsafeRawPointer(b)
    guard count >= 8 else {
        var offset = 0
        while offset < count {
            if a[offset] != b[offset] { return false }
            offset &+= 1
        }
        return true
    }
    var offset = 0
    while offset &+ 8 < count {
        if left.loadUnaligned(fromByteOffset: offset, as: UInt64.self) != right.loadUnaligned(fromByteOffset: offset, as: UInt64.self) {
            return false
        }
        offset &+= 8
    }
    let last = count &- 8
    return left.loadUnaligned(fromByteOffset: last, as: UInt64.self) == right.loadUnaligned(fromByteOffset: last, as: UInt64.self)
}

/// What the decoder hands on as it decodes, in wire order: `interim* head body* end` for each
/// response; an error cuts that short. Called during `ResponseParser.feed`/`finish`, from
/// inside llhttp: the consumer must not call back into the decoder (its read-only properties
/// excepted).
public protocol ResponseParserConsumer: AnyObject {
    /// A 1xx other than 101; the decoder then waits for the final response.
    func parserReceivedInterim(_ head: ResponseHead)
    /// The final response head.
    func parserReceivedHead(_ head: ResponseHead)
    /// Body bytes after chunked decoding, never empty: a view of the bytes being fed, valid
    /// only during the call.
    func parserReceivedBody(_ bytes: UnsafeRawBufferPointer)
    /// The final response is complete; `trailers` is empty unless a chunked body carried some.
    func parserReceivedEnd(trailers: ReceivedFields)
}
