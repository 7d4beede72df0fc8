import Dispatch
import Foundation
import HTTPTypes
import Synchronization
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// Request bodies read from streams: framing, bounded memory, length faults, progress,
    /// cancellation and early responses.
    @Suite(.tags(.nginx)) struct StreamedBodies {
        private func request(_ url: String, method: HTTPRequest.Method = .post, body: StreamedBody, timeout: TimeInterval = 30) -> Request {
            var request = Request(url: URL(string: url)!, method: method, timeoutInterval: timeout)
            request.bodyStream = body
            return request
        }

        /// httpbin's `data`: the body as text, or as a base64 data URL when it is not UTF-8.
        private func echoedData(_ outcome: Outcome) throws -> [UInt8] {
            let raw = try #require(outcome.data)
            let json = try #require(try JSONSerialization.jsonObject(with: raw) as? [String: Any])
            let data = try #require(json["data"] as? String)
            let prefix = "data:application/octet-stream;base64,"
            if data.hasPrefix(prefix) {
                let decoded = Data(base64Encoded: String(data.dropFirst(prefix.count)))
                return Array(try #require(decoded))
            }
            return Array(data.utf8)
        }

        private func echoedHeaders(_ outcome: Outcome) -> [String: String] {
            guard let data = outcome.data, let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return [:] }
            return json["headers"] as? [String: String] ?? [:]
        }

        @Test(arguments: Wire.allCases) func knownLengthBodyArrivesIntactAtHTTPBin(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            let log = GeneratedBodyLog()
            let outcome = harness.fetch(request(base + "/post",
                                                body: GeneratedBody.body(.init(produce: 200_000), declaredLength: 200_000, log: log)))
            #expect(outcome.status == 200)
            #expect(try echoedData(outcome) == GeneratedBody.expected(200_000))
            #expect(echoedHeaders(outcome)["Content-Length"] == "200000")
            #expect(log.readsOnLoop == 0)
            harness.finish()
        }

        /// httpbin's server (Werkzeug 2.2) answers a chunked request with 501 and closes at once,
        /// before reading the body: the early-response rule must deliver that answer, not the
        /// failed write. (The chunked framing itself is checked byte by byte below.)
        @Test func httpbinRefusesChunkedBodiesAndItsAnswerWins() throws {
            let httpbin = try TestServers.httpbin()
            let harness = ClientHarness()
            let log = GeneratedBodyLog()
            let outcome = harness.fetch(request(httpbin.baseURL + "/post",
                                                body: GeneratedBody.body(.init(produce: 1 << 30, fast: true), declaredLength: nil, log: log)))
            #expect(outcome.status == 501)
            #expect(outcome.error == nil)
            #expect(log.bytes < 64 << 20)
            harness.finish()
        }

        @Test func chunkedBodyArrivesIntactAtAServerThatReadsIt() throws {
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    ScriptedResponse.text(request.body == GeneratedBody.expected(200_000) ? "same" : "different \(request.body.count)")
                }
            }
            let harness = ClientHarness()
            let outcome = harness.fetch(request("http://127.0.0.1:\(server.port)/",
                                                body: GeneratedBody.body(.init(produce: 200_000), declaredLength: nil, log: GeneratedBodyLog())))
            #expect(outcome.text == "same")
            server.stop()
            harness.finish()
        }

        @Test func chunkFramingOnTheWire() throws {
            let count = 100_003
            let body = GeneratedBody.expected(count)
            let tail = count - 65_536
            let wire = Array("10000\r\n".utf8) + body[..<65_536] + Array("\r\n\(String(tail, radix: 16))\r\n".utf8)
                + body[65_536...] + Array("\r\n0\r\n\r\n".utf8)
            let seen = UploadObservations()
            let server = try ScriptedServer { connection in
                let head = try connection.readRequestHead()
                seen.head.withLock { $0 = head }
                let received = try connection.readBytes(wire.count)
                seen.bytes.withLock { $0 = received == wire ? received.count : -2 }
                try connection.write(ScriptedResponse.text("ok"))
                _ = connection.waitForPeerClose()
            }
            let harness = ClientHarness()
            let outcome = harness.fetch(request("http://127.0.0.1:\(server.port)/up",
                                                body: GeneratedBody.body(.init(produce: Int64(count)), declaredLength: nil, log: GeneratedBodyLog())))
            #expect(outcome.text == "ok")
            #expect(seen.bytes.withLock { $0 } == wire.count, "the chunked body on the wire differs")
            let head = seen.head.withLock { $0 }
            #expect(head?.header("Transfer-Encoding") == "chunked")
            #expect(head?.header("Content-Length") == nil)
            server.stop()
            harness.finish()
        }

        @Test func inputStreamBodyIsSent() throws {
            let data = Data(GeneratedBody.expected(150_000))
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    ScriptedResponse.text(request.body == Array(data) ? "same" : "different \(request.body.count)")
                }
            }
            let harness = ClientHarness()
            let body = StreamedBody(length: Int64(data.count), inputStream: { InputStream(data: data) })
            #expect(harness.fetch(request("http://127.0.0.1:\(server.port)/", method: .put, body: body)).text == "same")
            server.stop()
            harness.finish()
        }

        /// 256 MiB made up as it is read, uploaded while the process's resident memory is watched.
        @Test func aLargeBodyUploadsInBoundedMemory() throws {
            let size = 256 << 20
            let seen = UploadObservations()
            let server = try memoryWatchingSink(seen, reply: "received")
            let harness = ClientHarness()
            let log = GeneratedBodyLog()
            let body = GeneratedBody.body(.init(produce: Int64(size), fast: true, sampleMemoryEvery: 16), declaredLength: Int64(size), log: log)
            let (task, wait) = harness.makeTask(request("http://127.0.0.1:\(server.port)/big", body: body, timeout: 300))
            task.resume()
            let outcome = wait(300)
            #expect(outcome?.text == "received")
            #expect(outcome?.calls == 1)
            #expect(seen.bytes.withLock { $0 } == size)
            #expect(seen.head.withLock { $0 }?.header("Content-Length") == String(size))
            #expect(task.countOfBytesSent == Int64(size))
            let growth = max(log.peakResidentGrowth, seen.peakResidentGrowth.withLock { $0 })
            #expect(growth < 32 << 20, "resident memory grew by \(growth >> 20) MiB during the upload")
            #expect(log.readsOnLoop == 0)
            server.stop()
            harness.finish()
        }

        @Test func uploadProgressReachesTheFullLength() throws {
            // A server that reads every body before it answers (nginx answers a static location
            // at once and discards the body, which stops a streamed upload early).
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { request in ScriptedResponse.text("\(request.body.count)") }
            }
            let harness = ClientHarness()
            for declared in [Int64(1 << 20) + 5, nil] {
                let lastUpload = Mutex<Int64>(0)
                let calls = Mutex(0)
                let done = DispatchSemaphore(value: 0)
                let length = Int64(1 << 20) + 5
                let body = GeneratedBody.body(.init(produce: length), declaredLength: declared, log: GeneratedBodyLog())
                let task = harness.manager.dataTask(with: request("http://127.0.0.1:\(server.port)/", body: body), uploadProgress: { progress in
                    lastUpload.withLock { $0 = progress.completedUnitCount }
                    calls.withLock { $0 += 1 }
                }, completionHandler: { _, _, _ in done.signal() })
                task.resume()
                #expect(done.wait(timeout: .now() + 20) == .success)
                #expect(task.countOfBytesSent == length)
                #expect(task.countOfBytesExpectedToSend == declared ?? -1)
                #expect(task.uploadProgress.completedUnitCount == length)
                #expect(task.uploadProgress.totalUnitCount == declared ?? -1)
                #expect(waitUntil(timeout: 2) { lastUpload.withLock { $0 } == length })
                #expect(calls.withLock { $0 } >= 1)
                #expect(task.response?.status.code == 200)
            }
            server.stop()
            harness.finish()
        }

        /// A server that reads a head, then everything until the client closes.
        private func countingServer(_ seen: UploadObservations) throws -> ScriptedServer {
            try ScriptedServer { connection in
                let head = try connection.readRequestHead()
                seen.head.withLock { $0 = head }
                let received = try connection.readUntilClose(timeout: 10)
                seen.bytes.withLock { $0 = received.count }
            }
        }

        @Test func aStreamShorterThanDeclaredFailsAndNeverOversends() throws {
            let seen = UploadObservations()
            let server = try countingServer(seen)
            let harness = ClientHarness()
            let outcome = harness.fetch(request("http://127.0.0.1:\(server.port)/",
                                                body: GeneratedBody.body(.init(produce: 70_000), declaredLength: 100_000, log: GeneratedBodyLog())))
            #expect(outcome.code == .bodyStreamFailed)
            #expect((outcome.error as? NetworkingError)?.detail.contains("ended after 70000 of its declared 100000") == true)
            // The connection was closed: the server's read to EOF finished.
            #expect(waitUntil(timeout: 5) { seen.bytes.withLock { $0 } >= 0 })
            #expect(seen.bytes.withLock { $0 } <= 100_000)
            server.stop()
            harness.finish()
        }

        @Test func aStreamLongerThanDeclaredSendsExactlyTheDeclaredBytesAndCloses() throws {
            let seen = UploadObservations()
            let server = try countingServer(seen)
            let harness = ClientHarness()
            let log = GeneratedBodyLog()
            let outcome = harness.fetch(request("http://127.0.0.1:\(server.port)/",
                                                body: GeneratedBody.body(.init(produce: 150_000), declaredLength: 100_000, log: log)))
            #expect(outcome.code == .bodyStreamFailed)
            #expect((outcome.error as? NetworkingError)?.detail.contains("more than its declared 100000") == true)
            #expect(waitUntil(timeout: 5) { seen.bytes.withLock { $0 } >= 0 })
            #expect(seen.bytes.withLock { $0 } == 100_000)
            server.stop()
            harness.finish()
        }

        @Test func aThrowingStreamFailsWithTheUnderlyingError() throws {
            let seen = UploadObservations()
            let server = try countingServer(seen)
            let harness = ClientHarness()
            let outcome = harness.fetch(request("http://127.0.0.1:\(server.port)/",
                                                body: GeneratedBody.body(.init(produce: 200_000, throwAfter: 70_000), declaredLength: nil, log: GeneratedBodyLog())))
            let error = outcome.error as? NetworkingError
            #expect(error?.code == .bodyStreamFailed)
            #expect(error?.underlyingError is TestStreamError)
            #expect(error?.failingURL?.absoluteString == "http://127.0.0.1:\(server.port)/")
            #expect(waitUntil(timeout: 5) { seen.bytes.withLock { $0 } >= 0 })
            server.stop()
            harness.finish()
        }

        @Test func cancelMidUploadCompletesOnceAndStopsReading() throws {
            let server = try ScriptedServer { connection in
                _ = try connection.readRequestHead()
                try connection.discard(100_000)
                // Then read nothing more: the client's writes back up.
                connection.pause(20)
            }
            let harness = ClientHarness()
            let log = GeneratedBodyLog()
            let body = GeneratedBody.body(.init(produce: 1 << 30, fast: true), declaredLength: 1 << 30, log: log)
            let (task, wait) = harness.makeTask(request("http://127.0.0.1:\(server.port)/", body: body))
            task.resume()
            // Wait until the upload is stuck: sent something, and reads stopped moving.
            #expect(waitUntil(timeout: 10) { task.countOfBytesSent > 0 })
            var reads = -1
            #expect(waitUntil(timeout: 10) {
                let now = log.reads
                defer { reads = now }
                if now == reads { return true }
                usleep(100_000)
                return false
            })
            let readsAtCancel = log.reads
            task.cancel()
            let outcome = wait(10)
            #expect(outcome?.code == .cancelled)
            usleep(300_000)
            #expect(outcome?.calls == 1)
            #expect(log.reads <= readsAtCancel + 1)
            #expect(log.bytes < 64 << 20, "the body kept being read while the socket was full")
            #expect(log.streamsMade == 1)
            server.stop()
            harness.finish()
        }

        @Test func anEarlyResponseWinsAndTheBodyStops() throws {
            let server = try ScriptedServer { connection in
                _ = try connection.readRequestHead()
                try connection.write("HTTP/1.1 413 Payload Too Large\r\nContent-Length: 4\r\nConnection: close\r\n\r\nnope")
                // Drain until the client gives up, so the response is not lost to a reset.
                _ = connection.waitForPeerClose(timeout: 20)
            }
            let harness = ClientHarness()
            let log = GeneratedBodyLog()
            let body = GeneratedBody.body(.init(produce: 1 << 30, fast: true, slowRead: 0.01), declaredLength: 1 << 30, log: log)
            let outcome = harness.fetch(request("http://127.0.0.1:\(server.port)/", body: body))
            #expect(outcome.status == 413)
            #expect(outcome.text == "nope")
            #expect(outcome.error == nil)
            let readsAtEnd = log.reads
            usleep(200_000)
            #expect(log.reads <= readsAtEnd + 1)
            #expect(log.bytes < 64 << 20)
            server.stop()
            harness.finish()
        }

        /// An idempotent request whose reused connection turns out dead is sent again, with a new
        /// stream from the factory.
        @Test func aRetryMakesANewStream() throws {
            let server = try ScriptedServer { connection in
                if connection.index == 0 {
                    var request = try connection.readRequest()
                    try connection.write(ScriptedResponse.text("first"))
                    // The second request on this connection: give up on it unanswered.
                    request = try connection.readRequestHead()
                    _ = request
                    connection.close()
                } else {
                    try connection.serveKeepAlive { request in ScriptedResponse.text("got \(request.body.count)") }
                }
            }
            let harness = ClientHarness()
            let base = "http://127.0.0.1:\(server.port)/"
            #expect(harness.fetch(base).text == "first")
            let log = GeneratedBodyLog()
            let outcome = harness.fetch(request(base, method: .put,
                                                body: GeneratedBody.body(.init(produce: 1_000), declaredLength: 1_000, log: log)))
            #expect(outcome.text == "got 1000")
            #expect(log.streamsMade == 2)
            server.stop()
            harness.finish()
        }
    }
}
