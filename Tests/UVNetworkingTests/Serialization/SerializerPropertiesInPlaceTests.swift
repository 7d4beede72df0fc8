import Dispatch
import Foundation
import HTTPTypes
import Synchronization
import Testing
@testable import UVNetworking

/// The session's serializers changed in place, as AFNetworking users write it:
/// `manager.responseSerializer.acceptableContentTypes = ...` on the `any ResponseSerializer`, and
/// `manager.requestSerializer.timeoutInterval = ...` or a default header on the request serializer.
@Suite(.tags(.loopback)) struct SerializerPropertiesInPlaceTests {
    /// Validates nothing and declares no rules: the protocol's defaults.
    struct PassThrough: ResponseSerializer {
        func responseObject(for response: HTTPResponse, data: Data?) throws -> Any? { data }
    }

    private func manager() -> HTTPSessionManager {
        HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1:9/api/"))
    }

    @Test func acceptableContentTypesOfTheDefaultJSONSerializerChangeInPlace() throws {
        let manager = manager()
        manager.responseSerializer.acceptableContentTypes = ["application/json", "text/html"]
        let json = try #require(manager.responseSerializer as? JSONResponseSerializer)
        #expect(json.validation.acceptableContentTypes == ["application/json", "text/html"])
        manager.responseSerializer.acceptableContentTypes?.insert("text/plain")
        #expect(manager.responseSerializer.acceptableContentTypes == ["application/json", "text/html", "text/plain"])
    }

    @Test func acceptableStatusCodesChangeInPlaceForEachSerializerOfTheLibrary() throws {
        let manager = manager()
        let serializers: [any ResponseSerializer] = [
            HTTPResponseSerializer(), JSONResponseSerializer(), XMLParserResponseSerializer(), PropertyListResponseSerializer(),
            DecodableResponseSerializer(Int.self), CompoundResponseSerializer([JSONResponseSerializer()]),
        ]
        for serializer in serializers {
            manager.responseSerializer = serializer
            manager.responseSerializer.acceptableStatusCodes.insert(404)
            #expect(manager.responseSerializer.acceptableStatusCodes.contains(404), "\(type(of: serializer))")
            #expect(manager.responseSerializer.acceptableStatusCodes.contains(200), "\(type(of: serializer))")
            // The rule is the one the serializer validates with: a 404 now passes.
            var response = HTTPResponse(status: .notFound)
            response.headerFields[.contentType] = "application/json"
            #expect(throws: Never.self, "\(type(of: serializer))") {
                _ = try manager.responseSerializer.responseObject(for: response, data: nil)
            }
        }
    }

    @Test func aCustomSerializerThatDeclaresNoRulesAcceptsEverythingAndIgnoresChanges() {
        var serializer: any ResponseSerializer = PassThrough()
        #expect(serializer.acceptableContentTypes == nil)
        #expect(serializer.acceptableStatusCodes == IndexSet(integersIn: 100...999))
        serializer.acceptableContentTypes = ["text/html"]
        serializer.acceptableStatusCodes = [200]
        #expect(serializer.acceptableContentTypes == nil)
        #expect(serializer is PassThrough)
    }

    @Test func changesInPlaceFromManyThreadsAreNoneLost() {
        let manager = manager()
        manager.responseSerializer = HTTPResponseSerializer()
        manager.responseSerializer.acceptableContentTypes = []
        let threads = 8, perThread = 200
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0..<perThread {
                manager.responseSerializer.acceptableContentTypes?.insert("type/\(thread)-\(index)")
            }
        }
        #expect(manager.responseSerializer.acceptableContentTypes?.count == threads * perThread)
    }

    @Test func theRequestSerializersSettingsAndHeadersChangeInPlace() throws {
        let manager = manager()
        manager.requestSerializer.timeoutInterval = 7
        manager.requestSerializer.setValue("Bearer token", forHTTPHeaderField: "Authorization")
        manager.requestSerializer.setValue("yes", forHTTPHeaderField: "X-Test")
        var request = try manager.makeRequest(.get, "items", ["q": "a"], nil)
        #expect(request.timeoutInterval == 7)
        #expect(request.value(forHTTPHeaderField: "X-Test") == "yes")
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer token")
        #expect(request.url.absoluteString == "http://127.0.0.1:9/api/items?q=a")

        manager.requestSerializer = JSONRequestSerializer()
        manager.requestSerializer.timeoutInterval = 3
        request = try manager.makeRequest(.post, "items", ["q": "a"], nil)
        #expect(request.timeoutInterval == 3)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
    }
}
