import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing
import UVNetworking
@testable import UVNetworkingOpenAPI

/// How UVNetworkingTransport turns OpenAPI requests and responses into the library's, without
/// a server.
@Suite struct UVNetworkingTransportRequestTests {
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
