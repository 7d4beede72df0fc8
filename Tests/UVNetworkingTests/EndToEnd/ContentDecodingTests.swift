import Foundation
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// Content-Encoding end to end: httpbin's /gzip and /deflate over each protocol, nginx's gzip,
    /// and scripted bodies that are corrupt, cut short or bombs.
    @Suite(.tags(.nginx)) struct ContentDecodingTests {
        private func json(_ outcome: Outcome) -> [String: Any]? {
            outcome.data.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        }

        @Test(arguments: Wire.allCases, ["/gzip", "/deflate"])
        func httpbinBodiesAreDecodedAndAcceptEncodingIsSent(_ wire: Wire, path: String) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            defer { harness.finish() }
            let outcome = harness.fetch(base + path)
            #expect(outcome.status == 200)
            wire.expectSpoken(outcome)
            let body = try #require(json(outcome), "\(outcome.text ?? "no body")")
            #expect(body[path == "/gzip" ? "gzipped" : "deflated"] as? Bool == true)
            #expect((body["headers"] as? [String: Any])?["Accept-Encoding"] as? String == "gzip, deflate, br, zstd")
        }

        @Test(arguments: Wire.allCases) func decodingCanBeTurnedOff(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness { $0.decompressesResponses = false }
            defer { harness.finish() }
            let outcome = harness.fetch(base + "/gzip", fields: [("Accept-Encoding", "gzip")])
            // The raw gzip member: magic bytes 1f 8b.
            #expect(outcome.data?.prefix(2) == Data([0x1f, 0x8b]))
            let plain = harness.fetch(base + "/headers")
            #expect((json(plain)?["headers"] as? [String: Any])?["Accept-Encoding"] == nil)
        }

        /// A scripted server answering every request with `body` and these fields.
        private func server(body: Data, fields: [(String, String)], chunked: Bool = false) throws -> ScriptedServer {
            try ScriptedServer { connection in
                _ = try connection.readRequest()
                var head = "HTTP/1.1 200 OK\r\n"
                for (name, value) in fields { head += "\(name): \(value)\r\n" }
                if chunked {
                    try connection.write(head + "Transfer-Encoding: chunked\r\n\r\n")
                    try connection.write(Array(String(body.count, radix: 16).utf8) + Array("\r\n".utf8) + Array(body) + Array("\r\n0\r\n\r\n".utf8))
                } else {
                    try connection.write(head + "Content-Length: \(body.count)\r\n\r\n")
                    try connection.write(Array(body))
                }
                _ = connection.waitForPeerClose()
            }
        }

        @Test func progressCountsWireBytesAndTheBodyIsDecoded() throws {
            let original = Data(NginxServer.largeBody(count: 1 << 20))
            let compressed = try gzipCompressed(original)
            let server = try server(body: compressed, fields: [("Content-Encoding", "gzip")])
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            let (task, wait) = harness.makeTask(ClientHarness.request("http://127.0.0.1:\(server.port)/"))
            task.resume()
            let outcome = try #require(wait(30))
            #expect(outcome.data == original)
            #expect(task.countOfBytesReceived == Int64(compressed.count))
            #expect(task.countOfBytesExpectedToReceive == Int64(compressed.count))
            #expect(task.downloadProgress.fractionCompleted == 1.0)
        }

        @Test func decompressionBombIsRefused() throws {
            // 256 MiB of zeros is about 256 KiB of gzip: a ratio near 1000.
            let bomb = try gzipCompressed(Data(count: 256 << 20))
            let server = try server(body: bomb, fields: [("Content-Encoding", "gzip")], chunked: true)
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            let before = residentMemoryBytes()
            let outcome = harness.fetch("http://127.0.0.1:\(server.port)/")
            #expect(outcome.code == .decompressionLimitExceeded)
            #expect((outcome.error as? NetworkingError)?.detail.contains("bomb") == true)
            // Refused early: nowhere near the 256 MiB it would have decoded to.
            #expect(residentMemoryBytes() - before < 64 << 20)
        }

        @Test func maximumBodySizeAppliesToTheDecodedBody() throws {
            let compressed = try gzipCompressed(Data(count: 4 << 20))
            let server = try server(body: compressed, fields: [("Content-Encoding", "gzip")])
            defer { server.stop() }
            let harness = ClientHarness { $0.maximumResponseBodyBytes = 1 << 20 }
            defer { harness.finish() }
            #expect(harness.fetch("http://127.0.0.1:\(server.port)/").code == .decompressionLimitExceeded)
        }

        @Test func corruptOrTruncatedDataFailsClearly() throws {
            let compressed = try gzipCompressed(Data(repeating: 65, count: 100_000))
            var corrupt = compressed
            corrupt[corrupt.count / 2] ^= 0xff
            corrupt[corrupt.count / 2 + 1] ^= 0xff
            for body in [corrupt, compressed.prefix(compressed.count / 2), Data("not gzip at all".utf8)] {
                let server = try server(body: body, fields: [("Content-Encoding", "gzip")])
                defer { server.stop() }
                let harness = ClientHarness()
                defer { harness.finish() }
                #expect(harness.fetch("http://127.0.0.1:\(server.port)/").code == .contentDecodingFailed)
            }
        }

        /// A coding we cannot undo, alone or in a list with ones we can: the body arrives as
        /// sent, with the Content-Encoding field that says so; nothing is half decoded. (br and
        /// zstd are undone: BrotliZstdDecodingTests.)
        @Test(arguments: [[("Content-Encoding", "compress")], [("Content-Encoding", "gzip, compress")],
                          [("Content-Encoding", "gzip"), ("Content-Encoding", "exi")]])
        func unknownCodingsArriveAsSent(fields: [(String, String)]) throws {
            let sent = try gzipCompressed(Data("opaque".utf8))
            let server = try server(body: sent, fields: fields)
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            let outcome = harness.fetch("http://127.0.0.1:\(server.port)/")
            #expect(outcome.error == nil)
            #expect(outcome.data == sent)
            #expect(outcome.response?.headerFields[values: .contentEncoding] == fields.map(\.1))
        }

        /// RFC 9110 §8.4: codings listed in the order applied, in one field or several, are
        /// undone last first; the still-encoded bytes are never delivered as the body.
        @Test(arguments: [[("Content-Encoding", "deflate, identity, gzip")],
                          [("Content-Encoding", "deflate"), ("Content-Encoding", "gzip")]])
        func layeredCodingsAreAllUndone(fields: [(String, String)]) throws {
            let original = Data((0..<30_000).map { UInt8($0 % 11) })
            let deflated = Data(try gzipCompressed(original).dropFirst(10).dropLast(8))
            let server = try server(body: try gzipCompressed(deflated), fields: fields)
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            let outcome = harness.fetch("http://127.0.0.1:\(server.port)/")
            #expect(outcome.error == nil)
            #expect(outcome.data == original)
        }

        @Test func layeredCodingCutShortFails() throws {
            let deflated = Data(try gzipCompressed(Data(repeating: 7, count: 50_000)).dropFirst(10).dropLast(8))
            let server = try server(body: try gzipCompressed(deflated.prefix(deflated.count / 2)),
                                    fields: [("Content-Encoding", "deflate, gzip")])
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            #expect(harness.fetch("http://127.0.0.1:\(server.port)/").code == .contentDecodingFailed)
        }
    }
}
