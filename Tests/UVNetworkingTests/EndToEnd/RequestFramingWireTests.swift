import Foundation
import HTTPTypes
import Synchronization
import Testing
@testable import UVNetworking
import UVHTTP1

extension EndToEnd {
    /// The library alone frames a request body: what a caller's Content-Length and
    /// Transfer-Encoding fields do, checked on the bytes the server receives.
    @Suite(.tags(.loopback)) struct RequestFraming {
        /// What a keep-alive server read: every request, in order, with its head as received.
        private final class Recorded: Sendable {
            let requests = Mutex<[ScriptedRequest]>([])
            var all: [ScriptedRequest] { requests.withLock { $0 } }
            var targets: [String] { all.map(\.target) }
        }

        /// Answers every request with its own target as the body, on one keep-alive connection.
        private func echoTargets(_ recorded: Recorded) throws -> ScriptedServer {
            try ScriptedServer { connection in
                try connection.serveKeepAlive(idleTimeout: 10) { request in
                    recorded.requests.withLock { $0.append(request) }
                    return ScriptedResponse.text(request.target)
                }
            }
        }

        private func request(_ url: String, method: HTTPRequest.Method = .post, fields: [(String, String)] = [],
                             body: String? = nil) -> Request {
            ClientHarness.request(url, method: method, fields: fields, body: body, timeout: 10)
        }

        /// How many times `name` appears in a request head.
        private func count(_ name: String, in request: ScriptedRequest) -> Int { request.headerValues(name).count }

        @Test func aShortContentLengthCannotSmuggleASecondRequest() throws {
            let recorded = Recorded()
            let server = try echoTargets(recorded)
            defer { server.stop() }
            let harness = ClientHarness()
            let base = "http://127.0.0.1:\(server.port)"
            #expect(harness.fetch(request(base + "/first", method: .get)).text == "/first")
            // The tail of this body would be a request of its own if the caller's length were sent.
            let smuggling = request(base + "/second", fields: [("Content-Length", "3")],
                                    body: "abcGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n")
            let refused = harness.fetch(smuggling)
            #expect(refused.code == .invalidRequestHeader)
            #expect((refused.error as? NetworkingError)?.kind == .invalidRequest)
            #expect(harness.fetch(request(base + "/third", method: .get)).text == "/third")
            #expect(recorded.targets == ["/first", "/third"], "no byte of the refused request reached the server")
            #expect(server.acceptedCount == 1, "both good requests shared the keep-alive connection")
            server.stop()
            harness.finish()
        }

        @Test(arguments: [
            (nil as String?, "100"),   // no body at all
            ("short", "100"),          // longer than the body
            ("short", "4"),            // shorter than the body
            ("short", "5, 6"),         // two values
            ("short", "+5"),           // not 1*DIGIT
            ("", "1"),                 // an empty body
        ])
        func aContentLengthThatDisagreesFailsBeforeAnyByte(body: String?, length: String) throws {
            let recorded = Recorded()
            let server = try echoTargets(recorded)
            defer { server.stop() }
            let harness = ClientHarness()
            let started = monotonicSeconds()
            let outcome = harness.fetch(request("http://127.0.0.1:\(server.port)/", fields: [("Content-Length", length)], body: body))
            #expect(outcome.code == .invalidRequestHeader)
            #expect(monotonicSeconds() - started < 5, "refused at once, not after a timeout")
            #expect(server.acceptedCount == 0, "refused before any connection")
            server.stop()
            harness.finish()
        }

        @Test func aContentLengthThatAgreesIsSentOnce() throws {
            let recorded = Recorded()
            let server = try echoTargets(recorded)
            defer { server.stop() }
            let harness = ClientHarness()
            let base = "http://127.0.0.1:\(server.port)"
            #expect(harness.fetch(request(base + "/a", fields: [("content-length", "5")], body: "hello")).text == "/a")
            #expect(harness.fetch(request(base + "/b", method: .get, fields: [("Content-Length", "0")])).text == "/b")
            #expect(harness.fetch(request(base + "/c", fields: [("Content-Length", "5"), ("Content-Length", "5")],
                                          body: "hello")).text == "/c")
            let seen = recorded.all
            #expect(seen.count == 3)
            for request in seen {
                #expect(count("Content-Length", in: request) == 1, "\(request.head)")
                #expect(count("Transfer-Encoding", in: request) == 0)
            }
            #expect(seen.map { $0.header("Content-Length") } == ["5", "0", "5"])
            #expect(seen.first?.bodyText == "hello")
            server.stop()
            harness.finish()
        }

        /// One request's head and raw body bytes as the server received them.
        private final class Seen: Sendable {
            let value = Mutex<(head: String, raw: [UInt8])?>(nil)
            func withLock<R>(_ body: ((head: String, raw: [UInt8])?) -> R) -> R { value.withLock { body($0) } }
        }

        /// Reads one request head, then exactly `count` raw bytes (framing included).
        private func rawBodyServer(_ count: Int, into seen: Seen) throws -> ScriptedServer {
            try ScriptedServer { connection in
                let head = try connection.readRequestHead()
                let raw = try connection.readBytes(count)
                seen.value.withLock { $0 = (head.head, raw) }
                try connection.write(ScriptedResponse.text("ok"))
                _ = connection.waitForPeerClose(timeout: 10)
            }
        }

        @Test func chunkedFromTheCallerChunksAnInMemoryBody() throws {
            let wire = "5\r\nhello\r\n0\r\n\r\n"
            let seen = Seen()
            let server = try rawBodyServer(wire.utf8.count, into: seen)
            defer { server.stop() }
            let harness = ClientHarness()
            let outcome = harness.fetch(request("http://127.0.0.1:\(server.port)/", fields: [("Transfer-Encoding", "chunked")],
                                                body: "hello"))
            #expect(outcome.text == "ok")
            let received = try #require(seen.withLock { $0 })
            #expect(String(decoding: received.raw, as: UTF8.self) == wire)
            #expect(received.head.lowercased().components(separatedBy: "transfer-encoding: chunked").count == 2)
            #expect(!received.head.lowercased().contains("content-length"))
            server.stop()
            harness.finish()
        }

        @Test func chunkedFromTheCallerChunksAStreamOfKnownLength() throws {
            let seen = Seen()
            let server = try rawBodyServer("6\r\nstream\r\n0\r\n\r\n".utf8.count, into: seen)
            defer { server.stop() }
            let harness = ClientHarness()
            var streamed = request("http://127.0.0.1:\(server.port)/", fields: [("Transfer-Encoding", "Chunked")])
            streamed.bodyStream = StreamedBody(length: 6) { DataBodyStream(Data("stream".utf8)) }
            #expect(harness.fetch(streamed).text == "ok")
            let received = try #require(seen.withLock { $0 })
            #expect(String(decoding: received.raw, as: UTF8.self) == "6\r\nstream\r\n0\r\n\r\n")
            #expect(!received.head.lowercased().contains("content-length"))
            server.stop()
            harness.finish()
        }

        @Test func chunkedFromTheCallerWithoutABodySendsAnEmptyChunkedBody() throws {
            let seen = Seen()
            let server = try rawBodyServer("0\r\n\r\n".utf8.count, into: seen)
            defer { server.stop() }
            let harness = ClientHarness()
            #expect(harness.fetch(request("http://127.0.0.1:\(server.port)/", method: .get,
                                          fields: [("Transfer-Encoding", "chunked")])).text == "ok")
            #expect(seen.withLock { $0.map { String(decoding: $0.raw, as: UTF8.self) } } == "0\r\n\r\n")
            server.stop()
            harness.finish()
        }

        @Test(arguments: [
            [("Transfer-Encoding", "gzip")],
            [("Transfer-Encoding", "gzip, chunked")],
            [("Transfer-Encoding", "identity")],
            [("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")],
            [("Transfer-Encoding", "chunked"), ("Content-Length", "5")],
        ])
        func otherTransferEncodingsFailBeforeAnyByte(fields: [(String, String)]) throws {
            let recorded = Recorded()
            let server = try echoTargets(recorded)
            defer { server.stop() }
            let harness = ClientHarness()
            let outcome = harness.fetch(request("http://127.0.0.1:\(server.port)/", fields: fields, body: "hello"))
            #expect(outcome.code == .invalidRequestHeader)
            #expect(server.acceptedCount == 0)
            server.stop()
            harness.finish()
        }

        @Test func streamedAndFileBodiesCheckTheCallersLength() throws {
            let recorded = Recorded()
            let server = try echoTargets(recorded)
            defer { server.stop() }
            let harness = ClientHarness()
            let base = "http://127.0.0.1:\(server.port)"
            // Unknown length: the caller's Content-Length is the length, and the stream must match it.
            var adopted = request(base + "/adopted", fields: [("Content-Length", "6")])
            adopted.bodyStream = StreamedBody(length: nil) { DataBodyStream(Data("stream".utf8)) }
            #expect(harness.fetch(adopted).text == "/adopted")
            // Known length: a caller's value must agree.
            var known = request(base + "/known", fields: [("Content-Length", "7")])
            known.bodyStream = StreamedBody(length: 6) { DataBodyStream(Data("stream".utf8)) }
            #expect(harness.fetch(known).code == .invalidRequestHeader)
            // A file: its size is the length.
            let file = temporaryFile("framing")
            defer { try? FileManager.default.removeItem(at: file) }
            try Data("file body".utf8).write(to: file)
            let done = DispatchSemaphore(value: 0)
            let upload = harness.manager.uploadTask(with: request(base + "/file", fields: [("Content-Length", "100")]),
                                                    fromFile: file, progress: nil) { _, _, error in
                #expect((error as? NetworkingError)?.code == .invalidRequestHeader)
                done.signal()
            }
            upload.resume()
            #expect(done.wait(timeout: .now() + 10) == .success)
            // Multipart: the form's exact length frames it; a caller's other value is refused.
            let serializer = HTTPRequestSerializer()
            var form = try serializer.multipartFormRequest(method: .post, urlString: base + "/form") { form in
                form.appendPart(withForm: Data("v".utf8), name: "k")
            }
            #expect(harness.fetch(form).text == "/form")
            form.setValue("1", forHTTPHeaderField: "Content-Length")
            #expect(harness.fetch(form).code == .invalidRequestHeader)
            #expect(recorded.targets == ["/adopted", "/form"])
            #expect(recorded.all.first?.bodyText == "stream")
            #expect(recorded.all.allSatisfy { count("Content-Length", in: $0) == 1 })
            server.stop()
            harness.finish()
        }

        @Test func aGetWithABodyIsFramedByItsLength() throws {
            let recorded = Recorded()
            let server = try echoTargets(recorded)
            defer { server.stop() }
            let harness = ClientHarness()
            let base = "http://127.0.0.1:\(server.port)"
            #expect(harness.fetch(request(base + "/get", method: .get, body: "query")).text == "/get")
            #expect(harness.fetch(request(base + "/after", method: .get)).text == "/after")
            #expect(recorded.all.map { $0.header("Content-Length") } == ["5", nil])
            #expect(recorded.all.first?.bodyText == "query")
            #expect(server.acceptedCount == 1)
            server.stop()
            harness.finish()
        }
    }
}
