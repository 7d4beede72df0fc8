import Foundation
import HTTPTypes
import Testing
@testable import UVNetworking

/// `Encodable` parameters: the form rule (`FormParameters`, then `QueryString`) for queries and
/// form bodies, `JSONEncoder` for the JSON serializer's bodies, and the verbs' overloads choosing
/// them.
@Suite(.tags(.loopback)) struct EncodableParametersTests {
    struct Filter: Encodable, Sendable {
        var min: Int
        var max: Double
    }

    struct Search: Encodable, Sendable {
        var q: String
        var page: Int
        var tags: [String]
        var exact: Bool
        var filter: Filter
        var cursor: String?
    }

    struct Renamed: Encodable, Sendable {
        var userName: String
        enum CodingKeys: String, CodingKey { case userName = "user_name" }
    }

    private let search = Search(q: "a b&c", page: 2, tags: ["x", "y"], exact: true, filter: Filter(min: 1, max: 2.5), cursor: nil)

    /// What the same parameters as a dictionary give: the rule the form encoding follows.
    private let searchAsDictionary: [String: Any] = [
        "q": "a b&c", "page": 2, "tags": ["x", "y"], "exact": true, "filter": ["min": 1, "max": 2.5] as [String: Any],
    ]

    @Test func aStructFlattensAsTheSameDictionaryWould() throws {
        let object = try FormParameters.object(from: search)
        #expect(QueryString.string(from: object) == QueryString.string(from: searchAsDictionary))
        #expect(QueryString.string(from: object)
            == "exact=1&filter%5Bmax%5D=2.5&filter%5Bmin%5D=1&page=2&q=a%20b%26c&tags%5B%5D=x&tags%5B%5D=y")
    }

    @Test func codingKeysNilsAndLeafTypes() throws {
        #expect(QueryString.string(from: try FormParameters.object(from: Renamed(userName: "n"))) == "user_name=n")
        // An explicit nil (a dictionary's) is a bare key; an absent optional property is nothing.
        let explicitNil: [String: String?] = ["a": nil, "b": "1"]
        #expect(QueryString.string(from: try FormParameters.object(from: explicitNil)) == "a&b=1")
        let date = Date(timeIntervalSince1970: 0)
        let leaves = try FormParameters.object(from: ["d": date])
        #expect(QueryString.pairs(from: leaves).first?.value == "1970-01-01T00:00:00Z")
        #expect(QueryString.pairs(from: try FormParameters.object(from: ["u": URL(string: "http://h/p?x=1")!])).first?.value
            == "http://h/p?x=1")
        #expect(QueryString.pairs(from: try FormParameters.object(from: ["b": Data([1, 2, 3])])).first?.value == "AQID")
        // A top-level array: elements under "[]", as QueryString writes an array with no key.
        #expect(QueryString.string(from: try FormParameters.object(from: [1, 2])) == QueryString.string(from: [1, 2]))
    }

    @Test func getAndDeletePutEncodableParametersInTheQuery() throws {
        let serializer = HTTPRequestSerializer()
        for method in [HTTPRequest.Method.get, .head, .delete] {
            let request = try serializer.request(method: method, urlString: "http://h/p?z=0", encoding: search)
            #expect(request.url.absoluteString == "http://h/p?z=0&" + QueryString.string(from: searchAsDictionary))
            #expect(request.body == nil)
        }
    }

    @Test func theFormSerializerPutsThemInAFormBody() throws {
        let request = try HTTPRequestSerializer().request(method: .post, urlString: "http://h/p", encoding: search)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
        #expect(request.body.map { String(decoding: $0, as: UTF8.self) } == QueryString.string(from: searchAsDictionary))
        #expect(request.url.absoluteString == "http://h/p")
    }

    @Test func theJSONSerializerEncodesTheBodyWithJSONEncoder() throws {
        let serializer = JSONRequestSerializer()
        serializer.writingOptions = [.sortedKeys]
        for method in [HTTPRequest.Method.post, .put, .patch] {
            let request = try serializer.request(method: method, urlString: "http://h/p", encoding: Renamed(userName: "n/m"))
            #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            #expect(request.body == (try encoder.encode(Renamed(userName: "n/m"))))
        }
        // GET still gets the query string.
        let get = try serializer.request(method: .get, urlString: "http://h/p", encoding: Renamed(userName: "n"))
        #expect(get.url.absoluteString == "http://h/p?user_name=n")
        #expect(get.body == nil)
    }

    @Test func aValueThatFailsToEncodeIsASerializationError() {
        struct Refuses: Encodable, Sendable {
            func encode(to encoder: any Encoder) throws {
                throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "no"))
            }
        }
        for serializer in [HTTPRequestSerializer(), JSONRequestSerializer()] {
            #expect(throws: NetworkingError.self) {
                _ = try serializer.request(method: .post, urlString: "http://h/p", encoding: Refuses())
            }
        }
        #expect((try? JSONRequestSerializer().request(method: .post, urlString: "http://h/p", encoding: Refuses())) == nil)
    }

    @Test func aDictionaryLiteralGivesTheSameRequestThroughEitherOverload() throws {
        let manager = HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1:9/"))
        for serializer in [HTTPRequestSerializer(), JSONRequestSerializer()] {
            manager.requestSerializer = serializer
            for method in [HTTPRequest.Method.get, .post] {
                let typed = try manager.makeRequest(method, "p", encoding: ["a": "1", "b": "x y"], nil)
                let untyped = try manager.makeRequest(method, "p", ["a": "1", "b": "x y"] as [String: Any], nil)
                #expect(typed.url == untyped.url)
                let bodies = [typed.body, untyped.body].map { body in
                    body.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: String] }
                        ?? body.map { ["form": String(decoding: $0, as: UTF8.self)] }
                }
                #expect(bodies[0] == bodies[1], "\(type(of: serializer)) \(method)")
                #expect(typed.value(forHTTPHeaderField: "Content-Type") == untyped.value(forHTTPHeaderField: "Content-Type"))
            }
        }
    }
}
