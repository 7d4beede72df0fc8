import Foundation
import Synchronization
import Testing
import LoopbackHTTPServer
@_spi(Testing) @testable import UVNetworking

/// The server against the library's own client: what a SessionManager and an
/// HTTPSessionManager see, over one reused connection.
@Suite(.tags(.loopback), .serialized) struct LoopbackHTTPServerClientTests {
    /// A started server and a harness made after it, so the server's own descriptors are part of
    /// the harness's baseline and `finish()` checks only what the session opened.
    private func start() throws -> (LoopbackHTTPServer, String, ClientHarness) {
        let server = LoopbackHTTPServer()
        let port = try server.start()
        return (server, "http://127.0.0.1:\(port)", ClientHarness())
    }

    @Test func itemsStatusesAndUnknownPathsOverOneConnection() throws {
        let (server, base, harness) = try start()
        defer { server.stop() }
        for item in [0, 1, 255, 256, 123_456] {
            let outcome = harness.fetch("\(base)/items/\(item)")
            #expect(outcome.status == 200)
            #expect(outcome.data == Data(LoopbackHTTPServer.itemBody(item)))
            #expect(outcome.response?.headerFields[.contentType] == "text/plain")
        }
        let unavailable = harness.fetch("\(base)/status/503")
        #expect(unavailable.status == 503)
        #expect(unavailable.text == "status 503\n")
        let noContent = harness.fetch("\(base)/status/204")
        #expect(noContent.status == 204)
        #expect(noContent.data?.isEmpty ?? true)
        let missing = harness.fetch("\(base)/missing")
        #expect(missing.status == 404)
        #expect(missing.text == "not found\n")
        #expect(harness.manager.openConnectionCount == 1, "every answer kept the connection alive")
        harness.finish()
    }

    @Test func headAndBodiesThroughTheClient() throws {
        let (server, base, harness) = try start()
        defer { server.stop() }
        let head = harness.fetch("\(base)/items/42", method: .head)
        #expect(head.status == 200)
        #expect(head.data?.isEmpty ?? true)
        #expect(head.response?.headerFields[.contentLength] == String(LoopbackHTTPServer.itemBodyLength(42)))
        let posted = harness.fetch("\(base)/items/43", method: .post, body: String(repeating: "b", count: 100_000))
        #expect(posted.status == 200)
        #expect(posted.data == Data(LoopbackHTTPServer.itemBody(43)))
        let closing = harness.fetch("\(base)/items/44", fields: [("Connection", "close")])
        #expect(closing.data == Data(LoopbackHTTPServer.itemBody(44)))
        harness.finish()
    }

    @Test func manyConcurrentRequestsAllSucceed() throws {
        let (server, base, harness) = try start()
        defer { server.stop() }
        let count = 2_000
        let wrong = Mutex<[Int]>([])
        let group = DispatchGroup()
        for item in 0..<count {
            group.enter()
            harness.manager.dataTask(with: ClientHarness.request("\(base)/items/\(item)"), completionHandler: { response, object, _ in
                if response?.status.code != 200 || object as? Data != Data(LoopbackHTTPServer.itemBody(item)) {
                    wrong.withLock { $0.append(item) }
                }
                group.leave()
            }).resume()
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        #expect(wrong.withLock { $0 }.isEmpty, "wrong answers for items \(wrong.withLock { $0 }.prefix(10))")
        harness.finish()
    }

    @Test func httpSessionManagerGetsRelativeToItsBaseURL() throws {
        let server = LoopbackHTTPServer()
        let port = try server.start()
        defer { server.stop() }
        let harness = ClientHarness(makeManager: { configuration in
            HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1:\(port)/items/"), configuration: configuration)
        })
        let manager = harness.manager as! HTTPSessionManager
        let received = Mutex<Data?>(nil)
        let done = DispatchSemaphore(value: 0)
        _ = manager.get("77", success: { _, object in
            received.withLock { $0 = object as? Data }
            done.signal()
        }, failure: { _, _ in done.signal() })
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(received.withLock { $0 } == Data(LoopbackHTTPServer.itemBody(77)))
        harness.finish()
    }
}
