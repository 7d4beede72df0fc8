import Foundation
import UVHTTP1

/// A request checked and encoded for HTTP/1.1, ready for any connection to its origin.
///
/// Made on the caller's thread when the task is created, so the loop thread only looks up the
/// pool and writes the bytes. Anything wrong with the request is found here, before any socket.
/// Immutable, and a class: a task, its runner and the session's `PreparedRequestCache` share
/// one instead of copying its fields.
final class PreparedRequest: Sendable {
    /// The connection pool key: scheme, host, port, the proxy in between if any, for https
    /// the security binding's id, and how the connections are marked and routed.
    struct Origin: Hashable, Sendable {
        var scheme: String
        var host: String
        var port: Int
        var securityID = 0
        var proxy: ProxyEndpoint? = nil
        /// `Request.networkServiceType`: its connections are marked for it.
        var serviceType = NetworkServiceType.default
        /// `Request.allowsCellularAccess`: a connection opened for a request that refuses
        /// cellular is routed around cellular interfaces, so the two never share one.
        var allowsCellularAccess = true
    }

    let origin: Origin
    /// Head and body, for one write; only the head when the body is streamed.
    let bytes: [UInt8]
    /// The body sent after the head, in chunks: a `Request.bodyStream`, or an in-memory body
    /// that waits for `100 Continue` or is larger than `largestBodyInOneWrite`. Its length is
    /// the one the head announces (the declared one, or the caller's Content-Length), nil when
    /// the head says chunked. nil when the body is in `bytes` (or there is none).
    let streamedBody: StreamedBody?
    /// A response to HEAD never has a body.
    let isHEAD: Bool
    /// `Request.isReplayable`, decided once per preparation (the method's string compared) rather
    /// than once per task.
    let isReplayable: Bool
    /// The request carries `Expect: 100-continue` and a body: the body (always streamed then)
    /// waits for the server's `100 Continue`.
    let expectsContinue: Bool
    /// The request may be pipelined: it allows it (`httpShouldUsePipelining`), is idempotent, and
    /// its body goes with its head.
    let mayPipeline: Bool
    /// For https: the policy and TLS context the request was made under.
    let security: SecurityBinding?
    /// The request's target, which the cookie store matches cookies against.
    let target: RequestTarget
    /// Whether the session's cookie store was asked for a Cookie field (the request handles
    /// cookies and names no Cookie field, nor do the session's fields), and what it gave: an
    /// equal request may reuse these bytes only while the store gives the same.
    let asksCookieStore: Bool
    let cookie: String?
    /// Where in `bytes` the request's own fields end: a field the request had carried last
    /// would have been written here (PreparedRequest+Fields.swift).
    let callerFieldsEnd: Int

    /// The preparation this one was made from by adding fields (PreparedRequest+Fields.swift),
    /// whose origin, security and target it shares; nil when made from a request.
    let base: PreparedRequest?

    /// `base` with `bytes` in place of its own, everything else shared: the preparation of a
    /// request that differs from base's only by fields that nothing here reads
    /// (PreparedRequest+Fields.swift).
    init(_ base: PreparedRequest, bytes: [UInt8], callerFieldsEnd: Int) {
        self.base = base
        origin = base.origin
        self.bytes = bytes
        streamedBody = base.streamedBody
        isHEAD = base.isHEAD
        isReplayable = base.isReplayable
        expectsContinue = base.expectsContinue
        mayPipeline = base.mayPipeline
        security = base.security
        target = base.target
        asksCookieStore = base.asksCookieStore
        cookie = base.cookie
        self.callerFieldsEnd = callerFieldsEnd
    }

    /// `init(_:defaults:cookies:proxies:security:)` with the session's fields as a list.
    convenience init(_ request: Request, additionalFields: [(name: String, value: String)], cookies: CookieStore? = nil,
                     proxies: ProxyConfiguration = .none,
                     security: (String) throws(NetworkingError) -> SecurityBinding = PreparedRequest.refuseHTTPS) throws(NetworkingError) {
        try self.init(request, defaults: EncodedFields(additionalFields), cookies: cookies, proxies: proxies, security: security)
    }

