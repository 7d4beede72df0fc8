import Foundation
import Testing
// Deliberately without `@_spi(Testing)` or `@testable`: `openConnectionCount` is public API, as a
// service uses it to check a drain, and this file compiles only while it is.
import UVNetworking

/// `SessionManager.openConnectionCount`: what it counts, through the public API alone.
@Suite(.tags(.loopback)) struct SessionOpenConnectionCountTests {
    @Test func countsTheKeptConnectionThenZeroOnceShutDown() async throws {
        let server = try ScriptedServer { connection in
            try connection.serveKeepAlive { _ in ScriptedResponse.text("ok") }
        }
        defer { server.stop() }
        let loop = try EventLoop(name: "test.open-connection-count")
        let workers = WorkerPool(threads: 1, name: "test.open-connection-count.workers")
        let manager = SessionManager(loop: loop, workers: workers)
        #expect(manager.openConnectionCount == 0)
        let request = Request(url: URL(string: "http://127.0.0.1:\(server.port)/")!)
        for _ in 0..<2 {
            let response = try await manager.data(for: request, responseSerializer: HTTPResponseSerializer())
            #expect(response.statusCode == 200)
        }
        // Both requests went over one kept-alive connection, idle now and still open.
        #expect(manager.openConnectionCount == 1)
        await manager.shutdown()
        #expect(manager.openConnectionCount == 0)
        await loop.shutdown()
        await workers.shutdown()
    }
}
