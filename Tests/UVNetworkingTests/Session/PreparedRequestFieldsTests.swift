import Foundation
import HTTPTypes
import Testing
import UVHTTP1
@testable import UVNetworking

/// A tracer's fields written into a kept preparation (`PreparedRequest.adding`): the bytes must be
/// those of a fresh preparation of the request with the fields appended, or there is no shortcut.
@Suite(.tags(.unit)) struct PreparedRequestFieldsTests {
    private static let defaults: [(name: String, value: String)] = [("User-Agent", "t/1"), ("Accept-Encoding", "gzip")]

    private func fields(_ pairs: [(String, String)]) -> InjectedFields {
        var fields = InjectedFields()
        for (name, value) in pairs { InjectedFieldsInjector().inject(value, forKey: name, into: &fields) }
        return fields
    }

    private func prepare(_ request: Request, cookies: CookieStore? = nil, proxies: ProxyConfiguration = .none) throws -> PreparedRequest {
        try PreparedRequest(request, additionalFields: Self.defaults, cookies: cookies, proxies: proxies)
    }

    /// `request` with `pairs` set as a traced task sends it (`TaskTrace.request(from:)`).
    private func withFields(_ request: Request, _ pairs: [(String, String)]) -> Request {
        var request = request
        for (name, value) in pairs { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    private static func request(_ url: String, method: HTTPRequest.Method = .get, fields: [(String, String)] = [],
                                body: Data? = nil) -> Request {
        var request = Request(url: URL(string: url)!, method: method, body: body)
        for (name, value) in fields { request.addValue(value, forHTTPHeaderField: name) }
        return request
    }

    static let requests: [Request] = [
        request("http://h/"),
        request("http://h:8080/a?b=c", fields: [("X-One", "1"), ("X-Two", "2")]),
        request("http://user:pw@h/secret", fields: [("Accept", "*/*")]),
        request("http://h/up", method: .post, fields: [("Content-Type", "text/plain")], body: Data("body".utf8)),
        request("http://h/up", method: .put, fields: [("Transfer-Encoding", "chunked")], body: Data("chunk".utf8)),
        request("http://h/", fields: [("User-Agent", "mine")]),
        request("http://h/", method: .post, body: Data(count: PreparedRequest.largestBodyInOneWrite + 1)),
    ]

    @Test(arguments: requests)
    func theBytesAreThoseOfAFreshPreparation(request: Request) throws {
        let pairs = [("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"), ("tracestate", "rec=1")]
        let base = try prepare(request)
        let added = try #require(PreparedRequest.adding(fields(pairs), to: base, of: request, defaults: EncodedFields(Self.defaults)))
        let fresh = try prepare(withFields(request, pairs))
        #expect(String(decoding: added.bytes, as: UTF8.self) == String(decoding: fresh.bytes, as: UTF8.self))
        #expect(added.callerFieldsEnd == fresh.callerFieldsEnd)
        #expect(added.origin == fresh.origin)
        #expect((added.streamedBody == nil) == (fresh.streamedBody == nil))
        #expect(added.base === base)
    }

    /// The Cookie field the store gives, and a proxy's absolute target and credentials, come
    /// after the caller's fields: the trace fields still go before them, as a fresh preparation
    /// puts them.
    @Test func cookiesAndAProxysFieldsStayAfterTheTraceFields() throws {
        let cookies = CookieStore()
        cookies.setCookies(fromSetCookieHeaders: ["a=1"], for: URL(string: "http://h/")!)
        let proxies = ProxyConfiguration(httpProxy: URL(string: "http://pu:pp@proxy:3128")!)
        let request = Self.request("http://h/p", fields: [("X-One", "1")])
        let pairs = [("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")]
        let base = try prepare(request, cookies: cookies, proxies: proxies)
        let added = try #require(PreparedRequest.adding(fields(pairs), to: base, of: request, defaults: EncodedFields(Self.defaults)))
        let fresh = try prepare(withFields(request, pairs), cookies: cookies, proxies: proxies)
        let head = String(decoding: added.bytes, as: UTF8.self)
        #expect(head == String(decoding: fresh.bytes, as: UTF8.self))
        #expect(head.contains("X-One: 1\r\ntraceparent: 00-"))
        #expect(head.contains("Cookie: a=1"))
    }

    /// A field that would replace one of the caller's or drop a session default, or one the
    /// preparation reads, has no shortcut: the caller prepares the request afresh.
    @Test(arguments: [
        ("traceparent", [("TraceParent", "caller's")]),
        ("user-agent", []),
        ("Host", []),
        ("cookie", []),
        ("Authorization", []),
        ("Content-Length", []),
        ("expect", []),
    ] as [(String, [(String, String)])])
    func aFieldThatIsNotSimplyAddedHasNoShortcut(name: String, callerFields: [(String, String)]) throws {
        let request = Self.request("http://h/", fields: callerFields)
        let base = try prepare(request)
        #expect(PreparedRequest.adding(fields([(name, "v")]), to: base, of: request, defaults: EncodedFields(Self.defaults)) == nil)
    }

    /// What a fresh preparation of the spliced request would give is what adding twice gives:
    /// the end of the caller's fields moves past what was added.
    @Test func addingTwiceIsAddingBoth() throws {
        let request = Self.request("http://h/", fields: [("X-One", "1")])
        let base = try prepare(request)
        let defaults = EncodedFields(Self.defaults)
        let once = try #require(PreparedRequest.adding(fields([("a", "1")]), to: base, of: request, defaults: defaults))
        let twice = try #require(PreparedRequest.adding(fields([("b", "2")]), to: once, of: withFields(request, [("a", "1")]),
                                                        defaults: defaults))
        let fresh = try prepare(withFields(request, [("a", "1"), ("b", "2")]))
        #expect(String(decoding: twice.bytes, as: UTF8.self) == String(decoding: fresh.bytes, as: UTF8.self))
    }
}
