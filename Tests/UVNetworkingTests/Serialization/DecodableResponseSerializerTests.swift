import Foundation
import HTTPTypes
import Testing
@testable import UVNetworking

@Suite(.tags(.unit)) struct DecodableResponseSerializerTests {
    struct User: Decodable, Equatable {
        var id: Int
        var fullName: String
    }

    let ok = makeResponse(200, contentType: "application/json; charset=utf-8")

    @Test func decodesWithTheConfiguredDecoder() throws {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let serializer = DecodableResponseSerializer(User.self, decoder: decoder)
        let object = try serializer.responseObject(for: ok, data: Data(utf8: #"{"id":7,"full_name":"Ada"}"#))
        #expect(object as? User == User(id: 7, fullName: "Ada"))
    }

    @Test func decodingFailureIsSerializationFailedWithTheDecodingError() throws {
        let body = Data(utf8: #"{"id":"seven"}"#)
        let error = try #require(throws: NetworkingError.self) {
            try DecodableResponseSerializer<User>().responseObject(for: ok, data: body)
        }
        #expect(error.code == .serializationFailed)
        #expect(error.underlyingError is DecodingError)
        #expect(error.responseData == body)
    }

    @Test func validatesLikeJSON() throws {
        let serializer = DecodableResponseSerializer<User>()
        #expect(serializer.acceptableContentTypes == ["application/json", "text/json", "text/javascript"])
        let error = try #require(throws: NetworkingError.self) {
            try serializer.responseObject(for: makeResponse(200, contentType: "text/html"), data: Data(utf8: "{}"))
        }
        #expect(error.code == .unacceptableContentType)
        #expect(try serializer.responseObject(for: ok, data: Data()) == nil)
        #expect(try serializer.responseObject(for: ok, data: Data(utf8: " ")) == nil)
    }

    @Test func clientErrorThatDecodesCarriesTheValue() throws {
        let error = try #require(throws: NetworkingError.self) {
            try DecodableResponseSerializer<User>().responseObject(for: makeResponse(409, contentType: "application/json"),
                                                                   data: Data(utf8: #"{"id":1,"fullName":"Taken"}"#))
        }
        #expect(error.code == .unacceptableStatusCode)
        #expect(error.responseObject as? User == User(id: 1, fullName: "Taken"))
    }

    @Test func clientErrorThatDoesNotDecodeIsTheStatusError() throws {
        let error = try #require(throws: NetworkingError.self) {
            try DecodableResponseSerializer<User>().responseObject(for: makeResponse(404, contentType: "application/json"),
                                                                   data: Data(utf8: #"{"message":"no"}"#))
        }
        #expect(error.code == .unacceptableStatusCode)
        #expect(error.responseObject == nil)
    }
}
