import Foundation
import HTTPTypes
import Testing
@testable import UVNetworking

/// AFJSONRequestSerializer's behaviour.
@Suite(.tags(.unit)) struct JSONRequestSerializerTests {
    private func request(_ method: HTTPRequest.Method) -> Request {
        Request(url: URL(string: "http://example.com/p")!, method: method)
    }

    @Test func bodyMethodsGetAJSONBody() throws {
        let result = try JSONRequestSerializer().serialize(request(.post), parameters: ["key": "value"])
        #expect(result.body == Data(#"{"key":"value"}"#.utf8))
        #expect(result.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(result.url.absoluteString == "http://example.com/p")
        #expect(result.value(forHTTPHeaderField: "User-Agent") != nil)
    }

    @Test func topLevelArraysAreAllowed() throws {
        let result = try JSONRequestSerializer().serialize(request(.put), parameters: [1, 2, 3])
        #expect(result.body == Data("[1,2,3]".utf8))
    }

    @Test func writingOptionsAreUsed() throws {
        let serializer = JSONRequestSerializer()
        serializer.writingOptions = [.sortedKeys]
        let result = try serializer.serialize(request(.post), parameters: ["b": 1, "a": ["c": NSNull()]] as [String: Any])
        #expect(result.body == Data(#"{"a":{"c":null},"b":1}"#.utf8))
    }

    @Test func uriMethodsGetAQueryStringLikeTheSuperclass() throws {
        let result = try JSONRequestSerializer().serialize(request(.get), parameters: ["key": "value&"])
        #expect(result.url.absoluteString == "http://example.com/p?key=value%26")
        #expect(result.body == nil)
        #expect(result.value(forHTTPHeaderField: "Content-Type") == nil)
    }

    @Test func aContentTypeAlreadySetIsKept() throws {
        var original = request(.post)
        original.setValue("application/vnd.api+json", forHTTPHeaderField: "Content-Type")
        let result = try JSONRequestSerializer().serialize(original, parameters: ["a": 1])
        #expect(result.value(forHTTPHeaderField: "Content-Type") == "application/vnd.api+json")
        #expect(result.body == Data(#"{"a":1}"#.utf8))
    }

    @Test func nilParametersLeaveTheBodyAlone() throws {
        let result = try JSONRequestSerializer().serialize(request(.post), parameters: nil)
        #expect(result.body == nil)
        #expect(result.value(forHTTPHeaderField: "Content-Type") == nil)
    }

    @Test func invalidJSONFails() throws {
        let error = try #require(throws: NetworkingError.self) {
            try JSONRequestSerializer().serialize(request(.post), parameters: ["date": Date()])
        }
        #expect(error.code == .requestSerializationFailed)
        #expect(error.detail == "The `parameters` argument is not valid JSON.")
        #expect(error.failingURL?.absoluteString == "http://example.com/p")
    }

    @Test func propertiesAndDefaultHeadersApplyToJSONRequests() throws {
        let serializer = JSONRequestSerializer()
        serializer.timeoutInterval = 3
        serializer.setAuthorizationHeaderField(username: "user", password: "password")
        let result = try serializer.request(method: .post, urlString: "http://example.com/p", parameters: ["a": true])
        #expect(result.timeoutInterval == 3)
        #expect(result.value(forHTTPHeaderField: "Authorization") == "Basic dXNlcjpwYXNzd29yZA==")
        #expect(result.body == Data(#"{"a":true}"#.utf8))
    }
}
