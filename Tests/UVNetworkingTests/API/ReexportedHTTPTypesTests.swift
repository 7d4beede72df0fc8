// Only UVNetworking (and the test framework): HTTPTypes' names must come with it.
import Testing
import UVNetworking

/// HTTPTypes is re-exported: this file imports UVNetworking alone and names its types.
@Suite(.tags(.unit)) struct ReexportedHTTPTypesTests {
    @Test func httpTypesAreUsableWithUVNetworkingAlone() {
        let method: HTTPRequest.Method = .patch
        var fields = HTTPFields()
        fields[.accept] = "application/json"
        fields.append(HTTPField(name: HTTPField.Name("X-Trace")!, value: "1"))
        let response = HTTPResponse(status: .notFound, headerFields: fields)
        #expect(method.rawValue == "PATCH")
        #expect(response.status.code == 404)
        #expect(response.headerFields[.accept] == "application/json")
        #expect(response.headerFields[HTTPField.Name("x-trace")!] == "1")
    }
}
