import Foundation
import Testing
@_spi(Testing) @testable import UVNetworking

extension EndToEnd {
    /// A streamed body whose last bytes fill the consumer's buffer: reading pauses in the read
    /// that also ends the response, and the connection goes back to the pool. It must read again
    /// there, or the next request on it never gets its response.
    @Suite(.tags(.loopback)) struct StreamPausedAtItsEnd {
        @Test func theConnectionReadsAgainForTheNextRequest() async throws {
            // Exactly the pause threshold: only the body's last byte reaches it, whatever the reads.
            let size = BodyStreamBuffer.defaultHighWaterMark - BodyStreamBuffer.maximumReadSize
            let body = String(repeating: "a", count: size)
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { _ in ScriptedResponse.text(body) }
            }
            defer { server.stop() }
            let harness = ClientHarness { $0.maximumConnectionsPerHost = 1 }
            var request = Request(url: URL(string: "http://127.0.0.1:\(server.port)/first")!)
            request.timeoutInterval = 5
            let (_, first) = try await harness.manager.bytes(for: request)
            // The consumer holds still until the whole body is in and the task has ended.
            #expect(waitUntil(timeout: 10) { harness.manager.tasks.isEmpty })
            var received = 0
            for try await chunk in first { received += chunk.count }
            #expect(received == size)
            request.url = URL(string: "http://127.0.0.1:\(server.port)/second")!
            let (response, second) = try await harness.manager.bytes(for: request)
            #expect(response.status.code == 200)
            received = 0
            for try await chunk in second { received += chunk.count }
            #expect(received == size)
            #expect(server.acceptedCount == 1)
            harness.finish()
        }
    }
}
