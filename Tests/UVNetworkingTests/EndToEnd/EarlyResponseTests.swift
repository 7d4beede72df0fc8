import Foundation
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// A server that answers before it has read the request body (a 413, a 401) ends the task with
    /// that response at once, whatever the body and whether or not the server ever reads or closes.
    @Suite(.tags(.loopback)) struct EarlyResponse {
        enum BodyKind: String, CaseIterable, Sendable {
            case inMemory, streamedWithLength, streamedChunked
        }

        private static let size = 50 << 20

        private func request(_ url: String, body kind: BodyKind) -> Request {
            var request = Request(url: URL(string: url)!, method: .post, timeoutInterval: 60)
            switch kind {
            case .inMemory:
                request.body = Data(count: Self.size)
            case .streamedWithLength, .streamedChunked:
                let spec = GeneratedBody.Spec(produce: Int64(Self.size), fast: true)
                request.bodyStream = GeneratedBody.body(spec, declaredLength: kind == .streamedChunked ? nil : Int64(Self.size),
                                                        log: GeneratedBodyLog())
            }
            return request
        }

        @Test(arguments: BodyKind.allCases)
        func an413FromAServerThatNeverReadsTheBodyEndsTheTaskAtOnce(kind: BodyKind) throws {
            let server = try ScriptedServer { connection in
                _ = try connection.readRequestHead()
                // Keep-alive, and then neither read nor close: only the client can end this.
                try connection.write(ScriptedResponse.text("too large", status: 413, reason: "Content Too Large"))
                connection.pause(60)
            }
            defer { server.stop() }
            let harness = ClientHarness()
            let url = "http://127.0.0.1:\(server.port)/upload"
            let started = monotonicSeconds()
            let outcome = harness.fetch(request(url, body: kind), within: 30)
            #expect(monotonicSeconds() - started < 10, "the response ended the task, not the 60 s timeout")
            #expect(outcome.error == nil, "\(String(describing: outcome.error))")
            #expect(outcome.status == 413)
            #expect(outcome.text == "too large")
            // The connection is out of step (the server may still expect the body): never reused.
            #expect(harness.fetch(url, timeout: 10).status == 413)
            #expect(server.acceptedCount == 2)
            server.stop()
            harness.finish()
        }

        @Test func overTLSToo() throws {
            let pki = TestPKI.standard
            let server = try ScriptedServer { connection in
                let tls = try ScriptedTLS(connection, chain: pki.sentChain, key: pki.leaf.key)
                try tls.handshake()
                _ = try tls.readRequestHead()
                try tls.write(ScriptedResponse.text("too large", status: 413, reason: "Content Too Large"))
                connection.pause(60)
            }
            defer { server.stop() }
            let harness = tlsHarness()
            let started = monotonicSeconds()
            let outcome = harness.fetch(request("https://localhost:\(server.port)/upload", body: .inMemory), within: 30)
            #expect(monotonicSeconds() - started < 10)
            #expect(outcome.error == nil, "\(String(describing: outcome.error))")
            #expect(outcome.status == 413)
            #expect(outcome.text == "too large")
            server.stop()
            harness.finish()
        }
    }
}
