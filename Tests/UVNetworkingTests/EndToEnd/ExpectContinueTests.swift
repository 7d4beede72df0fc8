import Dispatch
import Foundation
import Synchronization
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// `Expect: 100-continue`: the head goes alone, the body waits for the server's go-ahead.
    @Suite(.tags(.loopback)) struct ExpectContinue {
        final class Seen: Sendable {
            /// Body bytes that arrived before the server said anything.
            let early = Mutex(-1)
            /// Body bytes read after the answer (the body, or whatever came before close).
            let body = Mutex<[UInt8]?>(nil)
            let expect = Mutex<String?>(nil)
        }

        private func uploadRequest(_ port: Int, method: String = "PUT") -> Request {
            var request = Request(url: URL(string: "http://127.0.0.1:\(port)/up")!, method: .init(method)!)
            request.setValue("100-continue", forHTTPHeaderField: "Expect")
            return request
        }

        /// Counts bytes that arrive within `seconds` without blocking past it.
        private static func bytesArriving(on connection: ScriptedConnection, within seconds: Double) -> Int {
            (try? connection.readBytes(1, timeout: seconds)).map { $0.count } ?? 0
        }

        @Test func theBodyWaitsForContinueThenFlows() throws {
            let seen = Seen()
            let server = try ScriptedServer { connection in
                let head = try connection.readRequestHead()
                seen.expect.withLock { $0 = head.header("Expect") }
                // Nothing of the body may come before the 100 (the client waits up to 1 s).
                seen.early.withLock { $0 = Self.bytesArriving(on: connection, within: 0.5) }
                try connection.write("HTTP/1.1 100 Continue\r\n\r\n")
                let body = try connection.readRequestBody(of: head)
                seen.body.withLock { $0 = body }
                try connection.write(ScriptedResponse.text("got \(body.count)"))
                _ = connection.waitForPeerClose()
            }
            let harness = ClientHarness()
            let payload = Data(GeneratedBody.expected(100_000))
            let outcome = Mutex<Outcome?>(nil)
            let done = DispatchSemaphore(value: 0)
            let upload = harness.manager.uploadTask(with: uploadRequest(server.port), from: payload, completionHandler: { response, object, error in
                outcome.withLock { $0 = Outcome(response: response, object: object, error: error) }
                done.signal()
            })
            upload.resume()
            #expect(done.wait(timeout: .now() + 10) == .success)
            #expect(outcome.withLock { $0 }?.text == "got 100000")
            #expect(seen.expect.withLock { $0 } == "100-continue")
            #expect(seen.early.withLock { $0 } == 0, "body bytes were sent before 100 Continue")
            #expect(seen.body.withLock { $0 } == GeneratedBody.expected(100_000))
            #expect(upload.countOfBytesSent == 100_000)
            server.stop()
            harness.finish()
        }

        @Test func aFinalResponseInsteadOfContinueSendsNoBody() throws {
            for status in [417, 401] {
                let seen = Seen()
                let server = try ScriptedServer { connection in
                    _ = try connection.readRequestHead()
                    try connection.write("HTTP/1.1 \(status) No\r\nContent-Length: 2\r\n\r\nno")
                    // The client must close (the connection is out of step) without a body byte.
                    let rest = try connection.readUntilClose(timeout: 5)
                    seen.body.withLock { $0 = rest }
                }
                let harness = ClientHarness()
                var request = uploadRequest(server.port)
                let log = GeneratedBodyLog()
                request.bodyStream = GeneratedBody.body(.init(produce: 1 << 20), declaredLength: 1 << 20, log: log)
                let outcome = harness.fetch(request)
                #expect(outcome.status == status)
                #expect(outcome.text == "no")
                #expect(outcome.error == nil)
                #expect(waitUntil(timeout: 5) { seen.body.withLock { $0 } != nil })
                #expect(seen.body.withLock { $0 } == [], "\(status): body bytes reached the server")
                #expect(log.reads == 0, "\(status): the body was read")
                server.stop()
                harness.finish()
            }
        }

        @Test func aServerThatIgnoresExpectGetsTheBodyAfterASecond() throws {
            let seen = Seen()
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    seen.body.withLock { $0 = request.body }
                    return ScriptedResponse.text("ok")
                }
            }
            let harness = ClientHarness()
            var request = uploadRequest(server.port, method: "POST")
            request.body = Data("payload".utf8)
            let started = monotonicSeconds()
            let outcome = harness.fetch(request)
            let elapsed = monotonicSeconds() - started
            #expect(outcome.text == "ok")
            #expect(seen.body.withLock { $0 } == Array("payload".utf8))
            #expect(elapsed >= 0.9 && elapsed < 5, "the body went after \(elapsed) s")
            server.stop()
            harness.finish()
        }
    }
}
