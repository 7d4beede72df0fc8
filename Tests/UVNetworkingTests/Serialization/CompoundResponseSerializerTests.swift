import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import HTTPTypes
import Testing
@testable import UVNetworking

@Suite(.tags(.unit)) struct CompoundResponseSerializerTests {
    /// Always fails, without an object.
    struct Failing: ResponseSerializer {
        func responseObject(for response: HTTPResponse, data: Data?) throws -> Any? {
            throw NetworkingError(.serializationFailed, "never")
        }
    }

    let compound = CompoundResponseSerializer([JSONResponseSerializer(), XMLParserResponseSerializer()])

    @Test func firstSerializerThatProducesAnObjectWins() throws {
        let json = try compound.responseObject(for: makeResponse(200, contentType: "application/json"), data: Data(utf8: "[1]"))
        #expect((json as? [Any])?.first as? Int == 1)
        let xml = try compound.responseObject(for: makeResponse(200, contentType: "text/xml"), data: Data(utf8: "<a/>"))
        #expect(xml is XMLParser)
    }

    @Test func noObjectFallsBackToTheBodyAsAFNetworkingDoes() throws {
        let body = Data(utf8: "plain")
        #expect(try compound.responseObject(for: makeResponse(200, contentType: "text/plain"), data: body) as? Data == body)
        // JSON that does not parse is skipped too; its error is dropped.
        let broken = Data(utf8: "{broken")
        #expect(try compound.responseObject(for: makeResponse(200, contentType: "application/json"), data: broken) as? Data == broken)
        #expect(try CompoundResponseSerializer([Failing()]).responseObject(for: makeResponse(200), data: body) as? Data == body)
    }

    @Test func fallbackValidatesWithTheCompoundsRules() throws {
        let body = Data(utf8: "plain")
        let error = try #require(throws: NetworkingError.self) {
            try compound.responseObject(for: makeResponse(500, contentType: "text/plain"), data: body)
        }
        #expect(error.code == .unacceptableStatusCode)
        #expect(error.responseObject as? Data == body)

        var strict = compound
        strict.acceptableContentTypes = ["application/json"]
        #expect(throws: NetworkingError.self) {
            try strict.responseObject(for: makeResponse(200, contentType: "text/plain"), data: body)
        }
    }

    @Test func objectWithAnErrorWinsWithItsError() throws {
        let error = try #require(throws: NetworkingError.self) {
            try compound.responseObject(for: makeResponse(404, contentType: "application/json"), data: Data(utf8: #"{"e":1}"#))
        }
        #expect(error.code == .unacceptableStatusCode)
        #expect((error.responseObject as? [String: Any])?["e"] as? Int == 1)
    }

    @Test func emptyListIsTheFallbackAlone() throws {
        let body = Data(utf8: "x")
        #expect(try CompoundResponseSerializer([]).responseObject(for: makeResponse(200), data: body) as? Data == body)
    }
}
