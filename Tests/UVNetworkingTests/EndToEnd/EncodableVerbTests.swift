import Dispatch
import Foundation
import Synchronization
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// The verbs with `Encodable` parameters against a server that echoes what it got: GET's
    /// query, POST's JSON body, with completion handlers and async.
    @Suite(.tags(.loopback)) struct EncodableVerbs {
        struct Item: Codable, Sendable, Equatable {
            var name: String
            var count: Int
        }

        private func echoServer() throws -> ScriptedServer {
            try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    ScriptedResponse.text("\(request.method) \(request.target) \(request.header("Content-Type") ?? "-") \(request.bodyText)")
                }
            }
        }

        private func manager(_ server: ScriptedServer) -> HTTPSessionManager {
            let manager = HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1:\(server.port)/"))
            manager.completionQueue = DispatchQueue(label: "uvnetworking.tests.encodable")
            manager.responseSerializer = HTTPResponseSerializer()
            return manager
        }

        @Test func verbsWithCompletionHandlersSendTheEncodedParameters() throws {
            let server = try echoServer()
            defer { server.stop() }
            let manager = manager(server)
            defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
            let serializer = JSONRequestSerializer()
            // Foundation's JSONEncoder on Linux writes an object's keys in an order that can
            // change from one encoding to the next; sorted, the body has one spelling.
            serializer.writingOptions = [.sortedKeys]
            manager.requestSerializer = serializer
            let seen = Mutex<[String]>([])
            let done = DispatchSemaphore(value: 0)
            let success: HTTPSessionManager.Success = { _, object in
                seen.withLock { $0.append((object as? Data).map { String(decoding: $0, as: UTF8.self) } ?? "?") }
                done.signal()
            }
            let failure: HTTPSessionManager.Failure = { _, error in
                Issue.record("failed: \(error)")
                done.signal()
            }
            manager.get("items", parameters: Item(name: "a b", count: 2), success: success, failure: failure)
            #expect(done.wait(timeout: .now() + 30) == .success)
            manager.post("items", parameters: Item(name: "a", count: 1), success: success, failure: failure)
            #expect(done.wait(timeout: .now() + 30) == .success)
            #expect(seen.withLock { $0 } == [
                "GET /items?count=2&name=a%20b - ",
                #"POST /items application/json {"count":1,"name":"a"}"#,
            ])
        }

        @Test func asyncVerbsSendTheEncodedParameters() async throws {
            let server = try echoServer()
            defer { server.stop() }
            let manager = manager(server)
            defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
            let get = try await manager.get("items", parameters: Item(name: "x", count: 3))
            #expect(String(decoding: get.data, as: UTF8.self) == "GET /items?count=3&name=x - ")
            let put = try await manager.put("items/1", parameters: Item(name: "y", count: 4))
            #expect(String(decoding: put.data, as: UTF8.self) == "PUT /items/1 application/x-www-form-urlencoded count=4&name=y")
            let delete = try await manager.delete("items/1", parameters: ["force": true])
            #expect(String(decoding: delete.data, as: UTF8.self) == "DELETE /items/1?force=1 - ")
        }
    }
}
