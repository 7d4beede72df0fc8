import Foundation
@testable import HTTPBinOpenAPIClient
import HTTPTypes
import OpenAPIRuntime
import Testing
@_spi(Testing) @testable import UVNetworking
import UVNetworkingOpenAPI

extension EndToEnd {
    /// UVNetworkingTransport's streaming and connection reuse, against scripted servers that
    /// answer the generated httpbin client's paths with what httpbin cannot send (bodies over
    /// 100 KiB, keep-alive).
    @Suite(.tags(.loopback)) struct OpenAPITransportStreaming {
        /// 4 MiB, byte i being i % 251 (as nginx's large files in the tests).
        static let largeSize = 4 << 20

        @Test func aLargeResponseStreamsWithoutBeingBufferedWhole() async throws {
            let server = try ScriptedServer { connection in
                _ = try connection.readRequest()
                try connection.write("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: \(Self.largeSize)\r\n\r\n")
                let body = NginxServer.largeBody(count: Self.largeSize)
                var offset = 0
                while offset < body.count {
                    let end = min(offset + (64 << 10), body.count)
                    try connection.write(Array(body[offset..<end]))
                    offset = end
                }
            }
            defer { server.stop() }
            // Task.sleep's first use opens the runtime's timer descriptor: before the baseline.
            try await Task.sleep(for: .milliseconds(1))
            let harness = ClientHarness()
            let client = Client(serverURL: URL(string: "http://127.0.0.1:\(server.port)")!,
                                transport: UVNetworkingTransport(manager: harness.manager))
            let body = try await client.streamBytes(path: .init(n: Self.largeSize)).ok.body.binary
            #expect(body.length == .known(Int64(Self.largeSize)))
            var iterator = body.makeAsyncIterator()
            var received = try #require(try await iterator.next()).count
            let task = try #require(harness.manager.tasks.first)
            // The consumer holds still: the loop would read the whole body meanwhile if nothing
            // held it back (the server has it all written into the socket long before).
            try await Task.sleep(for: .milliseconds(300))
            let whileHeld = task.countOfBytesReceived
            #expect(whileHeld < 1 << 20, "\(whileHeld) bytes read while the consumer held still")
            var mismatches = 0
            while let chunk = try await iterator.next() {
                for (index, byte) in chunk.enumerated() where byte != UInt8((received + index) % 251) { mismatches += 1 }
                received += chunk.count
            }
            #expect(received == Self.largeSize)
            #expect(mismatches == 0)
            harness.finish()
        }

        @Test func leavingTheBodyEarlyCancelsTheRequest() async throws {
            let server = try ScriptedServer { connection in
                _ = try connection.readRequest()
                try connection.write("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: \(Self.largeSize)\r\n\r\n")
                let piece = [UInt8](repeating: 1, count: 64 << 10)
                for _ in 0..<(Self.largeSize / piece.count) { try connection.write(piece) }
            }
            defer { server.stop() }
            let harness = ClientHarness()
            let client = Client(serverURL: URL(string: "http://127.0.0.1:\(server.port)")!,
                                transport: UVNetworkingTransport(manager: harness.manager))
            let body = try await client.streamBytes(path: .init(n: Self.largeSize)).ok.body.binary
            let task = try #require(harness.manager.tasks.first)
            for try await chunk in body {
                #expect(!chunk.isEmpty)
                break
            }
            #expect(waitUntil(timeout: 5) { task.state == .completed })
            #expect((task.error as? NetworkingError)?.code == .cancelled)
            #expect(waitUntil(timeout: 5) { harness.manager.openConnectionCount == 0 })
            harness.finish()
        }

        @Test func responsesWithoutABodyLeaveTheConnectionToTheNext() async throws {
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    request.target == "/status/204" ? "HTTP/1.1 204 No Content\r\n\r\n" : ScriptedResponse.text("", status: 404, reason: "Not Found")
                }
            }
            defer { server.stop() }
            let harness = ClientHarness()
            let client = Client(serverURL: URL(string: "http://127.0.0.1:\(server.port)")!,
                                transport: UVNetworkingTransport(manager: harness.manager))
            for _ in 0..<3 {
                guard case .default(let code, _) = try await client.getStatus(path: .init(code: 204)) else {
                    Issue.record("204 is not the default case")
                    return
                }
                #expect(code == 204)
            }
            _ = try await client.getStatus(path: .init(code: 404)).notFound
            #expect(server.acceptedCount == 1)
            harness.finish()
        }
    }
}
