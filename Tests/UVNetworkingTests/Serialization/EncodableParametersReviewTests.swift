import Foundation
import HTTPTypes
import Testing
@testable import UVNetworking

/// Where the `Encodable` forms must give what the dictionary forms gave: a literal that took the
/// `Any?` overload before now takes the `Encodable` one, and must not change its request.
@Suite(.tags(.unit)) struct EncodableParametersReviewTests {
    /// QueryString writes a set's elements under the key itself, sorted; a `Set` literal inside a
    /// dictionary literal (now `[String: Set<String>]`, `Encodable`) must not become `key[]` pairs in
    /// hash order.
    @Test func aSetGivesTheSameQueryAsTheDictionaryPath() throws {
        let tags: Set<String> = ["b", "a", "c", "d", "e"]
        let typed = try FormParameters.object(from: ["tags": tags])
        #expect(QueryString.string(from: typed) == QueryString.string(from: ["tags": tags] as [String: Any]))
        #expect(QueryString.string(from: typed) == "tags=a&tags=b&tags=c&tags=d&tags=e")
        let numbers: Set<Int> = [3, 1, 2]
        #expect(QueryString.string(from: try FormParameters.object(from: ["n": numbers]))
            == QueryString.string(from: ["n": numbers] as [String: Any]))
    }

    /// The same struct sends the same date text in a query (GET) and in a JSON body (POST).
    @Test func aDateIsISO8601InAJSONBodyAsInAQuery() throws {
        struct Since: Encodable, Sendable { var since: Date }
        let value = Since(since: Date(timeIntervalSince1970: 0))
        let serializer = JSONRequestSerializer()
        let get = try serializer.request(method: .get, urlString: "http://h/p", encoding: value)
        #expect(get.url.absoluteString == "http://h/p?since=1970-01-01T00%3A00%3A00Z")
        let post = try serializer.request(method: .post, urlString: "http://h/p", encoding: value)
        #expect(post.body.map { String(decoding: $0, as: UTF8.self) } == #"{"since":"1970-01-01T00:00:00Z"}"#)
    }

    /// The AFNetworking-style calls that compiled before the `Encodable` overloads still compile,
    /// unambiguously (this function is only type-checked, never run).
    func commonCallsStillCompile(_ manager: HTTPSessionManager) async throws {
        let success: HTTPSessionManager.Success = { _, _ in }
        let failure: HTTPSessionManager.Failure = { _, _ in }
        manager.get("p", parameters: nil, success: success, failure: failure)
        manager.get("p", parameters: [:], success: success, failure: failure)
        manager.get("p", parameters: ["a": 1] as [String: Any], success: success, failure: failure)
        manager.get("p", parameters: ["a": 1, "b": "x"], success: success, failure: failure)
        manager.get("p", parameters: ["a": 1], headers: nil, downloadProgress: nil, success: success, failure: failure)
        manager.post("p", parameters: nil, success: success, failure: failure)
        manager.post("p", parameters: ["a": [1, 2]], success: success, failure: failure)
        manager.post("p", parameters: ["a": 1], constructingBody: { _ in }, success: success, failure: failure)
        manager.head("p", parameters: nil, success: { _ in }, failure: failure)
        manager.put("p", parameters: [:], success: success, failure: failure)
        manager.patch("p", parameters: ["a": nil], success: success, failure: failure)
        manager.delete("p", parameters: ["force": true], success: nil, failure: nil)
        let optional: [String: Any]? = nil
        manager.get("p", parameters: optional, success: success, failure: failure)
        _ = manager.dataTask(httpMethod: .get, urlString: "p", parameters: nil, success: success, failure: failure)
        _ = try await manager.get("p")
        _ = try await manager.get("p", parameters: nil)
        _ = try await manager.get("p", parameters: [:])
        _ = try await manager.post("p", parameters: ["a": 1] as [String: Any])
        _ = try await manager.post("p", parameters: ["a": 1])
        let _: [String: Int] = try await manager.get("p", parameters: nil, as: [String: Int].self)
    }
}
