import Foundation
import HTTPTypes
import Testing
@testable import UVNetworking

@Suite(.tags(.unit)) struct JSONResponseSerializerTests {
    let ok = makeResponse(200, contentType: "application/json")

    @Test func defaultsAreAFNetworkings() {
        let serializer = JSONResponseSerializer()
        #expect(serializer.acceptableContentTypes == ["application/json", "text/json", "text/javascript"])
        #expect(serializer.acceptableStatusCodes == IndexSet(integersIn: 200..<300))
        #expect(serializer.readingOptions == [])
        #expect(serializer.removesKeysWithNullValues == false)
    }

    @Test(arguments: ["application/json", "text/json", "text/javascript; charset=utf-8"])
    func parsesEachJSONType(contentType: String) throws {
        let object = try JSONResponseSerializer().responseObject(for: makeResponse(200, contentType: contentType),
                                                                 data: Data(utf8: #"{"a":1}"#))
        #expect((object as? [String: Any])?["a"] as? Int == 1)
    }

    @Test func keepsNullsByDefault() throws {
        let object = try JSONResponseSerializer().responseObject(for: ok, data: Data(utf8: #"{"a":null,"b":[null]}"#))
        let dictionary = try #require(object as? [String: Any])
        #expect(dictionary["a"] is NSNull)
        #expect((dictionary["b"] as? [Any])?.count == 1)
    }

    @Test func removesNullsRecursivelyThroughDictionariesAndArrays() throws {
        var serializer = JSONResponseSerializer()
        serializer.removesKeysWithNullValues = true
        let json = #"{"key":"value","null":null,"nested":{"inner":null,"kept":1},"array":[{"x":null,"y":2},null,3,[null,"z"]]}"#
        let object = try serializer.responseObject(for: ok, data: Data(utf8: json))
        let dictionary = try #require(object as? [String: Any])
        #expect(dictionary.keys.sorted() == ["array", "key", "nested"])
        #expect(dictionary["key"] as? String == "value")
        let nested = try #require(dictionary["nested"] as? [String: Any])
        #expect(nested.keys.sorted() == ["kept"])
        let array = try #require(dictionary["array"] as? [Any])
        #expect(array.count == 3)
        #expect((array[0] as? [String: Any])?.keys.sorted() == ["y"])
        #expect(array[1] as? Int == 3)
        #expect((array[2] as? [Any])?.count == 1)
        #expect((array[2] as? [Any])?.first as? String == "z")
    }

    @Test func removesNullElementsFromATopLevelArray() throws {
        var serializer = JSONResponseSerializer()
        serializer.removesKeysWithNullValues = true
        let object = try serializer.responseObject(for: ok, data: Data(utf8: "[null,1,null]"))
        #expect((object as? [Any])?.compactMap { $0 as? Int } == [1])
        #expect((object as? [Any])?.count == 1)
    }

    @Test(arguments: [Data(), Data(utf8: " ")])
    func emptyBodyOrOneSpaceIsNilWithoutError(body: Data) throws {
        #expect(try JSONResponseSerializer().responseObject(for: ok, data: body) == nil)
        #expect(try JSONResponseSerializer().responseObject(for: ok, data: nil) == nil)
    }

    @Test func invalidJSONIsSerializationFailedWithTheBodyReachable() throws {
        let body = Data(utf8: "{not json")
        let error = try #require(throws: NetworkingError.self) {
            try JSONResponseSerializer().responseObject(for: ok, data: body)
        }
        #expect(error.code == .serializationFailed)
        #expect(error.kind == .serialization)
        #expect(error.responseData == body)
        #expect(error.response == ok)
        #expect(error.responseObject == nil)
        // No validation failure: the parser's own error is the underlying one.
        #expect((error.underlyingError as? NSError)?.domain == NSCocoaErrorDomain)
    }

    @Test func clientErrorWithJSONBodyDeliversBothObjectAndError() throws {
        let response = makeResponse(422, reason: "Unprocessable Entity", contentType: "application/json")
        let error = try #require(throws: NetworkingError.self) {
            try JSONResponseSerializer().responseObject(for: response, data: Data(utf8: #"{"message":"bad"}"#))
        }
        #expect(error.code == .unacceptableStatusCode)
        #expect(error.detail == "Request failed: unprocessable entity (422)")
        #expect((error.responseObject as? [String: Any])?["message"] as? String == "bad")
    }

    @Test func invalidJSONOnAClientErrorWrapsTheStatusError() throws {
        let response = makeResponse(400, contentType: "application/json")
        let error = try #require(throws: NetworkingError.self) {
            try JSONResponseSerializer().responseObject(for: response, data: Data(utf8: "<html>"))
        }
        #expect(error.code == .serializationFailed)
        #expect((error.underlyingError as? NetworkingError)?.code == .unacceptableStatusCode)
        #expect(error.responseData == Data(utf8: "<html>"))
    }

    @Test func rejectedContentTypeIsNotParsed() throws {
        let error = try #require(throws: NetworkingError.self) {
            try JSONResponseSerializer().responseObject(for: makeResponse(200, contentType: "text/html"), data: Data(utf8: "{}"))
        }
        #expect(error.code == .unacceptableContentType)
        #expect(error.responseObject == nil)
    }

    @Test func rejectedStatusAndContentTypeIsNotParsed() throws {
        let error = try #require(throws: NetworkingError.self) {
            try JSONResponseSerializer().responseObject(for: makeResponse(500, contentType: "text/html"), data: Data(utf8: "{}"))
        }
        #expect(error.code == .unacceptableStatusCode)
        #expect((error.underlyingError as? NetworkingError)?.code == .unacceptableContentType)
        #expect(error.responseObject == nil)
    }

    @Test func emptyBodyOnAClientErrorIsTheStatusErrorWithoutObject() throws {
        let error = try #require(throws: NetworkingError.self) {
            try JSONResponseSerializer().responseObject(for: makeResponse(404), data: Data())
        }
        #expect(error.code == .unacceptableStatusCode)
        #expect(error.responseObject == nil)
    }

    @Test func readingOptionsAreUsed() throws {
        var serializer = JSONResponseSerializer()
        #expect(throws: NetworkingError.self) { try serializer.responseObject(for: ok, data: Data(utf8: "\"fragment\"")) }
        serializer.readingOptions = .fragmentsAllowed
        #expect(try serializer.responseObject(for: ok, data: Data(utf8: "\"fragment\"")) as? String == "fragment")
    }

    @Test func validationPropertiesForwardToValidation() {
        var serializer = JSONResponseSerializer()
        serializer.acceptableContentTypes?.insert("text/plain")
        serializer.acceptableStatusCodes.insert(404)
        #expect(serializer.validation.acceptableContentTypes?.contains("text/plain") == true)
        #expect(serializer.validation.acceptableStatusCodes.contains(404))
    }
}
