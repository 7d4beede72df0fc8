import Foundation
@testable import HTTPBinOpenAPIClient
import HTTPTypes
import OpenAPIRuntime
import Testing
@_spi(Testing) @testable import UVNetworking
import UVNetworkingOpenAPI

/// A generated httpbin client (Tests/HTTPBinOpenAPIClient) over `UVNetworkingTransport` and a
/// harness's session, so every test also checks that nothing is left open.
private func makeClient(_ harness: ClientHarness, baseURL: String,
                        configuration: UVNetworkingTransport.Configuration = .init()) -> Client {
    Client(serverURL: URL(string: baseURL)!,
           transport: UVNetworkingTransport(manager: harness.manager, configuration: configuration))
}

/// Polls `condition` without blocking a thread of the concurrency pool (the calls under test
/// need those); whether it held within `timeout` seconds.
private func eventually(timeout: Double, _ condition: () -> Bool) async -> Bool {
    let deadline = monotonicSeconds() + timeout
    while monotonicSeconds() < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

/// Every chunk of `body`, in order.
private func chunks(of body: HTTPBody) async throws -> [HTTPBody.ByteChunk] {
    var result: [HTTPBody.ByteChunk] = []
    for try await chunk in body { result.append(chunk) }
    return result
}

extension EndToEnd {
    /// UVNetworkingTransport against the real httpbin, through a generated client.
    @Suite(.tags(.nginx)) struct OpenAPITransport {
        @Test(arguments: Wire.allCases) func getSendsTheQueryAndHeaderParameters(_ wire: Wire) async throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            let client = makeClient(harness, baseURL: base)
            let output = try await client.getEcho(query: .init(probe: "a b&c"), headers: .init(xProbe: "seen"))
            let echo = try output.ok.body.json
            #expect(echo.args.additionalProperties["probe"] == "a b&c")
            #expect(echo.headers.additionalProperties["X-Probe"] == "seen")
            #expect(echo.headers.additionalProperties["Accept"] == "application/json")
            #expect(echo.url.hasSuffix("/get?probe=a%20b%26c"))
            harness.finish()
        }

        @Test(arguments: Wire.allCases) func postRoundTripsAJSONBody(_ wire: Wire) async throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            let client = makeClient(harness, baseURL: base)
            let greeting = Components.Schemas.Greeting(name: "ünïcode", count: 3)
            let echo = try await client.postGreeting(body: .json(greeting)).ok.body.json
            #expect(echo.json == greeting)
            #expect(echo.headers.additionalProperties["Content-Type"] == "application/json; charset=utf-8")
            harness.finish()
        }

        @Test(arguments: Wire.allCases) func putSendsABinaryBody(_ wire: Wire) async throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            let client = makeClient(harness, baseURL: base)
            let text = String(repeating: "0123456789abcdef", count: 8 << 10)  // 128 KiB, past one write
            let echo = try await client.putBytes(body: .binary(HTTPBody(text))).ok.body.json
            #expect(echo.data == text)
            #expect(echo.headers.additionalProperties["Content-Length"] == String(text.utf8.count))
            #expect(echo.headers.additionalProperties["Content-Type"] == "application/octet-stream")
            harness.finish()
        }

        @Test func headersAreSent() async throws {
            let httpbin = try TestServers.httpbin()
            let harness = ClientHarness()
            let client = makeClient(harness, baseURL: httpbin.baseURL)
            let fields = try await client.getHeaders(headers: .init(xProbe: "probe-value")).ok.body.json.headers
            #expect(fields.additionalProperties["X-Probe"] == "probe-value")
            #expect(fields.additionalProperties["Host"] == "127.0.0.1:\(httpbin.port)")
            harness.finish()
        }

        @Test(arguments: Wire.allCases) func bytesHaveTheirContentLength(_ wire: Wire) async throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            let client = makeClient(harness, baseURL: base)
            let body = try await client.getBytes(path: .init(n: 4096), query: .init(seed: 7)).ok.body.binary
            #expect(body.length == .known(4096))
            #expect(body.iterationBehavior == IterationBehavior.single)
            let bytes = try await [UInt8](collecting: body, upTo: 1 << 20)
            #expect(bytes.count == 4096)
            harness.finish()
        }

        @Test(arguments: Wire.allCases) func streamedBytesArriveInChunks(_ wire: Wire) async throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            let client = makeClient(harness, baseURL: base)
            let body = try await client.streamBytes(path: .init(n: 100 << 10), query: .init(chunkSize: 1024, seed: 1))
                .ok.body.binary
            #expect(body.length == .unknown)  // chunked
            let parts = try await chunks(of: body)
            #expect(parts.reduce(0) { $0 + $1.count } == 100 << 10)
            #expect(parts.count > 1)
            // The same seed gives the same bytes.
            let again = try await client.streamBytes(path: .init(n: 100 << 10), query: .init(chunkSize: 1024, seed: 1))
                .ok.body.binary
            #expect(try await [UInt8](collecting: again, upTo: 1 << 20) == Array(parts.joined()))
            harness.finish()
        }

        @Test(arguments: Wire.allCases) func aDelayedResponseArrives(_ wire: Wire) async throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            let client = makeClient(harness, baseURL: base)
            let echo = try await client.getDelayed(path: .init(seconds: 0.2)).ok.body.json
            #expect(echo.url.hasSuffix("/delay/0.2"))
            harness.finish()
        }

        @Test(arguments: Wire.allCases) func statusCodesBecomeTheirDocumentedCases(_ wire: Wire) async throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            let client = makeClient(harness, baseURL: base)
            _ = try await client.getStatus(path: .init(code: 200)).ok
            _ = try await client.getStatus(path: .init(code: 404)).notFound
            _ = try await client.getStatus(path: .init(code: 500)).internalServerError
            guard case .default(let code, _) = try await client.getStatus(path: .init(code: 418)) else {
                Issue.record("418 is not the default case")
                return
            }
            #expect(code == 418)
            harness.finish()
        }

        @Test func aRefusedConnectionIsAClientErrorOverNetworkingError() async throws {
            let harness = ClientHarness()
            let port = try TestServers.freeLoopbackPort()
            let client = makeClient(harness, baseURL: "http://127.0.0.1:\(port)")
            do {
                _ = try await client.getEcho()
                Issue.record("a closed port answered")
            } catch let error as ClientError {
                #expect(error.operationID == "getEcho")
                #expect((error.underlyingError as? NetworkingError)?.code == .connectionRefused)
            }
            harness.finish()
        }

        @Test(arguments: Wire.allCases) func theConfiguredTimeoutApplies(_ wire: Wire) async throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            let client = makeClient(harness, baseURL: base, configuration: .init(timeoutInterval: 0.3))
            do {
                _ = try await client.getDelayed(path: .init(seconds: 3))
                Issue.record("the response came in spite of the timeout")
            } catch let error as ClientError {
                #expect((error.underlyingError as? NetworkingError)?.code == .requestTimeout)
            }
            harness.finish()
        }

        @Test(arguments: Wire.allCases) func cancellingTheCallingTaskCancelsTheRequest(_ wire: Wire) async throws {
            let base = try wire.httpbinBaseURL()
            try await Task.sleep(for: .milliseconds(1))  // the runtime's timer descriptor, before the baseline
            let harness = wire.harness()
            let client = makeClient(harness, baseURL: base)
            let call = Task { try await client.getDelayed(path: .init(seconds: 10)) }
            // Cancel once the request is out, waiting for its response, not before it starts.
            #expect(await eventually(timeout: 5) { !harness.manager.tasks.isEmpty })
            try await Task.sleep(for: .milliseconds(200))
            call.cancel()
            do {
                _ = try await call.value
                Issue.record("the cancelled call returned a response")
            } catch let error as ClientError {
                #expect((error.underlyingError as? NetworkingError)?.code == .cancelled)
            }
            #expect(await eventually(timeout: 5) { harness.manager.tasks.isEmpty })
            // HTTP/1.1 closes the connection under a cancelled response; HTTP/2 resets the stream
            // alone and keeps the connection.
            let kept = wire == .h2 ? 1 : 0
            #expect(await eventually(timeout: 5) { harness.manager.openConnectionCount == kept })
            harness.finish()
        }
    }
}
