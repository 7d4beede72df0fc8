import Foundation
import HTTPTypes
import Testing
@testable import UVNetworking

/// AFPropertyListRequestSerializer's behaviour.
@Suite(.tags(.unit)) struct PropertyListRequestSerializerTests {
    private func request(_ method: HTTPRequest.Method) -> Request {
        Request(url: URL(string: "http://example.com/p")!, method: method)
    }

    private let parameters: [String: Any] = ["name": "value", "count": 3, "list": ["a", "b"], "flag": true]

    private func decoded(_ body: Data?) throws -> NSDictionary {
        let body = try #require(body)
        var format = PropertyListSerialization.PropertyListFormat.openStep
        let object = try PropertyListSerialization.propertyList(from: body, options: [], format: &format)
        return try #require(object as? NSDictionary)
    }

    @Test func xmlBodyRoundTrips() throws {
        let serializer = PropertyListRequestSerializer()
        #expect(serializer.format == .xml)
        let result = try serializer.serialize(request(.post), parameters: parameters)
        #expect(result.value(forHTTPHeaderField: "Content-Type") == "application/x-plist")
        let body = try #require(result.body)
        #expect(String(decoding: body, as: UTF8.self).hasPrefix("<?xml"))
        #expect(try decoded(body) == NSDictionary(dictionary: parameters))
    }

    @Test func binaryBodyRoundTrips() throws {
        let serializer = PropertyListRequestSerializer()
        serializer.format = .binary
        let result = try serializer.serialize(request(.put), parameters: parameters)
        let body = try #require(result.body)
        #expect(body.starts(with: Data("bplist00".utf8)))
        #expect(try decoded(body) == NSDictionary(dictionary: parameters))
    }

    @Test func uriMethodsGetAQueryString() throws {
        let result = try PropertyListRequestSerializer().serialize(request(.get), parameters: ["a": "b"])
        #expect(result.url.absoluteString == "http://example.com/p?a=b")
        #expect(result.body == nil)
    }

    @Test func aContentTypeAlreadySetIsKept() throws {
        var original = request(.post)
        original.setValue("application/xml", forHTTPHeaderField: "Content-Type")
        let result = try PropertyListRequestSerializer().serialize(original, parameters: ["a": "b"])
        #expect(result.value(forHTTPHeaderField: "Content-Type") == "application/xml")
    }

    @Test func invalidPropertyListFails() throws {
        struct NotAPropertyList {}
        let error = try #require(throws: NetworkingError.self) {
            try PropertyListRequestSerializer().serialize(request(.post), parameters: ["x": NotAPropertyList()])
        }
        #expect(error.code == .requestSerializationFailed)
        #expect(error.detail == "The `parameters` argument is not valid Property List.")
    }
}
