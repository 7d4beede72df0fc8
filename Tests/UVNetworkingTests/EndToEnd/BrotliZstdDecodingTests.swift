import Foundation
import Synchronization
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// br and zstd end to end: a scripted loopback server answers with a body the libraries'
    /// encoders made, and the task gets the content, or the typed failure for a bomb or a zstd
    /// window past RFC 9659's 8 MiB.
    @Suite(.tags(.loopback)) struct BrotliZstdDecodingTests {
        /// The Accept-Encoding a request came with, written by the server's thread.
        private final class AskedCodings: Sendable {
            let value = Mutex<String?>(nil)
        }

        /// A scripted server answering every request with `body` and these fields; the request's
        /// Accept-Encoding goes to `asked`.
        private func server(body: Data, fields: [(String, String)], chunked: Bool = false,
                            asked: AskedCodings? = nil) throws -> ScriptedServer {
            try ScriptedServer { connection in
                let request = try connection.readRequest()
                asked?.value.withLock { $0 = request.header("Accept-Encoding") }
                var head = "HTTP/1.1 200 OK\r\n"
                for (name, value) in fields { head += "\(name): \(value)\r\n" }
                if chunked {
                    try connection.write(head + "Transfer-Encoding: chunked\r\n\r\n")
                    // Chunks of 16 KiB, so the body arrives over many reads.
                    for start in stride(from: 0, to: body.count, by: 16_384) {
                        let chunk = body[(body.startIndex + start)..<(body.startIndex + min(start + 16_384, body.count))]
                        try connection.write(Array(String(chunk.count, radix: 16).utf8) + Array("\r\n".utf8) + Array(chunk) + Array("\r\n".utf8))
                    }
                    try connection.write("0\r\n\r\n")
                } else {
                    try connection.write(head + "Content-Length: \(body.count)\r\n\r\n")
                    try connection.write(Array(body))
                }
                _ = connection.waitForPeerClose()
            }
        }

        @Test(arguments: ["br", "zstd"])
        func aCompressedBodyIsDecodedAndProgressCountsWireBytes(coding: String) throws {
            let original = compressibleText(count: 2 << 20, seed: 21)
            let compressed = coding == "br" ? brotliCompressed(original) : zstdCompressed(original)
            let asked = AskedCodings()
            let server = try server(body: compressed, fields: [("Content-Encoding", coding)], asked: asked)
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            let (task, wait) = harness.makeTask(ClientHarness.request("http://127.0.0.1:\(server.port)/"))
            task.resume()
            let outcome = try #require(wait(30))
            #expect(outcome.error == nil)
            #expect(outcome.data == original)
            #expect(task.countOfBytesReceived == Int64(compressed.count))
            #expect(task.downloadProgress.fractionCompleted == 1.0)
            // The session asked for every coding it can undo.
            #expect(asked.value.withLock { $0 } == "gzip, deflate, br, zstd")
        }

        /// "gzip, br" in one field, "zstd" then "br" in two: undone last applied first.
        @Test func layeredBrAndZstdAreAllUndone() throws {
            let original = compressibleText(count: 300_000, seed: 22)
            for (body, fields) in [
                (brotliCompressed(try gzipCompressed(original)), [("Content-Encoding", "gzip, br")]),
                (brotliCompressed(zstdCompressed(original)), [("Content-Encoding", "zstd"), ("Content-Encoding", "br")]),
            ] {
                let server = try server(body: body, fields: fields, chunked: true)
                defer { server.stop() }
                let harness = ClientHarness()
                defer { harness.finish() }
                let outcome = harness.fetch("http://127.0.0.1:\(server.port)/")
                #expect(outcome.error == nil, "\(fields)")
                #expect(outcome.data == original, "\(fields)")
            }
        }

        /// 256 MiB of zeros is a few hundred bytes of br and a few kilobytes of zstd, ratios far
        /// past gzip's ~1030x: the ratio limit refuses them as it does a gzip bomb, early.
        @Test(arguments: ["br", "zstd"])
        func aBombFailsWithDecompressionLimitExceeded(coding: String) throws {
            let zeros = Data(count: 256 << 20)
            let bomb = coding == "br" ? brotliCompressed(zeros, quality: 1) : zstdCompressed(zeros, level: 1)
            let server = try server(body: bomb, fields: [("Content-Encoding", coding)], chunked: true)
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            let before = residentMemoryBytes()
            let outcome = harness.fetch("http://127.0.0.1:\(server.port)/")
            #expect(outcome.code == NetworkingError.Code.decompressionLimitExceeded)
            #expect((outcome.error as? NetworkingError)?.detail.contains("bomb") == true)
            // Refused early: nowhere near the 256 MiB it would have decoded to.
            #expect(residentMemoryBytes() - before < 64 << 20)
        }

        @Test func aZstdWindowOver8MiBFailsWithContentDecodingFailed() throws {
            let body = zstdCompressed(compressibleText(count: 20_000), windowLog: 25)
            let server = try server(body: body, fields: [("Content-Encoding", "zstd")])
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            let outcome = harness.fetch("http://127.0.0.1:\(server.port)/")
            #expect(outcome.code == NetworkingError.Code.contentDecodingFailed)
            #expect((outcome.error as? NetworkingError)?.detail.contains("8 MiB") == true)
        }

        @Test(arguments: ["br", "zstd"])
        func aBodyCutShortFailsWithContentDecodingFailed(coding: String) throws {
            let original = compressibleText(count: 100_000, seed: 23)
            let compressed = coding == "br" ? brotliCompressed(original) : zstdCompressed(original)
            let server = try server(body: compressed.prefix(compressed.count / 2), fields: [("Content-Encoding", coding)])
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            #expect(harness.fetch("http://127.0.0.1:\(server.port)/").code == .contentDecodingFailed)
        }
    }
}
