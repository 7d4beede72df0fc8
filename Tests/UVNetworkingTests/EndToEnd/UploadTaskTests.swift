import Dispatch
import Foundation
import HTTPTypes
import Synchronization
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// Upload tasks: from memory and from a file over each protocol, from a stream; progress,
    /// length faults, a missing file, and a 2 GiB file in bounded memory.
    @Suite(.tags(.nginx)) struct UploadTasks {
        /// Records an upload's last progress fraction and its completion.
        final class Run: Sendable {
            let outcome = Mutex<Outcome?>(nil)
            let lastFraction = Mutex(-1.0)
            let done = DispatchSemaphore(value: 0)

            var progress: @Sendable (Progress) -> Void { { [self] progress in lastFraction.withLock { $0 = progress.fractionCompleted } } }
            var completion: SessionTask.CompletionHandler {
                { [self] response, object, error in
                    let first = outcome.withLock { current -> Bool in
                        if current == nil { current = Outcome(response: response, object: object, error: error); return true }
                        current!.calls += 1
                        return false
                    }
                    if first { done.signal() }
                }
            }

            /// Waits for the completion; nil on a timeout.
            func wait(_ seconds: Double = 30) -> Outcome? {
                guard done.wait(timeout: .now() + seconds) == .success else { return nil }
                return outcome.withLock { $0 }
            }
        }

        /// httpbin's `data`: the body as text, or as a base64 data URL when it is not UTF-8.
        private func echoedData(_ outcome: Outcome?) throws -> [UInt8] {
            let raw = try #require(outcome?.data)
            let json = try #require(try JSONSerialization.jsonObject(with: raw) as? [String: Any])
            let data = try #require(json["data"] as? String)
            let prefix = "data:application/octet-stream;base64,"
            if data.hasPrefix(prefix) { return Array(try #require(Data(base64Encoded: String(data.dropFirst(prefix.count))))) }
            return Array(data.utf8)
        }

        /// A server that reads one request whole and answers with its body's length.
        private func echoLengthServer(_ seen: UploadObservations) throws -> ScriptedServer {
            try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    seen.head.withLock { $0 = request }
                    seen.bytes.withLock { $0 = request.body.count }
                    return ScriptedResponse.text(request.body == GeneratedBody.expected(request.body.count) ? "same \(request.body.count)" : "different")
                }
            }
        }

        @Test(arguments: Wire.allCases) func fromDataIsEchoedAndProgressReachesOne(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            let body = Data(GeneratedBody.expected(300_000))
            let run = Run()
            let request = Request(url: URL(string: base + "/post")!, method: .post, body: Data("ignored".utf8))
            let task = harness.manager.uploadTask(with: request, from: body, progress: run.progress, completionHandler: run.completion)
            #expect(harness.manager.uploadTasks.map(\.taskIdentifier) == [task.taskIdentifier])
            #expect(harness.manager.dataTasks.isEmpty)
            task.resume()
            let outcome = run.wait()
            #expect(outcome?.status == 200)
            #expect(try echoedData(outcome) == Array(body))
            #expect(task.countOfBytesSent == Int64(body.count))
            #expect(task.countOfBytesExpectedToSend == Int64(body.count))
            #expect(task.networkProtocolName == wire.rawValue)
            #expect(waitUntil(timeout: 5) { run.lastFraction.withLock { $0 } == 1.0 })
            #expect(harness.manager.uploadTasks.isEmpty)
            harness.finish()
        }

        @Test(arguments: Wire.allCases) func fromFileIsEchoedAndProgressReachesOne(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            let file = temporaryFile("upload.bin")
            let body = Data(GeneratedBody.expected(200_001))
            try body.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let run = Run()
            let task = harness.manager.uploadTask(with: Request(url: URL(string: base + "/put")!, method: .put),
                                                  fromFile: file, progress: run.progress, completionHandler: run.completion)
            #expect(task.countOfBytesExpectedToSend == 200_001)
            task.resume()
            let outcome = run.wait()
            #expect(outcome?.status == 200)
            #expect(outcome?.calls == 1)
            #expect(try echoedData(outcome) == Array(body))
            #expect(waitUntil(timeout: 5) { run.lastFraction.withLock { $0 } == 1.0 })
            harness.finish()
        }

        /// Over HTTP/2 a body of unknown length needs no chunked coding: DATA frames, the last
        /// with END_STREAM. (nginx reads it whole and hands httpbin a Content-Length.)
        @Test func fromAStreamOfUnknownLengthOverHTTP2() throws {
            let base = try Wire.h2.httpbinBaseURL()
            let harness = Wire.h2.harness()
            var request = Request(url: URL(string: base + "/post")!, method: .post)
            request.bodyStream = GeneratedBody.body(.init(produce: 150_000), declaredLength: nil, log: GeneratedBodyLog())
            let run = Run()
            let task = harness.manager.uploadTask(withStreamedRequest: request, progress: run.progress, completionHandler: run.completion)
            task.resume()
            let outcome = run.wait()
            #expect(outcome?.status == 200)
            #expect(try echoedData(outcome) == GeneratedBody.expected(150_000))
            #expect(task.countOfBytesSent == 150_000)
            #expect(task.networkProtocolName == "h2")
            harness.finish()
        }

        @Test func fromAStreamOfUnknownLengthGoesChunked() throws {
            let seen = UploadObservations()
            let server = try echoLengthServer(seen)
            let harness = ClientHarness()
            var request = Request(url: URL(string: "http://127.0.0.1:\(server.port)/up")!, method: .post)
            request.bodyStream = GeneratedBody.body(.init(produce: 150_000), declaredLength: nil, log: GeneratedBodyLog())
            let run = Run()
            let task = harness.manager.uploadTask(withStreamedRequest: request, progress: run.progress, completionHandler: run.completion)
            task.resume()
            #expect(run.wait()?.text == "same 150000")
            #expect(seen.head.withLock { $0 }?.header("Transfer-Encoding") == "chunked")
            #expect(task.countOfBytesSent == 150_000)
            #expect(task.countOfBytesExpectedToSend == -1)
            server.stop()
            harness.finish()
        }

        @Test func aStreamLongerOrShorterThanDeclaredFailsWithoutAnExtraByte() throws {
            for produce in [Int64(150_000), 60_000] {
                let seen = UploadObservations()
                let server = try ScriptedServer { connection in
                    _ = try connection.readRequestHead()
                    let received = try connection.readUntilClose(timeout: 10)
                    seen.bytes.withLock { $0 = received.count }
                }
                let harness = ClientHarness()
                var request = Request(url: URL(string: "http://127.0.0.1:\(server.port)/up")!, method: .post)
                request.bodyStream = GeneratedBody.body(.init(produce: produce), declaredLength: 100_000, log: GeneratedBodyLog())
                let run = Run()
                harness.manager.uploadTask(withStreamedRequest: request, completionHandler: run.completion).resume()
                let outcome = run.wait()
                #expect(outcome?.code == .bodyStreamFailed, "\(produce) bytes")
                #expect(waitUntil(timeout: 5) { seen.bytes.withLock { $0 } >= 0 })
                if produce > 100_000 {
                    #expect(seen.bytes.withLock { $0 } == 100_000)
                } else {
                    #expect(seen.bytes.withLock { $0 } <= 60_000)
                }
                server.stop()
                harness.finish()
            }
        }

        @Test func aMissingFileOrADirectoryFailsWithoutConnecting() throws {
            let server = try ScriptedServer { connection in _ = try connection.readRequest() }
            let harness = ClientHarness()
            let url = URL(string: "http://127.0.0.1:\(server.port)/up")!
            let cases: [(URL, NetworkingError.Code)] = [
                (URL(fileURLWithPath: "/nonexistent/\(UUID())"), .fileDoesNotExist),
                (FileManager.default.temporaryDirectory, .fileIsDirectory),
                (URL(fileURLWithPath: "/dev/null"), .cannotOpenFile),
                (URL(string: "http://example.com/file")!, .cannotOpenFile),
            ]
            for (file, code) in cases {
                let run = Run()
                let task = harness.manager.uploadTask(with: Request(url: url, method: .put), fromFile: file, completionHandler: run.completion)
                task.resume()
                let outcome = run.wait()
                #expect(outcome?.code == code, "\(file)")
                #expect(outcome?.calls == 1)
                #expect((outcome?.error as? NetworkingError)?.kind == .file)
                #expect((outcome?.error as? NetworkingError)?.failingURL == url)
                #expect(task.countOfBytesSent == 0)
            }
            usleep(100_000)
            #expect(server.acceptedCount == 0, "nothing may be sent for a file that cannot be read")
            server.stop()
            harness.finish()
        }

        /// A sparse 2 GiB file read from disk on the worker pool, a chunk at a time, while the
        /// process's resident memory is watched. (A scripted server rather than nginx: nginx
        /// answers a static location before reading the body, which ends the upload early.)
        @Test(.tags(.huge)) func aTwoGiBFileUploadsInBoundedMemory() throws {
            let size: Int64 = 2 << 30
            let file = try makeSparseFile("big.bin", size: size)
            defer { try? FileManager.default.removeItem(at: file) }

            let seen = UploadObservations()
            let server = try memoryWatchingSink(seen, reply: "stored")
            let harness = ClientHarness()
            let run = Run()
            let started = monotonicSeconds()
            let task = harness.manager.uploadTask(with: Request(url: URL(string: "http://127.0.0.1:\(server.port)/big")!, method: .put,
                                                                timeoutInterval: 300),
                                                  fromFile: file, progress: run.progress, completionHandler: run.completion)
            task.resume()
            let outcome = run.wait(300)
            let seconds = monotonicSeconds() - started
            #expect(outcome?.text == "stored")
            #expect(seen.head.withLock { $0 }?.header("Content-Length") == String(size))
            #expect(Int64(seen.bytes.withLock { $0 }) == size)
            #expect(task.countOfBytesSent == size)
            let growth = seen.peakResidentGrowth.withLock { $0 }
            print("2 GiB upload from a file: \(String(format: "%.1f", seconds)) s, peak resident growth \(growth >> 20) MiB")
            #expect(growth < 64 << 20, "resident memory grew by \(growth >> 20) MiB during a 2 GiB upload")
            #expect(waitUntil(timeout: 5) { run.lastFraction.withLock { $0 } == 1.0 })
            server.stop()
            harness.finish()
        }
    }
}
