import Foundation
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// Timeouts, cancellation and the per-host limit against httpbin's slow endpoints, over each
    /// protocol. Over HTTP/2 a timed-out or cancelled task ends its stream alone (RST_STREAM): the
    /// connection goes on carrying the others. The per-host limit counts connections, so over
    /// HTTP/2 one connection still carries requests side by side.
    @Suite(.tags(.nginx)) struct WireTimeoutAndLimitTests {
        @Test(arguments: Wire.allCases) func aSlowHeadTimesOutAndTheOriginStaysUsable(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness { $0.responseHeadTimeout = 0.5 }
            defer { harness.finish() }
            #expect(harness.fetch(base + "/get").status == 200)
            let late = harness.fetch(base + "/delay/3")
            #expect(late.code == .responseHeadTimeout)
            let after = harness.fetch(base + "/get")
            #expect(after.status == 200)
            wire.expectSpoken(after)
        }

        @Test(arguments: Wire.allCases) func aBodyThatPausesHitsTheIdleTimeout(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness { $0.idleTimeout = 0.5 }
            defer { harness.finish() }
            // Two bytes two seconds apart, the first at once.
            let outcome = harness.fetch(base + "/drip?duration=4&numbytes=2&delay=0&code=200")
            #expect(outcome.code == .idleTimeout)
            #expect(outcome.status == 200)
        }

        @Test(arguments: Wire.allCases) func cancellingMidBodyLeavesTheOthersRunning(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            defer { harness.finish() }
            #expect(harness.fetch(base + "/get").status == 200)
            let slow = harness.makeTask(ClientHarness.request(base + "/drip?duration=4&numbytes=4&delay=0"))
            let other = harness.makeTask(ClientHarness.request(base + "/drip?duration=1&numbytes=2&delay=0"))
            slow.task.resume()
            other.task.resume()
            #expect(waitUntil(timeout: 10) { slow.task.countOfBytesReceived > 0 })
            slow.task.cancel()
            #expect(slow.wait(10)?.code == .cancelled)
            let finished = other.wait(10)
            #expect(finished?.status == 200)
            #expect(finished?.data?.count == 2)
            if wire == .h2 {
                // RST_STREAM CANCEL ended only the cancelled stream: the connection stays.
                #expect(harness.manager.openConnectionCount == 1)
                let next = harness.fetch(base + "/get")
                #expect(next.status == 200)
                wire.expectSpoken(next)
            }
        }

        /// With one connection allowed per host, HTTP/1.1 sends the requests one after another,
        /// while HTTP/2 sends them all on that connection at once.
        @Test(arguments: Wire.allCases) func thePerHostLimitCountsConnections(_ wire: Wire) async throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness { $0.maximumConnectionsPerHost = 1 }
            defer { harness.finish() }
            // An exchange first, so that the origin's protocol is known before the burst.
            _ = try await harness.manager.data(for: Request(url: URL(string: base + "/get")!))
            let transactions = try await withThrowingTaskGroup(of: TransactionMetrics?.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        try await harness.manager.data(for: Request(url: URL(string: base + "/delay/1")!)).metrics?.transactions.last
                    }
                }
                var all: [TransactionMetrics] = []
                for try await transaction in group { all.append(try #require(transaction)) }
                return all.sorted { ($0.requestStartDate ?? .distantPast) < ($1.requestStartDate ?? .distantPast) }
            }
            #expect(transactions.count == 4)
            #expect(transactions.allSatisfy { $0.networkProtocolName == wire.rawValue })
            let firstEnd = try #require(transactions.first?.responseEndDate)
            let lastStart = try #require(transactions.last?.requestStartDate)
            switch wire {
            case .http1_1:
                #expect(lastStart >= firstEnd, "one connection: the last request waited for the first response")
            case .h2:
                #expect(lastStart < firstEnd, "one connection, four streams at once")
                #expect(harness.manager.openConnectionCount == 1)
            }
        }
    }
}
