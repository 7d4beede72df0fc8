import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing
import UVNetworking
@testable import UVNetworkingOpenAPI

/// How UVNetworkingTransport turns OpenAPI requests and responses into the library's, without
/// a server.
@Suite(.tags(.loopback)) struct UVNetworkingTransportRequestTests {
    private func url(_ path: String, _ base: String) throws -> String {
        try UVNetworkingTransport.url(for: HTTPRequest(method: .get, scheme: nil, authority: nil, path: path),
                                      baseURL: URL(string: base)!).absoluteString
    }

    @Test func thePathIsAppendedToTheBaseURLsPath() throws {
        #expect(try url("/get?a=1", "http://127.0.0.1:8080") == "http://127.0.0.1:8080/get?a=1")
        #expect(try url("/get", "http://127.0.0.1:8080/") == "http://127.0.0.1:8080/get")
        #expect(try url("/pets/a%20b", "https://example.com/api/v1") == "https://example.com/api/v1/pets/a%20b")
        #expect(try url("/pets", "https://example.com/api/v1/") == "https://example.com/api/v1/pets")
        #expect(try url("pets", "https://example.com/api") == "https://example.com/api/pets")
        #expect(try url("", "https://example.com/api") == "https://example.com/api")
    }

    /// A base URL with a query of its own (an API key in the server URL): the path goes before
    /// it, and the request's query is added to it, not appended after "?".
    @Test func aBaseURLsQueryStaysAQuery() throws {
        #expect(try url("/pets", "https://example.com/api?key=k") == "https://example.com/api/pets?key=k")
        #expect(try url("/pets?limit=2", "https://example.com/api/?key=k") == "https://example.com/api/pets?key=k&limit=2")
        #expect(try url("/pets", "https://example.com?key=k") == "https://example.com/pets?key=k")
        #expect(try url("/pets", "https://example.com/api#top") == "https://example.com/api/pets")
        #expect(try url("/pets", "https://u:p@example.com/api") == "https://u:p@example.com/api/pets")
    }

    @Test func theFieldsMethodAndTimeoutsAreCarriedOver() async throws {
        var fields = HTTPFields()
        fields[.accept] = "application/json"
        fields[HTTPField.Name("X-Trace")!] = "1"
        let transport = UVNetworkingTransport(configuration: .init(timeoutInterval: 5, totalTimeoutInterval: 9,
                                                                   httpShouldHandleCookies: false))
        let request = try await transport.makeRequest(HTTPRequest(method: .delete, scheme: nil, authority: nil, path: "/x"),
                                                      body: nil, baseURL: URL(string: "http://127.0.0.1:1")!)
        #expect(request.method == .delete)
        #expect(request.url.absoluteString == "http://127.0.0.1:1/x")
        #expect(request.timeoutInterval == 5)
        #expect(request.totalTimeoutInterval == 9)
        #expect(!request.httpShouldHandleCookies)
        let withFields = try await transport.makeRequest(
            HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/x", headerFields: fields),
            body: nil, baseURL: URL(string: "http://127.0.0.1:1")!)
        #expect(withFields.headerFields.map { "\($0.name): \($0.value)" } == ["Accept: application/json", "X-Trace: 1"])
    }

    @Test func theBodyLengthIsTheContentLengthUnlessTheBodyWasDecoded() {
        var response = HTTPResponse(status: .ok)
        #expect(ResponseBody.length(of: response) == .unknown)
        response.headerFields[.contentLength] = "1234"
        #expect(ResponseBody.length(of: response) == .known(1234))
        response.headerFields[.contentEncoding] = "identity"
        #expect(ResponseBody.length(of: response) == .known(1234))
        response.headerFields[.contentEncoding] = "gzip"
        #expect(ResponseBody.length(of: response) == .unknown)
        response.headerFields[.contentEncoding] = nil
        response.headerFields[.contentLength] = "-1"
        #expect(ResponseBody.length(of: response) == .unknown)
    }
}

/// A sequence of one element, [1, 2, 3].
private func threeBytes() -> AsyncStream<[UInt8]> {
    AsyncStream { continuation in
        continuation.yield([1, 2, 3])
        continuation.finish()
    }
}

/// Which bodies are gathered and which stream.
@Suite(.tags(.loopback)) struct UVNetworkingTransportBodyTests {
    private let transport = UVNetworkingTransport()
    private let put = HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/put")
    private let base = URL(string: "http://127.0.0.1:1")!

    @Test func aSmallBodyOfKnownLengthGoesWithTheHead() async throws {
        let request = try await transport.makeRequest(put, body: HTTPBody(#"{"name": "x"}"#), baseURL: base)
        #expect(request.body == Data(#"{"name": "x"}"#.utf8))
        #expect(request.bodyStream == nil)
    }

    @Test func largeSinglePassAndUnknownLengthBodiesStream() async throws {
        let large = try await transport.makeRequest(put, body: HTTPBody([UInt8](repeating: 7, count: 64 << 10 + 1)), baseURL: base)
        #expect(large.body == nil)
        #expect(large.bodyStream?.length == Int64(64 << 10 + 1))
        #expect(large.bodyStream?.isAsyncSequence == true)
        let single = try await transport.makeRequest(
            put, body: HTTPBody(threeBytes(), length: .known(3), iterationBehavior: .single), baseURL: base)
        #expect(single.bodyStream?.length == 3)
        let unknown = try await transport.makeRequest(
            put, body: HTTPBody(threeBytes(), length: .unknown, iterationBehavior: .multiple), baseURL: base)
        #expect(unknown.bodyStream != nil)
        #expect(unknown.bodyStream?.length == nil)
    }

    @Test func aGatheredBodyMustHaveItsDeclaredLength() async throws {
        await #expect { try await transport.makeRequest(put, body: HTTPBody([1, 2, 3], length: .known(5)), baseURL: base) } throws: {
            ($0 as? NetworkingError)?.code == .bodyStreamFailed
        }
        await #expect { try await transport.makeRequest(put, body: HTTPBody([1, 2, 3], length: .known(2)), baseURL: base) } throws: {
            ($0 as? NetworkingError)?.code == .bodyStreamFailed
        }
    }
}
