import Dispatch
import Foundation
import Synchronization
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// What downloads leave in their directory (a private one per test): nothing once a task has
    /// ended, whatever ended it, but the partial file that resume data names, until the task
    /// resumed from it is done with it.
    @Suite(.tags(.loopback)) struct DownloadLeftovers {
        static let etag = "\"v1\""
        static let size = 4 << 20

        /// A body byte of the resource the servers below serve.
        static func body(_ range: Range<Int>) -> [UInt8] { range.map { UInt8(truncatingIfNeeded: $0 % 251) } }

        private let directory: URL

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("uvnetworking-leftovers-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }

        private func files() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
        }

        private func cleanUp() { try? FileManager.default.removeItem(at: directory) }

        private func makeHarness() -> ClientHarness {
            let directory = self.directory
            return ClientHarness { $0.downloadDirectory = directory }
        }

        private func request(_ server: ScriptedServer, _ path: String) -> Request {
            Request(url: URL(string: "http://127.0.0.1:\(server.port)\(path)")!, timeoutInterval: 20)
        }

        /// Sends the head and the first `sent` bytes of the resource (Content-Length: all of
        /// it), then `then` (wait for the client to close, or reset).
        private static func partialServer(sent: Int, reset: Bool) throws -> ScriptedServer {
            try ScriptedServer { connection in
                _ = try connection.readRequest()
                try connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(size)\r\nETag: \(etag)\r\n\r\n")
                try connection.write(body(0..<sent))
                if reset {
                    connection.pause(0.2)
                    connection.reset()
                } else {
                    _ = connection.waitForPeerClose(timeout: 20)
                }
            }
        }

        @Test func anErrorStatusBodyLeavesNothing() throws {
            defer { cleanUp() }
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { _ in ScriptedResponse.text(String(repeating: "missing ", count: 10_000), status: 404, reason: "Not Found") }
            }
            defer { server.stop() }
            let harness = makeHarness()
            defer { harness.finish() }
            let probe = DownloadProbe()
            harness.manager.downloadTask(with: request(server, "/gone"), completionHandler: probe.completion).resume()
            let outcome = try #require(probe.wait())
            #expect(outcome.status == 404)
            #expect(outcome.size == 80_000)
            #expect(waitUntil(timeout: 5) { files().isEmpty }, "left: \(files())")

            // With a destination, the body is moved out and nothing stays behind either.
            let elsewhere = directory.deletingLastPathComponent().appendingPathComponent("uvnetworking-404-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: elsewhere) }
            let moved = DownloadProbe()
            harness.manager.downloadTask(with: request(server, "/gone"), destination: { _, _ in elsewhere },
                                         completionHandler: moved.completion).resume()
            #expect(try #require(moved.wait()).status == 404)
            #expect(files().isEmpty, "left: \(files())")
        }

        @Test func aCancelMidTransferLeavesNothing() throws {
            defer { cleanUp() }
            let server = try Self.partialServer(sent: 1 << 20, reset: false)
            defer { server.stop() }
            let harness = makeHarness()
            defer { harness.finish() }
            let probe = DownloadProbe()
            let task = harness.manager.downloadTask(with: request(server, "/file"), completionHandler: probe.completion)
            task.resume()
            #expect(waitUntil(timeout: 10) { task.countOfBytesReceived >= 1 << 20 })
            task.cancel()
            let outcome = try #require(probe.wait())
            #expect(outcome.code == .cancelled)
            #expect(files().isEmpty, "left when the task ended: \(files())")
        }

        /// A body being written has no name until the download keeps it (complete, or for
        /// resume data): a process that dies meanwhile (a crash, ^C) leaves nothing behind.
        @Test func aPartialDownloadHasNoNameUntilItIsKept() throws {
            defer { cleanUp() }
            let server = try Self.partialServer(sent: 1 << 20, reset: false)
            defer { server.stop() }
            let harness = makeHarness()
            defer { harness.finish() }
            let probe = DownloadProbe()
            let task = harness.manager.downloadTask(with: request(server, "/file"), completionHandler: probe.completion)
            task.resume()
            #expect(waitUntil(timeout: 10) { task.countOfBytesReceived >= 1 << 20 })
            // The writer's worker has had the bytes; give it time to have written them.
            usleep(200_000)
            #expect(files().isEmpty, "a partial download has a name: \(files())")
            task.cancel(byProducingResumeData: probe.resumeDataHandler)
            #expect(try #require(probe.wait()).code == .cancelled)
            #expect(probe.resumeDataDelivered.wait(timeout: .now() + 5) == .success)
            let resumeData = try #require(probe.resumeData.withLock { $0.data })
            let resume = try DownloadResumeData.decode(resumeData, directory: directory)
            // Kept for the resume data: named, with every byte received.
            #expect(files() == [URL(fileURLWithPath: resume.temporaryFilePath).lastPathComponent])
            #expect(POSIXFile.status(atPath: resume.temporaryFilePath)?.size == Int64(1 << 20))
            #expect(try Data(contentsOf: URL(fileURLWithPath: resume.temporaryFilePath)) == Data(Self.body(0..<(1 << 20))))
        }

        @Test func aResetMidBodyLeavesNothing() throws {
            defer { cleanUp() }
            let server = try Self.partialServer(sent: 1 << 20, reset: true)
            defer { server.stop() }
            let harness = makeHarness()
            defer { harness.finish() }
            let probe = DownloadProbe()
            harness.manager.downloadTask(with: request(server, "/file"), completionHandler: probe.completion).resume()
            let outcome = try #require(probe.wait())
            #expect(outcome.code == .connectionReset)
            #expect(files().isEmpty, "left when the task ended: \(files())")
        }

        @Test func aDecodingFailureLeavesNothing() throws {
            defer { cleanUp() }
            let server = try ScriptedServer { connection in
                _ = try connection.readRequest()
                // A gzip header, then bytes that are not deflate data.
                let garbage: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3] + [UInt8](repeating: 0xFF, count: 200_000)
                try connection.write("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(garbage.count)\r\n\r\n")
                try connection.write(garbage)
                _ = connection.waitForPeerClose(timeout: 10)
            }
            defer { server.stop() }
            let harness = makeHarness()
            defer { harness.finish() }
            let probe = DownloadProbe()
            harness.manager.downloadTask(with: request(server, "/file"), completionHandler: probe.completion).resume()
            let outcome = try #require(probe.wait())
            #expect(outcome.code == .contentDecodingFailed)
            #expect(files().isEmpty, "left when the task ended: \(files())")
        }

        /// Resume data keeps its partial file; the task resumed from it takes it over, and once
        /// that task is done (here: the file delivered to its handler) nothing is left.
        @Test func resumeDataKeepsItsFileUntilTheResumedTaskIsDone() throws {
            defer { cleanUp() }
            let half = 1 << 20
            let server = try ScriptedServer { connection in
                let request = try connection.readRequest()
                if let range = request.header("Range") {
                    let first = Int(range.dropFirst("bytes=".count).dropLast())!
                    try connection.write("HTTP/1.1 206 Partial Content\r\nContent-Length: \(Self.size - first)\r\nETag: \(Self.etag)\r\n"
                                         + "Content-Range: bytes \(first)-\(Self.size - 1)/\(Self.size)\r\n\r\n")
                    try connection.write(Self.body(first..<Self.size))
                    _ = connection.waitForPeerClose(timeout: 10)
                    return
                }
                try connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(Self.size)\r\nETag: \(Self.etag)\r\n\r\n")
                try connection.write(Self.body(0..<half))
                _ = connection.waitForPeerClose(timeout: 20)
            }
            defer { server.stop() }
            let harness = makeHarness()
            defer { harness.finish() }
            let first = DownloadProbe()
            let task = harness.manager.downloadTask(with: request(server, "/file"), completionHandler: first.completion)
            task.resume()
            #expect(waitUntil(timeout: 10) { task.countOfBytesReceived >= Int64(half) })
            task.cancel(byProducingResumeData: first.resumeDataHandler)
            #expect(try #require(first.wait()).code == .cancelled)
            #expect(first.resumeDataDelivered.wait(timeout: .now() + 5) == .success)
            let resumeData = try #require(first.resumeData.withLock { $0.data })
            #expect(files().count == 1, "the resume data's file: \(files())")

            let second = DownloadProbe()
            try harness.manager.downloadTask(withResumeData: resumeData, completionHandler: second.completion).resume()
            let outcome = try #require(second.wait())
            #expect(outcome.error == nil)
            #expect(outcome.status == 206)
            #expect(outcome.size == Int64(Self.size))
            #expect(waitUntil(timeout: 5) { files().isEmpty }, "left after the resumed task: \(files())")
        }

        /// Resume data that will not be resumed: the caller discards it, which removes its file;
        /// data that is not resume data of this library removes nothing.
        @Test func resumeDataNotResumedIsDiscardedByTheCaller() throws {
            defer { cleanUp() }
            let server = try Self.partialServer(sent: 1 << 20, reset: false)
            defer { server.stop() }
            let harness = makeHarness()
            defer { harness.finish() }
            let probe = DownloadProbe()
            let task = harness.manager.downloadTask(with: request(server, "/file"), completionHandler: probe.completion)
            task.resume()
            #expect(waitUntil(timeout: 10) { task.countOfBytesReceived >= 1 << 20 })
            task.cancel(byProducingResumeData: probe.resumeDataHandler)
            #expect(probe.resumeDataDelivered.wait(timeout: .now() + 10) == .success)
            let resumeData = try #require(probe.resumeData.withLock { $0.data })
            #expect(files().count == 1)

            let bystander = directory.appendingPathComponent("not-ours.bin")
            try Data("keep me".utf8).write(to: bystander)
            var forged = try DownloadResumeData.decode(resumeData, directory: directory)
            forged.temporaryFilePath = bystander.path
            #expect(throws: NetworkingError.self) { try harness.manager.discardResumeData(forged.encoded()) }
            #expect(FileManager.default.fileExists(atPath: bystander.path))
            try FileManager.default.removeItem(at: bystander)

            try harness.manager.discardResumeData(resumeData)
            #expect(files().isEmpty, "left: \(files())")
            // Twice is harmless.
            try harness.manager.discardResumeData(resumeData)
        }

        /// A resumed task that fails is done with the resume data's file as well.
        @Test func aResumedTaskThatFailsRemovesTheFile() throws {
            defer { cleanUp() }
            let half = 1 << 20
            let server = try ScriptedServer { connection in
                let request = try connection.readRequest()
                if request.header("Range") != nil {
                    try connection.write("HTTP/1.1 206 Partial Content\r\nContent-Length: \(Self.size - half)\r\nETag: \(Self.etag)\r\n"
                                         + "Content-Range: bytes \(half)-\(Self.size - 1)/\(Self.size)\r\n\r\n")
                    try connection.write(Self.body(half..<(half + 1000)))
                    connection.pause(0.2)
                    connection.reset()
                    return
                }
                try connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(Self.size)\r\nETag: \(Self.etag)\r\n\r\n")
                try connection.write(Self.body(0..<half))
                _ = connection.waitForPeerClose(timeout: 20)
            }
            defer { server.stop() }
            let harness = makeHarness()
            defer { harness.finish() }
            let first = DownloadProbe()
            let task = harness.manager.downloadTask(with: request(server, "/file"), completionHandler: first.completion)
            task.resume()
            #expect(waitUntil(timeout: 10) { task.countOfBytesReceived >= Int64(half) })
            task.cancel(byProducingResumeData: first.resumeDataHandler)
            #expect(first.resumeDataDelivered.wait(timeout: .now() + 10) == .success)
            let resumeData = try #require(first.resumeData.withLock { $0.data })
            #expect(files().count == 1)

            let second = DownloadProbe()
            try harness.manager.downloadTask(withResumeData: resumeData, completionHandler: second.completion).resume()
            #expect(try #require(second.wait()).code == .connectionReset)
            #expect(files().isEmpty, "left after the resumed task failed: \(files())")
        }
    }
}
