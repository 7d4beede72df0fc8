import Foundation

/// A request checked and encoded for HTTP/1.1, ready for any connection to its origin.
///
/// Made on the caller's thread when the task is created, so the loop thread only looks up the
/// pool and writes the bytes. Anything wrong with the request is found here, before any socket.
struct PreparedRequest: Sendable {
    /// The connection pool key: scheme, host, port, the proxy in between if any, and for https
    /// the security binding's id.
    struct Origin: Hashable, Sendable {
        var scheme: String
        var host: String
        var port: Int
        var securityID = 0
        var proxy: ProxyEndpoint? = nil
    }

    let origin: Origin
    /// Head and body, for one write; only the head when the body is streamed.
    let bytes: [UInt8]
    /// The streamed body, sent after the head, with its length: the declared one, or the
    /// caller's Content-Length field. nil when the body is in `bytes` (or there is none).
    let streamedBody: StreamedBody?
    /// A response to HEAD never has a body.
    let isHEAD: Bool
    /// The request carries `Expect: 100-continue` and a body: the body (always streamed then)
    /// waits for the server's `100 Continue`.
    let expectsContinue: Bool
    /// For https: the policy and TLS context the request was made under.
    let security: SecurityBinding?

    /// Validates and encodes `request`, adding `additionalFields` the request does not set.
    /// With a cookie store, adds its Cookie field unless the request opted out or has one.
    /// `security` gives an https request's binding for its host (the default refuses https).
    /// Not escaping, so a plain-http task allocates no closure context for it.
    init(_ request: Request, additionalFields: [(name: String, value: String)], cookies: CookieStore? = nil,
         proxies: ProxyConfiguration = .none,
         security: (String) throws(NetworkingError) -> SecurityBinding = Self.refuseHTTPS) throws(NetworkingError) {
        var target: RequestTarget
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
        if target.scheme == "https" {
            do {
                self.security = try security(target.host)
            } catch {
                var error = error
                error.failingURL = request.url
                throw error
            }
        } else {
            self.security = nil
        }
        // The session's additional fields are merged by the encoder (no copy of the fields).
        var fields = request.headerFields
        // Read now, on the caller's thread: the task sends the cookies of the moment it was made.
        if let cookies, request.httpShouldHandleCookies,
           !fields.contains(where: { RequestEncoder.sameName($0.name, "Cookie") }),
           !additionalFields.contains(where: { RequestEncoder.sameName($0.name, "Cookie") }),
           let value = cookies.cookieHeaderValue(for: target) {
            fields.append(("Cookie", value))
        }
        let proxy = proxies.proxy(forScheme: target.scheme, host: target.host)
        if let proxy, target.scheme == "http" {
            // Through a proxy, an http request names its whole URL (RFC 9112 §3.2.2) and carries
            // the proxy's credentials; https goes through a CONNECT tunnel instead, and the
            // proxy sees none of it.
            target.path = "http://" + target.authority + target.path
            if let authorization = proxy.authorization, request.value(forHTTPHeaderField: "Proxy-Authorization") == nil {
                fields.append(("Proxy-Authorization", authorization))
            }
        }
        let method = request.method.rawValue
        let encoded: Result<[UInt8], RequestEncoder.EncodeError>
        var streamedBody = request.bodyStream
        let expectsContinue = Self.expectsContinue(request)
        if expectsContinue, streamedBody == nil, let data = request.body {
            // The body must wait behind the head, so it cannot share the head's one write.
            streamedBody = StreamedBody(length: Int64(data.count)) { DataBodyStream(data) }
        }
        self.expectsContinue = expectsContinue
        if let stream = streamedBody {
            // The head frames a streamed body from its length; framing fields the caller set must
            // agree with it (a multipart serializer sets Content-Length, say).
            let framed = try Self.streamFraming(of: stream, fields: &fields, url: request.url)
            streamedBody = framed.body
            encoded = Result { () throws(RequestEncoder.EncodeError) in
                try RequestEncoder.encode(method: method, target: target, fields: fields, defaults: additionalFields, body: nil,
                                          streamFraming: framed.framing)
            }
        } else if let body = request.body {
            encoded = body.withUnsafeBytes { raw in
                Result { () throws(RequestEncoder.EncodeError) in
                    try RequestEncoder.encode(method: method, target: target, fields: fields, defaults: additionalFields, body: raw)
                }
            }
        } else {
            encoded = Result { () throws(RequestEncoder.EncodeError) in
                try RequestEncoder.encode(method: method, target: target, fields: fields, defaults: additionalFields, body: nil)
            }
        }
        switch encoded {
        case .success(let bytes):
            self.bytes = bytes
        case .failure(let error):
            throw NetworkingError(.invalidRequestHeader, Self.describe(error), failingURL: request.url)
        }
        self.streamedBody = streamedBody
        origin = Origin(scheme: target.scheme, host: target.host, port: target.port, securityID: self.security?.id ?? 0,
                        proxy: proxy)
        isHEAD = request.method == .head
    }

