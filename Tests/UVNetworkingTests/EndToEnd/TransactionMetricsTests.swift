import Foundation
import Synchronization
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// TransactionMetrics: one record per exchange, redirects included, with phases in order.
    @Suite(.tags(.nginx)) struct TransactionMetricsTests {
        /// Every date of the record is in the order the phases happen.
        private func expectOrdered(_ transaction: TransactionMetrics, sourceLocation: SourceLocation = #_sourceLocation) {
            let dates = [transaction.fetchStartDate, transaction.domainLookupStartDate, transaction.domainLookupEndDate,
                         transaction.connectStartDate, transaction.connectEndDate, transaction.secureConnectionStartDate,
                         transaction.secureConnectionEndDate, transaction.requestStartDate, transaction.requestEndDate,
                         transaction.responseStartDate, transaction.responseEndDate].compactMap { $0 }
            #expect(dates == dates.sorted(), "\(transaction)", sourceLocation: sourceLocation)
        }

        @Test(arguments: Wire.allCases) func redirectsGiveOneTransactionEach(_ wire: Wire) async throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            defer { harness.finish() }
            let response = try await harness.manager.data(for: Request(url: URL(string: base + "/redirect/2")!))
            let transactions = try #require(response.metrics?.transactions)
            #expect(transactions.map(\.statusCode) == [302, 302, 200])
            #expect(transactions.map(\.url.path) == ["/redirect/2", "/relative-redirect/1", "/get"])
            #expect(transactions.allSatisfy { $0.networkProtocolName == wire.rawValue })
            for transaction in transactions {
                expectOrdered(transaction)
                #expect(transaction.remoteAddress == "127.0.0.1")
                #expect(transaction.remotePort == URLComponents(string: base)?.port)
                #expect(transaction.requestBytesSent > 0)
                #expect(transaction.responseBytesReceived > 0)
                #expect(transaction.responseEndDate != nil)
            }
            switch wire {
            case .http1_1:
                // httpbin closes after every response, so each exchange opened a connection.
                #expect(transactions.allSatisfy { !$0.isReusedConnection && $0.connectEndDate != nil })
                #expect(transactions.allSatisfy { $0.secureConnectionStartDate == nil })
            case .h2:
                // One TLS connection carries the three streams: only the first paid for it.
                #expect(transactions.map(\.isReusedConnection) == [false, true, true])
                #expect(transactions[0].secureConnectionEndDate != nil)
                #expect(transactions.dropFirst().allSatisfy { $0.connectStartDate == nil && $0.secureConnectionStartDate == nil })
            }
        }

        @Test func tlsPhaseOnANewConnectionOnlyAndBytesOnTheWire() async throws {
            let nginx = try TestServers.nginxTLS()
            let harness = tlsHarness()
            defer { harness.finish() }
            let request = Request(url: URL(string: nginx.url(.valid))!)
            let first = try #require(try await harness.manager.data(for: request).metrics?.transactions.first)
            let second = try #require(try await harness.manager.data(for: request).metrics?.transactions.first)
            expectOrdered(first)
            expectOrdered(second)
            #expect(first.secureConnectionStartDate != nil && first.secureConnectionEndDate != nil)
            #expect(!first.isReusedConnection)
            #expect(second.isReusedConnection)
            #expect(second.connectStartDate == nil && second.secureConnectionStartDate == nil)
            // The address is the connection's, formatted once for both exchanges on it.
            #expect(first.remoteAddress == "127.0.0.1" && second.remoteAddress == "127.0.0.1")
            #expect(second.remotePort == first.remotePort)
            // Head and body: at least the 10-byte body and a status line.
            #expect(second.responseBytesReceived > Int64(NginxTLSServer.helloBody.utf8.count) + 15)
        }

        @Test func failedExchangeIsRecordedToo() async throws {
            let server = try ScriptedServer { connection in
                _ = try connection.readRequest()
                try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort")
                connection.close()
            }
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            let metrics = Mutex<TaskMetrics?>(nil)
            harness.manager.taskDidFinishCollectingMetrics = { _, collected in metrics.withLock { $0 = collected } }
            #expect(harness.fetch("http://127.0.0.1:\(server.port)/").code == .truncatedResponse)
            #expect(waitUntil(timeout: 5) { metrics.withLock { $0 } != nil })
            let transaction = try #require(metrics.withLock { $0 }?.transactions.first)
            #expect(transaction.statusCode == 200)
            #expect(transaction.responseBytesReceived > 0)
        }
    }
}