    /// Validates and encodes `request`, adding the session's `defaults` the request does not set.
    /// With a cookie store, adds its Cookie field unless the request opted out or has one.
    /// `security` gives an https request's binding for its host (the default refuses https).
    /// Not escaping, so a plain-http task allocates no closure context for it.
    init(_ request: Request, defaults additionalFields: EncodedFields, cookies: CookieStore? = nil,
         proxies: ProxyConfiguration = .none,
         security: (String) throws(NetworkingError) -> SecurityBinding = PreparedRequest.refuseHTTPS) throws(NetworkingError) {
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
           !additionalFields.contains(name: "Cookie") {
            asksCookieStore = true
            cookie = cookies.cookieHeaderValue(for: target)
            if let cookie { fields.append(("Cookie", cookie)) }
        } else {
            asksCookieStore = false
            cookie = nil
        }
        // The URL's user and password, as curl and URLSession send them, unless the request or
        // the session sets Authorization itself. A redirect's URL carries them only within
        // their origin (RedirectPlanner), so they never reach another server.
        if let userinfo = target.userinfo, let authorization = URLCredentials.basic(userinfo: userinfo),
           !fields.contains(where: { RequestEncoder.sameName($0.name, "Authorization") }),
           !additionalFields.contains(name: "Authorization") {
            fields.append(("Authorization", authorization))
        }
        let proxy = proxies.proxy(forScheme: target.scheme, host: target.host)
        self.target = target
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
        // The library alone frames the body; the caller's framing fields are checked here.
        let framing: RequestFraming
        do throws(RequestFraming.Conflict) {
            framing = try RequestFraming.decide(method: method, body: Self.framingBody(of: request), fields: fields)
        } catch {
            throw NetworkingError(.invalidRequestHeader, error.reason, failingURL: request.url)
        }
        let encoded: Result<[UInt8], RequestEncoder.EncodeError>
        // The caller's own fields come first in `fields`; the library's (Cookie, Authorization,
        // Proxy-Authorization) follow them.
        let callerFields = request.headerFields.count
        var fieldsEnd = 0
        var streamedBody = request.bodyStream
        let expectsContinue = Self.expectsContinue(request)
        if streamedBody == nil, let data = request.body, expectsContinue || data.count > Self.largestBodyInOneWrite {
            // The body must wait behind the head, or is large enough to go in chunks: each chunk
            // written counts as progress (upload progress, the inactivity timeout), and an early
            // response stops it between chunks.
            streamedBody = StreamedBody(length: Int64(data.count)) { DataBodyStream(data) }
        }
        self.expectsContinue = expectsContinue
        if let stream = streamedBody {
            // The reader frames what the head announces: exactly the length, or chunks.
            switch framing {
            case .contentLength(let length): streamedBody = stream.withLength(length)
            case .chunked: streamedBody = stream.withLength(nil)
            case .none: break
            }
            encoded = Result { () throws(RequestEncoder.EncodeError) in
                try RequestEncoder.encode(method: method, target: target.path, authority: target.authority, fields: fields, defaults: additionalFields,
                                          framing: framing, body: nil, marking: callerFields, at: &fieldsEnd)
            }
        } else if let body = request.body {
            encoded = body.withUnsafeBytes { raw in
                Result { () throws(RequestEncoder.EncodeError) in
                    try RequestEncoder.encode(method: method, target: target.path, authority: target.authority, fields: fields, defaults: additionalFields,
                                              framing: framing, body: raw, marking: callerFields, at: &fieldsEnd)
                }
            }
        } else {
            // No body; chunked framing still sends the empty chunked body.
            let empty = framing == .chunked ? UnsafeRawBufferPointer(start: nil, count: 0) : nil
            encoded = Result { () throws(RequestEncoder.EncodeError) in
                try RequestEncoder.encode(method: method, target: target.path, authority: target.authority, fields: fields, defaults: additionalFields,
                                          framing: framing, body: empty, marking: callerFields, at: &fieldsEnd)
            }
        }
        switch encoded {
        case .success(let bytes):
            self.bytes = bytes
            callerFieldsEnd = fieldsEnd
        case .failure(let error):
            throw NetworkingError(.invalidRequestHeader, Self.describe(error), failingURL: request.url)
        }
        self.streamedBody = streamedBody
        origin = Origin(scheme: target.scheme, host: target.host, port: target.port, securityID: self.security?.id ?? 0,
                        proxy: proxy, serviceType: request.networkServiceType, allowsCellularAccess: request.allowsCellularAccess)
        isHEAD = request.method == .head
        isReplayable = request.isReplayable
        mayPipeline = request.httpShouldUsePipelining && isReplayable && streamedBody == nil && !expectsContinue
        base = nil
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

    /// In-memory bodies up to this size leave with their head in one write; larger ones are
    /// sent in chunks like a stream (`RequestBodyReader.chunkSize`).
    static let largestBodyInOneWrite = RequestBodyReader.chunkSize

    /// The body as framing sees it.
    private static func framingBody(of request: Request) -> RequestFraming.Body {
        if let stream = request.bodyStream { return .stream(length: stream.length) }
        if let data = request.body { return .data(data.count) }
        return .none
    }

    private static func describe(_ error: RequestEncoder.EncodeError) -> String {
        switch error {
        case .invalidName(let name): return "invalid header field name \"\(name)\""
        case .invalidValue(let name): return "the value of header field \"\(name)\" contains CR, LF, NUL or another control byte"
        case .invalidMethod(let method): return "invalid method \"\(method)\""
        case .repeatedHost: return "the Host header field is given more than once"
        }
    }
}