    /// Whether `request` asks for `100 Continue` before its body: it says `Expect: 100-continue`
    /// (the only expectation HTTP defines) and has a body to hold back.
    private static func expectsContinue(_ request: Request) -> Bool {
        guard let expect = request.value(forHTTPHeaderField: "Expect"),
              expect.trimmingCharacters(in: .whitespaces).caseInsensitiveCompare("100-continue") == .orderedSame else { return false }
        return request.bodyStream != nil || !(request.body?.isEmpty ?? true)
    }

    /// The `security` of a request made outside a session, which has no TLS context.
    static func refuseHTTPS(_ host: String) throws(NetworkingError) -> SecurityBinding {
        throw NetworkingError(.unsupportedURL, "https needs a session's TLS context")
    }

    /// The framing of a streamed body: Content-Length when its length is known (from the
    /// stream, or from a Content-Length field the caller set), else chunked. Removes the caller's
    /// framing fields, which the encoder writes again; throws when they contradict the stream.
    private static func streamFraming(of stream: StreamedBody, fields: inout [(name: String, value: String)],
                                      url: URL) throws(NetworkingError) -> (body: StreamedBody, framing: RequestEncoder.StreamFraming) {
        var length = stream.length
        var chunkedField = false
        var index = fields.startIndex
        while index < fields.endIndex {
            let field = fields[index]
            if field.name.caseInsensitiveCompare("Content-Length") == .orderedSame {
                guard let given = Int64(field.value.trimmingCharacters(in: .whitespaces)), given >= 0,
                      length == nil || length == given else {
                    throw NetworkingError(.invalidRequestHeader, "Content-Length \"\(field.value)\" does not match the body stream's length \(length.map(String.init) ?? "(unknown)")", failingURL: url)
                }
                length = given
                fields.remove(at: index)
            } else if field.name.caseInsensitiveCompare("Transfer-Encoding") == .orderedSame {
                guard field.value.trimmingCharacters(in: .whitespaces).caseInsensitiveCompare("chunked") == .orderedSame else {
                    throw NetworkingError(.invalidRequestHeader, "Transfer-Encoding \"\(field.value)\" cannot frame a streamed body (only chunked)", failingURL: url)
                }
                chunkedField = true
                fields.remove(at: index)
            } else {
                index += 1
            }
        }
        if chunkedField && length != nil {
            throw NetworkingError(.invalidRequestHeader, "Transfer-Encoding: chunked was set for a body stream of known length", failingURL: url)
        }
        guard let length else { return (stream, .chunked) }
        return (stream.withLength(length), .contentLength(length))
    }

    private static func describe(_ error: RequestEncoder.EncodeError) -> String {
        switch error {
        case .invalidName(let name): return "invalid header field name \"\(name)\""
        case .invalidValue(let name): return "the value of header field \"\(name)\" contains CR, LF, NUL or another control byte"
        case .invalidMethod(let method): return "invalid method \"\(method)\""
        }
    }
}
