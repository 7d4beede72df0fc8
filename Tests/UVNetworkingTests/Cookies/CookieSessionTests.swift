import Dispatch
import Foundation
import HTTPTypes
import Testing
@testable import UVNetworking
import UVHTTP1

/// Where sessions meet the store, without sockets: the Cookie field added when a request is
/// prepared, and the Set-Cookie fields stored once per finished task, whichever way it is
/// delivered.
@Suite(.tags(.loopback)) struct CookieSessionTests {
    let clock = TestClock()

    // MARK: Sending

    private func head(_ request: Request, additionalFields: [(name: String, value: String)] = [],
                      cookies: CookieStore?) throws -> String {
        let prepared = try PreparedRequest(request, additionalFields: additionalFields, cookies: cookies)
        return String(decoding: prepared.bytes, as: UTF8.self)
    }

    @Test func aPreparedRequestCarriesTheStoresCookies() throws {
        let store = clock.store()
        store.set("a=1", "b=2; Path=/p", from: "http://h/")
        let request = Request(url: URL(string: "http://h/p")!)
        #expect(try head(request, cookies: store) == "GET /p HTTP/1.1\r\nHost: h\r\nCookie: b=2; a=1\r\n\r\n")
        // No store, or a store without cookies for the URL: no field.
        #expect(try head(request, cookies: nil) == "GET /p HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(try head(Request(url: URL(string: "http://other/")!), cookies: store) == "GET / HTTP/1.1\r\nHost: other\r\n\r\n")
    }

    @Test func aRequestCanOptOutOrSendItsOwnCookieField() throws {
        let store = clock.store()
        store.set("a=1", from: "http://h/")
        var optedOut = Request(url: URL(string: "http://h/")!)
        optedOut.httpShouldHandleCookies = false
        #expect(try head(optedOut, cookies: store) == "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        var own = Request(url: URL(string: "http://h/")!)
        own.setValue("mine=1", forHTTPHeaderField: "cookie")
        #expect(try head(own, cookies: store) == "GET / HTTP/1.1\r\nHost: h\r\ncookie: mine=1\r\n\r\n")
        // A session-wide Cookie field counts as the request's own too.
        #expect(try head(Request(url: URL(string: "http://h/")!), additionalFields: [("Cookie", "session=1")], cookies: store)
                == "GET / HTTP/1.1\r\nHost: h\r\nCookie: session=1\r\n\r\n")
    }

    @Test func anEmptyStoreIsNotAskedForTheURL() throws {
        let store = clock.store()
        _ = try head(Request(url: URL(string: "http://h/")!), cookies: store)
        #expect(clock.reads == 0)
    }

    // MARK: Receiving

    private enum Delivery { case handler, hooked, awaited, streamed }

    /// Runs one finished task with a Set-Cookie head through `CompletionDelivery`, and returns
    /// how often the store was asked to store cookies (each call reads the clock once).
    private func storeCalls(_ delivery: Delivery, failed: Bool = false, handlesCookies: Bool = true) throws -> Int {
        let store = clock.store()
        var configuration = SessionConfiguration()
        configuration.cookieStore = store
        let manager = SessionManager(configuration: configuration)
        defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
        if delivery == .hooked { manager.taskDidComplete = { _, _ in } }
        var request = Request(url: URL(string: "http://example.com/")!)
        request.httpShouldHandleCookies = handlesCookies
        // An async task has a receiver instead of a completion handler.
        var handler: SessionTask.CompletionHandler?
        if delivery != .awaited { handler = { _, _, _ in } }
        let task = manager.dataTask(with: request, completionHandler: handler)
        switch delivery {
        case .awaited: task.outcomeReceiver = AsyncTaskOutcome<Int> { _, _, _, _ in 0 }
        case .streamed: task.bodyStream = BodyStreamBuffer(task: task)
        case .handler, .hooked: break
        }
        let head = ResponseHead(versionMajor: 1, versionMinor: 1, status: 200, reason: "OK",
                                headers: [HeaderField(name: "Set-Cookie", value: "a=1")], keepAlive: true)
        var error: NetworkingError?
        if failed {
            error = NetworkingError(.truncatedResponse, "cut short")
            error!.response = head.httpResponse
        }
        let group = DispatchGroup()
        let target = DeliveryTarget(queue: DispatchQueue(label: "uvnetworking.tests.cookies"), group: group,
                                    serializer: HTTPResponseSerializer(), hooks: manager.hooks.activeSnapshot())
        let before = clock.reads
        CompletionDelivery.run([SessionEngine.FinishedTask(task: task, head: head, body: Data(), error: error)], with: target)
        #expect(group.wait(timeout: .now() + 10) == .success)
        let calls = clock.reads - before
        #expect(store.header("http://example.com/") == (calls > 0 ? "a=1" : nil))
        return calls
    }

    @Test func everyDeliveryStoresTheCookiesOnce() throws {
        #expect(try storeCalls(.handler) == 1)
        #expect(try storeCalls(.hooked) == 1)
        #expect(try storeCalls(.awaited) == 1)
        // A response whose body broke off still set its cookies.
        #expect(try storeCalls(.handler, failed: true) == 1)
        #expect(try storeCalls(.hooked, failed: true) == 1)
    }

    @Test func noStoringWhenTheRequestOptsOutOrTheStreamAlreadyDid() throws {
        #expect(try storeCalls(.handler, handlesCookies: false) == 0)
        // bytes(for:) stores when it hands out the head; the end of the task must not again.
        #expect(try storeCalls(.streamed) == 0)
    }
}
