import Foundation
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// The per-call `responseSerializer` of `data(for:)` and the async verbs: a text endpoint read
    /// through a session whose serializer is JSON's.
    @Suite(.tags(.loopback)) struct AsyncResponseSerializer {
        /// A serializer that makes the body's text the value, to tell which serializer ran.
        struct TextSerializer: ResponseSerializer {
            func responseObject(for response: HTTPResponse, data: Data?) throws -> Any? {
                String(decoding: data ?? Data(), as: UTF8.self)
            }
        }

        /// A server answering every request with a plain-text "hello", and a manager on it with
        /// the default (JSON) serializer.
        private func makeHarness() throws -> (ScriptedServer, ClientHarness, HTTPSessionManager) {
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { _ in ScriptedResponse.text("hello", headers: [("Content-Type", "text/plain")]) }
            }
            let harness = ClientHarness(makeManager: { configuration in
                HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1:\(server.port)/"), configuration: configuration)
            })
            let manager = harness.manager as! HTTPSessionManager
            manager.responseSerializer = JSONResponseSerializer()
            return (server, harness, manager)
        }

        @Test func defaultJSONSerializerRefusesATextBody() async throws {
            let (server, harness, manager) = try makeHarness()
            await #expect(throws: NetworkingError.self) {
                do {
                    _ = try await manager.data(for: Request(url: URL(string: "http://127.0.0.1:\(server.port)/")!))
                } catch let error as NetworkingError {
                    #expect(error.code == .unacceptableContentType)
                    throw error
                }
            }
            server.stop()
            harness.finish()
        }

        @Test func dataForRequestTakesThisCallsSerializer() async throws {
            let (server, harness, manager) = try makeHarness()
            let request = Request(url: URL(string: "http://127.0.0.1:\(server.port)/")!)
            let plain = try await manager.data(for: request, responseSerializer: HTTPResponseSerializer())
            #expect(plain.statusCode == 200 && plain.data == Data("hello".utf8) && plain.value as? Data == plain.data)
            let text = try await manager.data(for: request, responseSerializer: TextSerializer())
            #expect(text.value as? String == "hello")
            // The session's serializer is untouched: a call without one still uses JSON's.
            #expect(manager.responseSerializer is JSONResponseSerializer)
            await #expect(throws: NetworkingError.self) { _ = try await manager.data(for: request) }
            server.stop()
            harness.finish()
        }

        @Test func asyncVerbsTakeThisCallsSerializer() async throws {
            let (server, harness, manager) = try makeHarness()
            let serializer = TextSerializer()
            #expect(try await manager.get("a", parameters: ["q": "1"], responseSerializer: serializer).value as? String == "hello")
            #expect(try await manager.post("a", parameters: ["k": "v"], responseSerializer: serializer).value as? String == "hello")
            #expect(try await manager.put("a", responseSerializer: serializer).value as? String == "hello")
            #expect(try await manager.patch("a", responseSerializer: serializer).value as? String == "hello")
            #expect(try await manager.delete("a", responseSerializer: serializer).value as? String == "hello")
            let head = try await manager.head("a", responseSerializer: HTTPResponseSerializer())
            #expect(head.statusCode == 200 && head.data.isEmpty)
            // The Encodable verbs too.
            struct Query: Encodable, Sendable { let q: String }
            #expect(try await manager.get("a", parameters: Query(q: "1"), responseSerializer: serializer).value as? String == "hello")
            #expect(try await manager.post("a", parameters: Query(q: "1"), responseSerializer: serializer).value as? String == "hello")
            server.stop()
            harness.finish()
        }
    }
}
