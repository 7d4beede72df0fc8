import Foundation
@testable import HTTPBinOpenAPIClient
import HTTPTypes
import OpenAPIRuntime
import Synchronization
import Testing
@testable import UVNetworking
import UVNetworkingOpenAPI

/// A `BodyEcho` as httpbin sends it, for scripted servers answering `PUT /put`.
private func bodyEcho(data: String) -> String {
    let json = #"{"headers": {}, "url": "http://127.0.0.1/put", "data": "\#(data)"}"#
    return ScriptedResponse.text(json, headers: [("Content-Type", "application/json")])
}

struct BodyFailure: Error, Equatable {}

extension EndToEnd {
    /// Request bodies through UVNetworkingTransport: streamed from their HTTPBody as the
    /// connection takes them.
    @Suite(.tags(.nginx)) struct OpenAPITransportRequestBodies {
        @Test func aLargeBodyStreamsToHTTPBin() async throws {
            let httpbin = try TestServers.httpbin()
            let harness = ClientHarness()
            let client = Client(serverURL: URL(string: httpbin.baseURL)!,
                                transport: UVNetworkingTransport(manager: harness.manager))
            let line = Array("The quick brown fox jumps over the lazy dog 0123456789\n".utf8)
            let count = 20_000  // 1.1 MB in 20,000 elements
            let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
            let producer = Task {
                for _ in 0..<count { continuation.yield(line) }
                continuation.finish()
            }
            let body = HTTPBody(stream, length: .known(Int64(line.count * count)), iterationBehavior: .single)
            let echo = try await client.putBytes(body: .binary(body)).ok.body.json
            await producer.value
            #expect(echo.data.utf8.count == line.count * count)
            #expect(echo.data.hasPrefix(String(decoding: line, as: UTF8.self)))
            #expect(echo.headers.additionalProperties["Content-Length"] == String(line.count * count))
            harness.finish()
        }

        /// The server has the body's first bytes before the rest exists: nothing gathers the
        /// body before sending it.
        @Test func theBodyIsSentAsItIsProduced() async throws {
            let first = [UInt8](repeating: UInt8(ascii: "a"), count: 64 << 10)
            let rest = [UInt8](repeating: UInt8(ascii: "b"), count: 64 << 10)
            let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
            let server = try ScriptedServer { connection in
                let request = try connection.readRequestHead()
                guard request.header("Content-Length") == String(first.count + rest.count) else {
                    throw LoopbackSocketError.malformed("Content-Length \(request.header("Content-Length") ?? "none")")
                }
                let head = try connection.readBytes(first.count)
                // Only now does the rest of the body exist.
                continuation.yield(rest)
                continuation.finish()
                let tail = try connection.readBytes(rest.count)
                try connection.write(bodyEcho(data: head == first && tail == rest ? "as produced" : "mixed up"))
            }
            defer { server.stop() }
            // A client that waited for the whole body before sending would wait forever: end the
            // body short after a while, so that such a client fails rather than hang.
            try await Task.sleep(for: .milliseconds(1))  // the runtime's timer descriptor, before the baseline
            let watchdog = Task {
                try await Task.sleep(for: .seconds(10))
                continuation.finish()
            }
            defer { watchdog.cancel() }
            let harness = ClientHarness()
            let client = Client(serverURL: URL(string: "http://127.0.0.1:\(server.port)")!,
                                transport: UVNetworkingTransport(manager: harness.manager))
            continuation.yield(first)
            let body = HTTPBody(stream, length: .known(Int64(first.count + rest.count)), iterationBehavior: .single)
            let echo = try await client.putBytes(body: .binary(body)).ok.body.json
            #expect(echo.data == "as produced")
            harness.finish()
        }

        @Test func aBodyOfUnknownLengthIsSentChunked() async throws {
            let server = try ScriptedServer { connection in
                let request = try connection.readRequest()
                let framing = request.header("Transfer-Encoding") ?? "Content-Length \(request.header("Content-Length") ?? "none")"
                try connection.write(bodyEcho(data: "\(framing) \(request.bodyText)"))
            }
            defer { server.stop() }
            let harness = ClientHarness()
            let client = Client(serverURL: URL(string: "http://127.0.0.1:\(server.port)")!,
                                transport: UVNetworkingTransport(manager: harness.manager))
            let (stream, continuation) = AsyncStream<String>.makeStream()
            continuation.yield("one ")
            continuation.yield("two")
            continuation.finish()
            let echo = try await client.putBytes(body: .binary(HTTPBody(stream, length: .unknown))).ok.body.json
            #expect(echo.data == "chunked one two")
            harness.finish()
        }

        /// httpbin's development server refuses chunked bodies with 501, the documented case.
        @Test func httpbinRefusesAChunkedBodyWithItsDocumentedStatus() async throws {
            let httpbin = try TestServers.httpbin()
            let harness = ClientHarness()
            let client = Client(serverURL: URL(string: httpbin.baseURL)!,
                                transport: UVNetworkingTransport(manager: harness.manager))
            let (stream, continuation) = AsyncStream<String>.makeStream()
            continuation.yield("chunked")
            continuation.finish()
            _ = try await client.putBytes(body: .binary(HTTPBody(stream, length: .unknown))).notImplemented
            harness.finish()
        }

        /// A 307 sends the body again: an HTTPBody that can be iterated again is, a single-pass
        /// one fails the call rather than send a partial or empty body.
        @Test func aRedirectResendsAReplayableBodyOnly() async throws {
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    if request.target == "/put" {
                        return "HTTP/1.1 307 Temporary Redirect\r\nLocation: /put?again=1\r\nContent-Length: 0\r\n\r\n"
                    }
                    return bodyEcho(data: "\(request.target) \(request.body.count)")
                }
            }
            defer { server.stop() }
            let harness = ClientHarness()
            let client = Client(serverURL: URL(string: "http://127.0.0.1:\(server.port)")!,
                                transport: UVNetworkingTransport(manager: harness.manager))
            let size = 100 << 10  // past what is gathered: it streams
            let replayable = HTTPBody([UInt8](repeating: 5, count: size))
            #expect(try await client.putBytes(body: .binary(replayable)).ok.body.json.data == "/put?again=1 \(size)")
            let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
            continuation.yield([UInt8](repeating: 5, count: size))
            continuation.finish()
            do {
                _ = try await client.putBytes(body: .binary(HTTPBody(stream, length: .known(Int64(size)), iterationBehavior: .single)))
                Issue.record("a single-pass body was sent twice")
            } catch let error as ClientError {
                #expect((error.underlyingError as? NetworkingError)?.code == .bodyStreamFailed)
            }
            harness.finish()
        }

        @Test func aBodyThatThrowsFailsTheCallWithBodyStreamFailed() async throws {
            let server = try ScriptedServer { connection in
                _ = try? connection.readRequest()
            }
            defer { server.stop() }
            let harness = ClientHarness()
            let client = Client(serverURL: URL(string: "http://127.0.0.1:\(server.port)")!,
                                transport: UVNetworkingTransport(manager: harness.manager))
            let stream = AsyncThrowingStream<HTTPBody.ByteChunk, any Error> { continuation in
                continuation.yield(ArraySlice(repeating: 1, count: 100 << 10))
                continuation.finish(throwing: BodyFailure())
            }
            do {
                _ = try await client.putBytes(body: .binary(HTTPBody(stream, length: .known(1 << 20))))
                Issue.record("a failed body was sent")
            } catch let error as ClientError {
                let networking = error.underlyingError as? NetworkingError
                #expect(networking?.code == .bodyStreamFailed)
                #expect(networking?.underlyingError is BodyFailure)
            }
            harness.finish()
        }
    }
}
