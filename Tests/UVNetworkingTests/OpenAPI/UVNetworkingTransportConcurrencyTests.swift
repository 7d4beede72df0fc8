import Foundation
import HTTPTypes
import LoopbackHTTPServer
import OpenAPIRuntime
import Testing
@_spi(Testing) @testable import UVNetworking
import UVNetworkingOpenAPI

extension EndToEnd {
    /// Many sends at once on one transport: each completes, over a bounded number of connections,
    /// whether its body is read or dropped unread.
    @Suite(.tags(.loopback)) struct OpenAPITransportConcurrency {
        static let count = 300

        private func sendAll(readingBodies: Bool, timeout: TimeInterval = 60) async throws {
            let server = LoopbackHTTPServer()
            let port = try server.start()
            defer { server.stop() }
            let harness = ClientHarness()
            let transport = UVNetworkingTransport(manager: harness.manager, configuration: .init(timeoutInterval: timeout))
            let base = URL(string: "http://127.0.0.1:\(port)")!
            // Failures are counted, not thrown, so that the harness is always finished.
            let statuses = await withTaskGroup(of: Int.self) { group in
                for index in 0..<Self.count {
                    group.addTask {
                        do {
                            let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/items/\(index)")
                            let (response, body) = try await transport.send(request, body: nil, baseURL: base, operationID: "item")
                            if readingBodies, let body {
                                let bytes = try await [UInt8](collecting: body, upTo: 1 << 20)
                                #expect(!bytes.isEmpty)
                            }
                            return response.status.code
                        } catch {
                            return -1
                        }
                    }
                }
                return await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.count == Self.count)
            #expect(statuses.filter { $0 != 200 }.count == 0, "requests that failed")
            #expect(harness.manager.openConnectionCount <= SessionConfiguration().maximumConnectionsPerHost)
            #expect(waitUntil(timeout: 10) { harness.manager.tasks.isEmpty })
            harness.finish()
        }

        @Test func hundredsOfSendsAtOnceAllComplete() async throws {
            try await sendAll(readingBodies: true)
        }

        /// Dropped streams whose last bytes made reading pause left their connections, back in
        /// the pool, not reading (StreamPausedAtItsEndTests): the requests sent on them next
        /// waited until their timeout.
        @Test(arguments: 0..<4) func hundredsOfResponsesDroppedUnreadAllComplete(round: Int) async throws {
            try await sendAll(readingBodies: false, timeout: 10)
        }
    }
}
