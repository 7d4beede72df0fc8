/// A request checked and encoded for HTTP/1.1, ready for any connection to its origin.
///
/// Made on the caller's thread when the task is created, so the loop thread only looks up the
/// pool and writes the bytes. Anything wrong with the request is found here, before any socket.
struct PreparedRequest: Sendable {
    /// The connection pool key: scheme, host and port.
    struct Origin: Hashable, Sendable {
        var scheme: String
        var host: String
        var port: Int
    }

    let origin: Origin
    /// Head and body, for one write.
    let bytes: [UInt8]
    /// A response to HEAD never has a body.
    let isHEAD: Bool

    /// Validates and encodes `request`, adding `additionalFields` the request does not set.
    init(_ request: Request, additionalFields: [(name: String, value: String)]) throws(NetworkingError) {
        let target: RequestTarget
        do throws(RequestTarget.ParseError) {
            target = try RequestTarget(absoluteURL: request.url.absoluteString)
        } catch {
            switch error {
            case .unsupportedScheme(let scheme):
                throw NetworkingError(.unsupportedURL, "unsupported URL scheme \"\(scheme)\"", failingURL: request.url)
            case .invalid(let why):
                throw NetworkingError(.invalidURL, "invalid URL: \(why)", failingURL: request.url)
            }
        }
        guard target.scheme == "http" else {
            throw NetworkingError(.unsupportedURL, "https needs TLS, which this build does not have yet", failingURL: request.url)
        }
        var fields = request.headerFields
        for extra in additionalFields where request.value(forHTTPHeaderField: extra.name) == nil {
            fields.append(extra)
        }
        let method = request.method.rawValue
        let encoded: Result<[UInt8], RequestEncoder.EncodeError>
        if let body = request.body {
            encoded = body.withUnsafeBytes { raw in
                Result { () throws(RequestEncoder.EncodeError) in
                    try RequestEncoder.encode(method: method, target: target, fields: fields, body: raw)
                }
            }
        } else {
            encoded = Result { () throws(RequestEncoder.EncodeError) in
                try RequestEncoder.encode(method: method, target: target, fields: fields, body: nil)
            }
        }
        switch encoded {
        case .success(let bytes):
            self.bytes = bytes
        case .failure(let error):
            throw NetworkingError(.invalidRequestHeader, Self.describe(error), failingURL: request.url)
        }
        origin = Origin(scheme: target.scheme, host: target.host, port: target.port)
        isHEAD = request.method == .head
    }

    private static func describe(_ error: RequestEncoder.EncodeError) -> String {
        switch error {
        case .invalidName(let name): return "invalid header field name \"\(name)\""
        case .invalidValue(let name): return "the value of header field \"\(name)\" contains CR, LF, NUL or another control byte"
        case .invalidMethod(let method): return "invalid method \"\(method)\""
        }
    }
}
