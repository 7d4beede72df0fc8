import Foundation
import Synchronization
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// A request replayed on a fresh connection, after the server closed the reused one as the
    /// request arrived, is a transaction of its own in the task's metrics: metrics count every
    /// request sent, as URLSession's list every transaction.
    @Suite(.tags(.loopback)) struct ReplayMetricsTests {
        @Test func theReplayIsATransactionOfItsOwn() async throws {
            let received = Atomic<Int>(0)
            let server = try ScriptedServer { connection in
                _ = try connection.readRequest()
                received.add(1, ordering: .relaxed)
                try connection.write(ScriptedResponse.text("answered"))
                guard (try? connection.readRequest()) != nil else { return }
                received.add(1, ordering: .relaxed)
                connection.close()
            }
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            let url = URL(string: "http://127.0.0.1:\(server.port)/")!
            let first = try await harness.manager.data(for: Request(url: url))
            #expect(first.metrics?.transactions.count == 1)
            let replayed = try await harness.manager.data(for: Request(url: url))
            let transactions = replayed.metrics?.transactions ?? []
            #expect(transactions.count == 2)
            #expect(transactions.map(\.isReusedConnection) == [true, false])
            #expect(transactions.first?.statusCode == nil && transactions.last?.statusCode == 200)
            #expect(received.load(ordering: .relaxed) == 3)
        }
    }
}
