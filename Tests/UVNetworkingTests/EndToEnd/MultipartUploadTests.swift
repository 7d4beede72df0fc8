import Foundation
import Synchronization
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// Multipart POSTs through HTTPSessionManager: echoed by httpbin over each protocol, and a
    /// 2 GiB file streamed from disk in bounded memory.
    @Suite(.tags(.nginx)) struct MultipartUploads {
        /// A manager on `baseURL` in a leak-checking harness, with `serializer`.
        private func makeHarness(_ baseURL: String, _ serializer: any ResponseSerializer,
                                 wire: Wire = .http1_1) -> (ClientHarness, HTTPSessionManager) {
            let harness = wire.harness(makeManager: { HTTPSessionManager(baseURL: URL(string: baseURL), configuration: $0) })
            let manager = harness.manager as! HTTPSessionManager
            manager.responseSerializer = serializer
            return (harness, manager)
        }

        /// What a multipart POST delivered.
        struct Posted: @unchecked Sendable {
            // @unchecked: written once on the completion queue, read after the semaphore.
            var task: DataTask?
            var object: Any?
            var error: (any Error)?
        }

        /// Runs a multipart POST to completion.
        private func post(_ manager: HTTPSessionManager, _ urlString: String, parameters: [String: Any]? = nil,
                          progress: (@Sendable (Progress) -> Void)? = nil,
                          _ build: (MultipartFormData) throws -> Void) -> (DataTask?, Any?, (any Error)?) {
            let result = Mutex(Posted())
            let done = DispatchSemaphore(value: 0)
            _ = manager.post(urlString, parameters: parameters, constructingBody: build, uploadProgress: progress, success: { task, object in
                result.withLock { $0 = Posted(task: task, object: object) }
                done.signal()
            }, failure: { task, error in
                result.withLock { $0 = Posted(task: task, error: error) }
                done.signal()
            })
            #expect(done.wait(timeout: .now() + 300) == .success)
            let posted = result.withLock { $0 }
            return (posted.task, posted.object, posted.error)
        }

        @Test(arguments: Wire.allCases) func httpbinEchoesFieldsAndFiles(_ wire: Wire) throws {
            let (harness, manager) = makeHarness(try wire.httpbinBaseURL(), JSONResponseSerializer(), wire: wire)
            let file = temporaryFile("notes.txt")
            try Data("file contents\n".utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }

            let (task, object, error) = post(manager, "post", parameters: ["title": "a & b", "tags": ["x", "y"]]) { form in
                try form.appendPart(withFileURL: file, name: "attachment")
                try form.appendPart(withFileData: Data([1, 2, 3]), name: "blob", fileName: "blob.bin", mimeType: "application/octet-stream")
            }
            #expect(error == nil)
            let json = object as? [String: Any]
            let form = json?["form"] as? [String: Any]
            #expect(form?["title"] as? String == "a & b")
            #expect(form?["tags[]"] as? [String] == ["x", "y"])
            let files = json?["files"] as? [String: Any]
            #expect(files?["attachment"] as? String == "file contents\n")
            #expect(files?["blob"] != nil)
            #expect((json?["headers"] as? [String: Any])?["Content-Type"].map { "\($0)" }?.hasPrefix("multipart/form-data; boundary=Boundary+") == true)
            #expect(task?.countOfBytesSent == task?.countOfBytesExpectedToSend)
            #expect(task?.networkProtocolName == wire.rawValue)
            harness.finish()
        }

        @Test func aMissingFileMakesNoTask() throws {
            let httpbin = try TestServers.httpbin()
            let (harness, manager) = makeHarness(httpbin.baseURL, JSONResponseSerializer())
            let (task, _, error) = post(manager, "post") { form in
                try form.appendPart(withFileURL: URL(fileURLWithPath: "/nonexistent/file.bin"), name: "file")
            }
            #expect(task == nil)
            #expect((error as? NetworkingError)?.code == .multipartFormDataFailed)
            #expect(manager.tasks.isEmpty)
            harness.finish()
        }

        /// throttleBandwidth: one packet per delay, timed on the loop.
        @Test func throttledUploadSendsOnePacketPerDelay() throws {
            let arrivals = Mutex<[Double]>([])
            let server = try ScriptedServer { connection in
                let head = try connection.readRequestHead()
                let length = Int(head.header("Content-Length") ?? "") ?? 0
                var received = 0
                while received < length {
                    let step = min(1000, length - received)
                    try connection.discard(step)
                    received += step
                    arrivals.withLock { $0.append(monotonicSeconds()) }
                }
                try connection.write(ScriptedResponse.text("ok"))
                _ = connection.waitForPeerClose()
            }
            let (harness, manager) = makeHarness("http://127.0.0.1:\(server.port)/", HTTPResponseSerializer())
            let started = monotonicSeconds()
            let (_, object, error) = post(manager, "upload") { form in
                try form.appendPart(withFileData: Data(repeating: 7, count: 4000), name: "f", fileName: "f.bin",
                                    mimeType: "application/octet-stream")
                form.throttleBandwidth(withPacketSize: 1000, delay: 0.1)
            }
            let elapsed = monotonicSeconds() - started
            #expect(error == nil)
            #expect((object as? Data).map { String(decoding: $0, as: UTF8.self) } == "ok")
            // About 4.2 KB with the multipart framing: at least five packets, so four delays.
            #expect(elapsed >= 0.4, "a throttled upload took only \(elapsed) s")
            let times = arrivals.withLock { $0 }
            #expect(times.count >= 5)
            if let first = times.first, let last = times.last { #expect(last - first >= 0.3) }
            server.stop()
            harness.finish()
        }

        /// A sparse 256 MiB file in a multipart body: read from disk on the worker pool, a chunk at
        /// a time, four times the memory bound. (The 2 GiB upload, past every 32-bit length, is
        /// UploadTasks' test: a multipart body takes the same file reader.)
        @Test func aLargeFilePartUploadsInBoundedMemory() throws {
            let size: Int64 = 256 << 20
            let file = try makeSparseFile("big.bin", size: size)
            defer { try? FileManager.default.removeItem(at: file) }

            let received = UploadObservations()
            let server = try memoryWatchingSink(received, reply: "stored")
            let (harness, manager) = makeHarness("http://127.0.0.1:\(server.port)/", HTTPResponseSerializer())
            let lastFraction = Mutex(0.0)
            let (task, object, error) = post(manager, "upload", parameters: ["name": "big"], progress: { progress in
                lastFraction.withLock { $0 = progress.fractionCompleted }
            }) { form in
                try form.appendPart(withFileURL: file, name: "file")
            }
            #expect(error == nil)
            #expect((object as? Data).map { String(decoding: $0, as: UTF8.self) } == "stored")
            let seen = (head: received.head.withLock { $0?.header("Content-Type") } ?? "", bytes: received.bytes.withLock { $0 },
                        peakGrowth: received.peakResidentGrowth.withLock { $0 })
            #expect(seen.head.hasPrefix("multipart/form-data; boundary="))
            #expect(Int64(seen.bytes) == task?.countOfBytesExpectedToSend)
            #expect(Int64(seen.bytes) > size)
            #expect(seen.peakGrowth < 64 << 20, "resident memory grew by \(seen.peakGrowth >> 20) MiB during a 256 MiB upload")
            #expect(waitUntil(timeout: 5) { lastFraction.withLock { $0 } == 1.0 })
            server.stop()
            harness.finish()
        }
    }
}
