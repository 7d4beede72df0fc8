import Foundation
import HTTPTypes
import Testing
@testable import UVNetworking

/// The session's memo of its last prepared request: reused for an equal request, never once
/// anything that went into the bytes has changed. No socket: tasks are made, never resumed.
@Suite(.tags(.loopback)) struct PreparedRequestCacheTests {
    private func manager(_ change: (inout SessionConfiguration) -> Void = { _ in }) -> SessionManager {
        var configuration = SessionConfiguration()
        configuration.proxy = .none
        change(&configuration)
        return SessionManager(configuration: configuration)
    }

    private func prepare(_ request: Request, _ manager: SessionManager) throws -> PreparedRequest {
        try manager.preparedRequests.prepare(request, for: manager)
    }

    private func head(_ prepared: PreparedRequest) -> String { String(decoding: prepared.bytes, as: UTF8.self) }

    @Test func anEqualRequestReusesTheEncoding() throws {
        let manager = manager()
        let request = Request(url: URL(string: "http://h.test:8080/a?b=c")!, headerFields: [.accept: "*/*"])
        let first = try prepare(request, manager)
        #expect(try prepare(request, manager) === first)
        // Equal, not the same value: built again from the same text.
        #expect(try prepare(Request(url: URL(string: "http://h.test:8080/a?b=c")!, headerFields: [.accept: "*/*"]), manager) === first)
        #expect(head(first) == "GET /a?b=c HTTP/1.1\r\nHost: h.test:8080\r\nAccept: */*\r\nAccept-Encoding: gzip, deflate, br, zstd\r\n\r\n")
    }

    @Test func tasksMadeFromOneRequestShareItsPreparation() throws {
        let manager = manager()
        let request = Request(url: URL(string: "http://h.test/")!)
        let tasks = (0..<3).map { _ in manager.dataTask(with: request) }
        defer { tasks.forEach { $0.cancel() } }
        let prepared = try tasks.map { try $0.prepared.get() }
        #expect(prepared[1] === prepared[0] && prepared[2] === prepared[0])
    }

    @Test func everyChangeToTheRequestMisses() throws {
        let manager = manager()
        let base = Request(url: URL(string: "http://h.test/a")!, method: .post, body: Data("x".utf8))
        var changes: [(String, (inout Request) -> Void)] = [
            ("url", { $0.url = URL(string: "http://h.test/b")! }),
            ("method", { $0.method = .put }),
            ("field added", { $0.addValue("1", forHTTPHeaderField: "X-A") }),
            ("body", { $0.body = Data("y".utf8) }),
            ("credentials", { $0.url = URL(string: "http://u:p@h.test/a")! }),
        ]
        changes.append(("field value", { $0.setValue("2", forHTTPHeaderField: "X-A") }))
        for (what, change) in changes {
            let before = try prepare(base, manager)
            var changed = base
            change(&changed)
            let after = try prepare(changed, manager)
            #expect(after !== before, "\(what)")
            #expect(after.bytes != before.bytes, "\(what)")
            #expect(after.bytes == (try PreparedRequest(changed, defaults: manager.defaultRequestFields)).bytes, "\(what)")
        }
    }

    @Test func theRequestSerializersDefaultHeadersChangingMisses() throws {
        let manager = HTTPSessionManager(baseURL: nil)
        let serializer = HTTPRequestSerializer()
        serializer.setValue("one", forHTTPHeaderField: "X-Default")
        let first = try prepare(try serializer.request(method: .get, urlString: "http://h.test/", parameters: nil), manager)
        #expect(try prepare(try serializer.request(method: .get, urlString: "http://h.test/", parameters: nil), manager) === first)
        serializer.setValue("two", forHTTPHeaderField: "X-Default")
        let second = try prepare(try serializer.request(method: .get, urlString: "http://h.test/", parameters: nil), manager)
        #expect(second !== first)
        #expect(head(second).contains("X-Default: two\r\n") && !head(second).contains("X-Default: one"))
    }

    @Test func eachSessionSendsItsOwnFieldsAndProxy() throws {
        let request = Request(url: URL(string: "http://h.test/")!)
        let plain = manager()
        let other = manager {
            $0.httpAdditionalHeaders = [("X-Session", "b")]
            $0.proxy = ProxyConfiguration(httpProxy: URL(string: "http://proxy.test:3128")!)
        }
        let fromPlain = try prepare(request, plain)
        let fromOther = try prepare(request, other)
        #expect(head(fromPlain) == "GET / HTTP/1.1\r\nHost: h.test\r\nAccept-Encoding: gzip, deflate, br, zstd\r\n\r\n")
        #expect(head(fromOther) == "GET http://h.test/ HTTP/1.1\r\nHost: h.test\r\nX-Session: b\r\nAccept-Encoding: gzip, deflate, br, zstd\r\n\r\n")
        #expect(fromOther.origin.proxy != nil && fromPlain.origin.proxy == nil)
    }

    @Test func aCookieAppearingChangingOrGoingMisses() throws {
        let store = CookieStore()
        let manager = manager { $0.cookieStore = store }
        let request = Request(url: URL(string: "http://h.test/")!)
        let none = try prepare(request, manager)
        #expect(try prepare(request, manager) === none)
        store.set("a=1", from: "http://h.test/")
        let one = try prepare(request, manager)
        #expect(one !== none && head(one).contains("Cookie: a=1\r\n"))
        #expect(try prepare(request, manager) === one)
        store.set("a=2", from: "http://h.test/")
        let two = try prepare(request, manager)
        #expect(two !== one && head(two).contains("Cookie: a=2\r\n"))
        store.set("a=2; Max-Age=0", from: "http://h.test/")
        let gone = try prepare(request, manager)
        #expect(gone !== two && !head(gone).contains("Cookie"))
        // A request that does not handle cookies never asks the store.
        var optedOut = request
        optedOut.httpShouldHandleCookies = false
        store.set("a=3", from: "http://h.test/")
        #expect(!head(try prepare(optedOut, manager)).contains("Cookie"))
    }

    @Test func aNewSecurityPolicyMisses() throws {
        let manager = manager()
        let request = Request(url: URL(string: "https://h.test/")!)
        let first = try prepare(request, manager)
        #expect(try prepare(request, manager) === first)
        try manager.setSecurityPolicy(SecurityPolicy.default)
        let second = try prepare(request, manager)
        #expect(second !== first)
        #expect(second.security !== first.security && second.origin.securityID != first.origin.securityID)
        try manager.setSecurityPolicy(SecurityPolicy.default, forHost: "h.test")
        #expect(try prepare(request, manager) !== second)
    }

    @Test func largeAndStreamedBodiesAreNotKept() throws {
        let manager = manager()
        let large = Request(url: URL(string: "http://h.test/")!, method: .put, body: Data(count: PreparedRequestCache.largestEntry))
        #expect(try prepare(large, manager) !== (try prepare(large, manager)))
        var streamed = Request(url: URL(string: "http://h.test/")!, method: .put)
        streamed.bodyStream = StreamedBody(length: 1) { DataBodyStream(Data("x".utf8)) }
        #expect(try prepare(streamed, manager) !== (try prepare(streamed, manager)))
    }

    @Test func aRequestThatCannotBeSentFailsEveryTime() {
        let manager = manager()
        var request = Request(url: URL(string: "http://h.test/")!)
        request.setValue("a\r\nb", forHTTPHeaderField: "X")
        for _ in 0..<2 {
            #expect(throws: NetworkingError.self) { _ = try prepare(request, manager) }
        }
    }
}
