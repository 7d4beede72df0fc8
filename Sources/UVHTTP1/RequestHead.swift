import HTTPTypes

/// A parsed request head, copied out of the parser: what `RequestParser.Event.head` carries.
public struct RequestHead: Equatable, Sendable {
    /// How the request's body is delimited (RFC 9112 §6.3).
    public enum Framing: Equatable, Sendable {
        /// A body of this many bytes; 0 when the request has none (no Content-Length and no
        /// Transfer-Encoding).
        case contentLength(UInt64)
        /// A chunked body (Transfer-Encoding: chunked).
        case chunked
    }

    /// The method as received, e.g. "GET".
    public var method: String
    /// The request target as received (origin, absolute, authority or asterisk form), as bytes.
    public var targetBytes: [UInt8]
    /// The request target decoded as UTF-8 (llhttp's strict build lets only ASCII through).
    public var target: String { String(decoding: targetBytes, as: UTF8.self) }
    /// The major version: 1.
    public var versionMajor: Int
    /// The minor version: 0 or 1.
    public var versionMinor: Int
    /// The fields as received, in order.
    public var fields: ReceivedFields
    /// Whether the connection may carry another request after this one (llhttp's verdict: HTTP/1.1
    /// without `Connection: close`, or HTTP/1.0 with `Connection: keep-alive`).
    public var keepAlive: Bool
    /// The client sent `Expect: 100-continue` in an HTTP/1.1 request: it may wait for a
    /// `100 Continue` before sending the body (RFC 9110 §10.1.1). The caller decides.
    public var expectsContinue: Bool
    /// The request asks to switch protocols (`Upgrade` with `Connection: upgrade`) or is a
    /// CONNECT: after its end the stream is no longer HTTP/1.1, so the parser stops there.
    public var isUpgrade: Bool
    /// How the body is delimited.
    public var framing: Framing

    /// A head with these parts.
    public init(method: String, targetBytes: [UInt8], versionMajor: Int, versionMinor: Int, fields: ReceivedFields,
                keepAlive: Bool, expectsContinue: Bool, isUpgrade: Bool, framing: Framing) {
        self.method = method
        self.targetBytes = targetBytes
        self.versionMajor = versionMajor
        self.versionMinor = versionMinor
        self.fields = fields
        self.keepAlive = keepAlive
        self.expectsContinue = expectsContinue
        self.isUpgrade = isUpgrade
        self.framing = framing
    }

    /// The fields as swift-http-types fields (names as the client spelled them, values as bytes
    /// when they hold obs-text).
    public var httpFields: HTTPFields {
        var result = HTTPFields()
        result.reserveCapacity(fields.count)
        for index in fields.indices {
            fields.withField(at: index) { name, value in
                // The parser lets only tokens through as names, so this never drops a field.
                guard let name = HTTPField.Name.received(name) else { return }
                if value.allSatisfy({ $0 < 0x80 }) {
                    result.append(HTTPField(name: name, value: String(decoding: value, as: UTF8.self)))
                } else {
                    result.append(HTTPField(name: name, value: value))
                }
            }
        }
        return result
    }
}

/// A request head inside the parser, handed to `RequestParserConsumer.parserReceivedHead`: its
/// byte views point into the parser's storage and are valid only during that call.
///
/// Nothing is allocated to make one; `fields` and `makeHead()` copy.
public struct RequestHeadView {
    /// The method's bytes, e.g. "GET".
    public let method: UnsafeRawBufferPointer
    /// The request target's bytes as received.
    public let target: UnsafeRawBufferPointer
    /// The major version: 1.
    public let versionMajor: Int
    /// The minor version: 0 or 1.
    public let versionMinor: Int
    /// As `RequestHead.keepAlive`.
    public let keepAlive: Bool
    /// As `RequestHead.expectsContinue`.
    public let expectsContinue: Bool
    /// As `RequestHead.isUpgrade`.
    public let isUpgrade: Bool
    /// As `RequestHead.framing`.
    public let framing: RequestHead.Framing
    /// The recorded field section, folded values, and each field's bounds in them.
    let section: UnsafeBufferPointer<UInt8>
    let extra: UnsafeBufferPointer<UInt8>
    let bounds: UnsafeBufferPointer<ReceivedFields.Bounds>

    /// Whether the method is HEAD (its response has no body, RFC 9110 §9.3.2).
    public var isHEAD: Bool {
        method.count == 4 && method[0] == UInt8(ascii: "H") && method[1] == UInt8(ascii: "E")
            && method[2] == UInt8(ascii: "A") && method[3] == UInt8(ascii: "D")
    }

    /// The fields as received (a copy).
    public var fields: ReceivedFields { ReceivedFields(section: section, extra: extra, bounds: bounds) }

    /// The head, copied out of the parser.
    public func makeHead() -> RequestHead {
        RequestHead(method: String(decoding: method, as: UTF8.self), targetBytes: Array(target),
                    versionMajor: versionMajor, versionMinor: versionMinor, fields: fields, keepAlive: keepAlive,
                    expectsContinue: expectsContinue, isUpgrade: isUpgrade, framing: framing)
    }
}
