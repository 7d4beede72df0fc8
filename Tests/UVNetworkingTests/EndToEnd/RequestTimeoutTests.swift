import Foundation
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// `Request.timeoutInterval` is an inactivity timeout (no byte sent or received for that long),
    /// as in NSURLRequest; `Request.totalTimeoutInterval` bounds the whole request.
    @Suite(.tags(.loopback)) struct RequestTimeouts {
        /// Sends a 30-byte body one byte every 100 ms (3 s in all).
        private func tricklingServer() throws -> ScriptedServer {
            try ScriptedServer { connection in
                _ = try connection.readRequest()
                try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 30\r\n\r\n")
                for _ in 0..<30 {
                    connection.pause(0.1)
                    try connection.write("x")
                }
                _ = connection.waitForPeerClose(timeout: 10)
            }
        }

        @Test func aBodyThatKeepsFlowingNeverHitsTheInactivityTimeout() throws {
            let server = try tricklingServer()
            defer { server.stop() }
            let harness = ClientHarness()
            // Ten times the gap between bytes, a third of the whole transfer.
            let outcome = harness.fetch("http://127.0.0.1:\(server.port)/", timeout: 1)
            #expect(outcome.error == nil, "\(String(describing: outcome.error))")
            #expect(outcome.text == String(repeating: "x", count: 30))
            server.stop()
            harness.finish()
        }

        @Test func theTotalTimeoutEndsABodyThatKeepsFlowing() throws {
            let server = try tricklingServer()
            defer { server.stop() }
            let harness = ClientHarness()
            var request = ClientHarness.request("http://127.0.0.1:\(server.port)/", timeout: 1)
            request.totalTimeoutInterval = 0.5
            let outcome = harness.fetch(request)
            #expect(outcome.code == .requestTimeout)
            #expect(outcome.status == 200, "the head that arrived is reported with the error")
            #expect("\(outcome.error!)".contains("longer than its totalTimeoutInterval (0.5 s)"))
            server.stop()
            harness.finish()
        }

        @Test func aBodyThatStopsHitsTheInactivityTimeout() throws {
            let server = try ScriptedServer { connection in
                _ = try connection.readRequest()
                try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 30\r\n\r\nabc")
                _ = connection.waitForPeerClose(timeout: 10)
            }
            defer { server.stop() }
            let harness = ClientHarness()
            let outcome = harness.fetch("http://127.0.0.1:\(server.port)/", timeout: 0.3)
            #expect(outcome.code == .requestTimeout)
            #expect(outcome.status == 200)
            #expect("\(outcome.error!)".contains("no byte was sent or received for 0.3 s"))
            server.stop()
            harness.finish()
        }

        @Test func anUploadThatKeepsMovingNeverHitsTheInactivityTimeout() throws {
            let size = 32 << 20
            let step = 1 << 20
            let server = try ScriptedServer { connection in
                let head = try connection.readRequestHead()
                guard head.header("Content-Length") == String(size) else { return }
                // Slowly: more than the loopback buffers hold, so the client's writes follow the reads.
                for _ in 0..<(size / step) {
                    try connection.discard(step)
                    connection.pause(0.1)
                }
                try connection.write(ScriptedResponse.text("stored"))
                _ = connection.waitForPeerClose(timeout: 10)
            }
            defer { server.stop() }
            let harness = ClientHarness()
            var request = Request(url: URL(string: "http://127.0.0.1:\(server.port)/")!, method: .put,
                                  body: Data(count: size), timeoutInterval: 1)
            request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
            let outcome = harness.fetch(request)
            #expect(outcome.error == nil, "\(String(describing: outcome.error))")
            #expect(outcome.text == "stored")
            server.stop()
            harness.finish()
        }

        @Test func anUploadThatStallsHitsTheInactivityTimeout() throws {
            let server = try ScriptedServer { connection in
                _ = try connection.readRequestHead()
                connection.pause(30)  // never reads the body, never answers
            }
            defer { server.stop() }
            let harness = ClientHarness()
            var request = Request(url: URL(string: "http://127.0.0.1:\(server.port)/")!, method: .put, timeoutInterval: 0.5)
            request.bodyStream = GeneratedBody.body(GeneratedBody.Spec(produce: 256 << 20, fast: true),
                                                    declaredLength: 256 << 20, log: GeneratedBodyLog())
            let outcome = harness.fetch(request)
            #expect(outcome.code == .requestTimeout)
            #expect("\(outcome.error!)".contains("no byte was sent or received for 0.5 s"))
            server.stop()
            harness.finish()
        }

        @Test func aSuspendedTaskDoesNotTimeOut() throws {
            let server = try ScriptedServer { connection in
                _ = try connection.readRequest()
                try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nabc")
                connection.pause(0.1)
                try connection.write("def")
                _ = connection.waitForPeerClose(timeout: 10)
            }
            defer { server.stop() }
            let harness = ClientHarness()
            let (task, wait) = harness.makeTask(ClientHarness.request("http://127.0.0.1:\(server.port)/", timeout: 0.5))
            task.resume()
            #expect(waitUntil(timeout: 5) { task.countOfBytesReceived == 3 })
            task.suspend()
            Thread.sleep(forTimeInterval: 1.2)
            task.resume()
            let outcome = wait(5)
            #expect(outcome?.error == nil, "\(String(describing: outcome?.error))")
            #expect(outcome?.text == "abcdef")
            server.stop()
            harness.finish()
        }

        @Test(arguments: [1e20, .infinity, .greatestFiniteMagnitude, 0, -1, .nan] as [Double])
        func anyTimeoutValueIsAccepted(seconds: Double) throws {
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive(idleTimeout: 10) { _ in ScriptedResponse.text("fine") }
            }
            defer { server.stop() }
            let harness = ClientHarness {
                $0.connectTimeout = seconds
                $0.responseHeadTimeout = seconds
                $0.idleTimeout = seconds
                $0.idleConnectionTimeout = seconds
                $0.dnsCacheTTL = seconds
            }
            var request = ClientHarness.request("http://localhost:\(server.port)/", timeout: seconds)
            request.totalTimeoutInterval = seconds
            let outcome = harness.fetch(request, within: 10)
            #expect(outcome.error == nil, "\(String(describing: outcome.error))")
            #expect(outcome.text == "fine")
            server.stop()
            harness.finish()
        }
    }
}
