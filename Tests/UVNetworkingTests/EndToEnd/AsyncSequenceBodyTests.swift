import Dispatch
import Foundation
import HTTPTypes
import LoopbackHTTPServer
import Synchronization
import Testing
@_spi(Testing) @testable import UVNetworking

extension EndToEnd {
    /// Request bodies from an AsyncSequence: framing, backpressure and its bound, length faults,
    /// producer errors, cancellation, timeouts and replay.
    @Suite(.tags(.nginx)) struct AsyncSequenceBodies {
        private func request(_ url: String, method: HTTPRequest.Method = .post, body: StreamedBody, timeout: TimeInterval = 30) -> Request {
            var request = Request(url: URL(string: url)!, method: method, timeoutInterval: timeout)
            request.bodyStream = body
            return request
        }

        /// httpbin's echo of the body (`data`, text or a base64 data URL) and of the headers.
        private func echoed(_ data: Data?) throws -> (body: [UInt8], headers: [String: String]) {
            let raw = try #require(data)
            let json = try #require(try JSONSerialization.jsonObject(with: raw) as? [String: Any])
            let text = try #require(json["data"] as? String)
            let headers = json["headers"] as? [String: String] ?? [:]
            let prefix = "data:application/octet-stream;base64,"
            guard text.hasPrefix(prefix) else { return (Array(text.utf8), headers) }
            return (Array(try #require(Data(base64Encoded: String(text.dropFirst(prefix.count))))), headers)
        }

        @Test(arguments: Wire.allCases) func knownLengthBodyArrivesIntactAtHTTPBin(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            let log = GeneratedBytesLog()
            let body = GeneratedBytes.body(.init(produce: 300_000, elementSize: 7_001), declaredLength: 300_000, log: log)
            let outcome = harness.fetch(request(base + "/post", body: body))
            #expect(outcome.status == 200)
            let echo = try echoed(outcome.data)
            #expect(echo.body == GeneratedBody.expected(300_000))
            #expect(echo.headers["Content-Length"] == "300000")
            #expect(log.sequencesMade == 1)
            #expect(log.nextCallsOnLoop == 0)
            harness.finish()
        }

        /// The completion-handler upload API, with `Data` elements from a mapped sequence.
        @Test(arguments: Wire.allCases) func uploadTaskWithStreamedRequestSendsDataElements(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            let log = GeneratedBytesLog()
            let body = StreamedBody(length: 50_000) { GeneratedBytes(.init(produce: 50_000, elementSize: 999), log: log).map { Data($0) } }
            let done = DispatchSemaphore(value: 0)
            let result = Mutex<(Data?, (any Error)?)>((nil, nil))
            let task = harness.manager.uploadTask(withStreamedRequest: request(base + "/post", body: body), completionHandler: { _, object, error in
                result.withLock { $0 = (object as? Data, error) }
                done.signal()
            })
            task.resume()
            #expect(done.wait(timeout: .now() + 30) == .success)
            let (data, error) = result.withLock { $0 }
            #expect(error == nil)
            #expect(try echoed(data).body == GeneratedBody.expected(50_000))
            #expect(task.countOfBytesSent == 50_000)
            harness.finish()
        }

        /// async/await: `upload(for:body:)` with a one-shot sequence.
        @Test func asyncUploadWithAOneShotSequence() async throws {
            let httpbin = try TestServers.httpbin()
            let harness = ClientHarness()
            let log = GeneratedBytesLog()
            let sequence = GeneratedBytes(.init(produce: 20_000, elementSize: 3_000), log: log)
            let response = try await harness.manager.upload(for: Request(url: URL(string: httpbin.baseURL + "/put")!, method: .put),
                                                            body: StreamedBody(length: nil, oneShot: sequence))
            // httpbin refuses chunked request bodies (501); a known length is echoed.
            #expect(response.response.status.code == 501)
            let counted = try await harness.manager.upload(
                for: Request(url: URL(string: httpbin.baseURL + "/put")!, method: .put),
                body: StreamedBody(length: 20_000, oneShot: GeneratedBytes(.init(produce: 20_000, elementSize: 3_000), log: log)))
            #expect(counted.response.status.code == 200)
            #expect(try echoed(counted.data).body == GeneratedBody.expected(20_000))
            harness.finish()
        }

        /// Tens of MiB made up as they are iterated, to LoopbackHTTPServer (which reads and drops
        /// request bodies), with Content-Length and chunked: the pump never holds more than its
        /// bound (the limit, plus the element that crossed it).
        @Test(arguments: [true, false]) func aLargeBodyIsSentWithBoundedBuffering(knownLength: Bool) throws {
            let server = LoopbackHTTPServer()
            let port = try server.start()
            let harness = ClientHarness()
            let size: Int64 = 48 << 20
            let elementSize = 16_384
            let limit = 128 * 1024
            let log = GeneratedBytesLog()
            let gauge = AsyncBodyGauge()
            let body = GeneratedBytes.body(.init(produce: size, elementSize: elementSize, fast: true),
                                           declaredLength: knownLength ? size : nil, log: log, bufferLimit: limit, gauge: gauge)
            let (task, wait) = harness.makeTask(request("http://127.0.0.1:\(port)/items/1", body: body, timeout: 120))
            task.resume()
            let outcome = wait(120)
            #expect(outcome?.status == 200)
            #expect(task.countOfBytesSent == size)
            #expect(log.bytes == size)
            #expect(gauge.maxBuffered <= limit + elementSize - 1, "the pump held \(gauge.maxBuffered) bytes")
            #expect(gauge.maxBuffered >= limit, "the producer was never ahead: the bound was not exercised")
            #expect(log.nextCallsOnLoop == 0)
            harness.finish()
            server.stop()
        }

        /// A server that stops reading after the head: the producer stops too, at most the bound
        /// (plus what the connection and the socket hold) ahead of what was written.
        @Test func aSlowServerMakesTheProducerWait() throws {
            let release = DispatchSemaphore(value: 0)
            let seen = UploadObservations()
            let server = try ScriptedServer { connection in
                let head = try connection.readRequestHead()
                seen.head.withLock { $0 = head }
                _ = release.wait(timeout: .now() + 20)
                try connection.discard(Int(head.header("Content-Length") ?? "") ?? 0, timeout: 30)
                try connection.write(ScriptedResponse.text("read"))
                _ = connection.waitForPeerClose()
            }
            let harness = ClientHarness()
            let size: Int64 = 32 << 20
            let elementSize = 10_000
            let limit = 64 * 1024
            let log = GeneratedBytesLog()
            let gauge = AsyncBodyGauge()
            let body = GeneratedBytes.body(.init(produce: size, elementSize: elementSize, fast: true), declaredLength: size, log: log,
                                           bufferLimit: limit, gauge: gauge)
            let (task, wait) = harness.makeTask(request("http://127.0.0.1:\(server.port)/", body: body, timeout: 60))
            task.resume()
            // Wait until the producer is stuck: it yielded something, and then stopped.
            var last: Int64 = -1
            #expect(waitUntil(timeout: 20) {
                let now = log.bytes
                defer { last = now }
                if now > 0 && now == last { return true }
                usleep(300_000)
                return false
            })
            let produced = log.bytes
            let nextCalls = log.nextCalls
            usleep(300_000)
            #expect(log.nextCalls == nextCalls, "next() was called while the buffer was full")
            #expect(produced < size / 2, "the producer ran ahead of a server that reads nothing")
            // Ahead of what was written to the socket by at most the pump's bound, plus the chunk
            // being written and the one ready after it.
            let ahead = produced - task.countOfBytesSent
            #expect(ahead <= Int64(limit + elementSize - 1 + 2 * RequestBodyReader.chunkSize), "the producer is \(ahead) bytes ahead")
            release.signal()
            let outcome = wait(60)
            #expect(outcome?.text == "read")
            #expect(log.bytes == size)
            #expect(gauge.maxBuffered <= limit + elementSize - 1)
            server.stop()
            harness.finish()
        }

        @Test func aThrowingSequenceFailsTheTaskWithItsError() throws {
            let seen = UploadObservations()
            let server = try countingServer(seen)
            let harness = ClientHarness()
            let log = GeneratedBytesLog()
            let outcome = harness.fetch(request("http://127.0.0.1:\(server.port)/",
                                                body: GeneratedBytes.body(.init(produce: 200_000, throwAfter: 70_000), declaredLength: nil, log: log)))
            let error = outcome.error as? NetworkingError
            #expect(error?.code == .bodyStreamFailed)
            #expect(error?.underlyingError is TestStreamError)
            #expect(error?.detail.contains("failed after 70000 bytes") == true)
            #expect(waitUntil(timeout: 5) { log.iterationsEnded == 1 })
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

        @Test func aSequenceShorterThanDeclaredFails() throws {
            let seen = UploadObservations()
            let server = try countingServer(seen)
            let harness = ClientHarness()
            let outcome = harness.fetch(request("http://127.0.0.1:\(server.port)/",
                                                body: GeneratedBytes.body(.init(produce: 70_000), declaredLength: 100_000, log: GeneratedBytesLog())))
            #expect(outcome.code == .bodyStreamFailed)
            #expect((outcome.error as? NetworkingError)?.detail.contains("ended after 70000 of its declared 100000") == true)
            #expect(waitUntil(timeout: 5) { seen.bytes.withLock { $0 } >= 0 })
            #expect(seen.bytes.withLock { $0 } < 100_000)
            server.stop()
            harness.finish()
        }

        @Test func aSequenceLongerThanDeclaredSendsExactlyTheDeclaredBytesAndFails() throws {
            let seen = UploadObservations()
            let server = try countingServer(seen)
            let harness = ClientHarness()
            let log = GeneratedBytesLog()
            let outcome = harness.fetch(request("http://127.0.0.1:\(server.port)/",
                                                body: GeneratedBytes.body(.init(produce: 1 << 30, elementSize: 10_000), declaredLength: 100_000, log: log)))
            #expect(outcome.code == .bodyStreamFailed)
            #expect((outcome.error as? NetworkingError)?.detail.contains("more than its declared 100000") == true)
            #expect(waitUntil(timeout: 5) { seen.bytes.withLock { $0 } >= 0 })
            #expect(seen.bytes.withLock { $0 } == 100_000)
            // Iteration stops at the first element past the length.
            #expect(log.bytes <= 110_000)
            #expect(waitUntil(timeout: 5) { log.iterationsEnded == 1 })
            server.stop()
            harness.finish()
        }

        /// Cancelled while the sequence has nothing to give (its `next()` is suspended): the task
        /// completes once, cancelled, and the iteration ends.
        @Test func cancelMidUploadEndsTheIteration() throws {
            let server = try ScriptedServer { connection in
                _ = try connection.readRequestHead()
                _ = try? connection.readUntilClose(timeout: 10)
            }
            let harness = ClientHarness()
            let log = GeneratedBytesLog()
            let body = GeneratedBytes.body(.init(produce: 1 << 30, hangAfter: 100_000), declaredLength: nil, log: log)
            let (task, wait) = harness.makeTask(request("http://127.0.0.1:\(server.port)/", body: body))
            task.resume()
            #expect(waitUntil(timeout: 10) { task.countOfBytesSent == 100_000 })
            task.cancel()
            let outcome = wait(10)
            #expect(outcome?.code == .cancelled)
            #expect(waitUntil(timeout: 5) { log.cancelledInNext == 1 && log.iterationsEnded == 1 })
            usleep(200_000)
            #expect(outcome?.calls == 1)
            server.stop()
            harness.finish()
        }

        /// async/await: cancelling the Swift task that awaits `upload(for:body:)` cancels the
        /// request, which ends the sequence's iteration.
        @Test func cancellingTheAwaitingTaskEndsTheIteration() async throws {
            let server = try ScriptedServer { connection in
                _ = try connection.readRequestHead()
                _ = try? connection.readUntilClose(timeout: 10)
            }
            let harness = ClientHarness()
            let log = GeneratedBytesLog()
            let body = GeneratedBytes.body(.init(produce: 1 << 30, hangAfter: 50_000), declaredLength: nil, log: log)
            let manager = harness.manager
            let upload = Task {
                try await manager.upload(for: Request(url: URL(string: "http://127.0.0.1:\(server.port)/")!, method: .post), body: body)
            }
            #expect(waitUntil(timeout: 10) { log.bytes == 50_000 })
            upload.cancel()
            var thrown: (any Error)?
            do { _ = try await upload.value } catch { thrown = error }
            #expect((thrown as? NetworkingError)?.code == .cancelled)
            #expect(waitUntil(timeout: 5) { log.cancelledInNext == 1 && log.iterationsEnded == 1 })
            server.stop()
            harness.finish()
        }

        /// Cancelled while the producer waits for room (the server reads nothing): the producer's
        /// wait ends and so does its iteration.
        @Test func cancelWhileTheProducerWaitsForRoomEndsTheIteration() throws {
            let server = try ScriptedServer { connection in
                _ = try connection.readRequestHead()
                connection.pause(20)
            }
            let harness = ClientHarness()
            let log = GeneratedBytesLog()
            let body = GeneratedBytes.body(.init(produce: 1 << 30, fast: true), declaredLength: 1 << 30, log: log, bufferLimit: 32_768)
            let (task, wait) = harness.makeTask(request("http://127.0.0.1:\(server.port)/", body: body))
            task.resume()
            var last: Int64 = -1
            #expect(waitUntil(timeout: 20) {
                let now = log.bytes
                defer { last = now }
                if now > 0 && now == last { return true }
                usleep(200_000)
                return false
            })
            task.cancel()
            #expect(wait(10)?.code == .cancelled)
            #expect(waitUntil(timeout: 5) { log.iterationsEnded == 1 })
            server.stop()
            harness.finish()
        }

        /// The loop shuts down mid-upload, with the producer inside the sequence's `next()`
        /// (hangs) or waiting for room (the server reads nothing): the task ends with
        /// `loopShutDown`, once, and the iteration ends; nothing waits on the dead loop.
        @Test(arguments: [true, false]) func aLoopShutdownMidUploadEndsTheTaskAndTheIteration(producerHangs: Bool) async throws {
            let server = try ScriptedServer { connection in
                _ = try connection.readRequestHead()
                if producerHangs { _ = try? connection.readUntilClose(timeout: 10) } else { connection.pause(10) }
            }
            defer { server.stop() }
            let loop = try EventLoop(name: "test.asyncbody.shutdown")
            let manager = SessionManager(loop: loop)
            manager.completionQueue = DispatchQueue(label: "test.asyncbody.shutdown.completions")
            let log = GeneratedBytesLog()
            let spec: GeneratedBytes.Spec = producerHangs
                ? .init(produce: 1 << 30, hangAfter: 100_000) : .init(produce: 1 << 30, fast: true)
            let body = GeneratedBytes.body(spec, declaredLength: nil, log: log, bufferLimit: 32_768)
            let ended = Mutex<[NetworkingError.Code?]>([])
            let done = DispatchSemaphore(value: 0)
            manager.dataTask(with: request("http://127.0.0.1:\(server.port)/", body: body), completionHandler: { _, _, error in
                ended.withLock { $0.append((error as? NetworkingError)?.code) }
                done.signal()
            }).resume()
            var last: Int64 = -1
            #expect(waitUntil(timeout: 20) {
                let now = log.bytes
                defer { last = now }
                if now >= 32_768 && now == last { return true }
                usleep(100_000)
                return false
            })
            await loop.shutdown()
            #expect(done.wait(timeout: .now() + 5) == .success)
            #expect(waitUntil(timeout: 5) { log.iterationsEnded == 1 })
            try await Task.sleep(nanoseconds: 100_000_000)
            #expect(ended.withLock { $0 } == [.loopShutDown])
            #expect(manager.openConnectionCount == 0)
        }

        /// A server that answers before reading the body: its answer is the task's, and the
        /// iteration stops.
        @Test func anEarlyResponseWinsAndTheIterationStops() throws {
            let server = try ScriptedServer { connection in
                _ = try connection.readRequestHead()
                try connection.write("HTTP/1.1 413 Payload Too Large\r\nContent-Length: 4\r\nConnection: close\r\n\r\nnope")
                _ = connection.waitForPeerClose(timeout: 20)
            }
            let harness = ClientHarness()
            let log = GeneratedBytesLog()
            let size: Int64 = 1 << 30
            let outcome = harness.fetch(request("http://127.0.0.1:\(server.port)/",
                                                body: GeneratedBytes.body(.init(produce: size, fast: true), declaredLength: size, log: log)))
            #expect(outcome.status == 413)
            #expect(outcome.text == "nope")
            #expect(outcome.error == nil)
            #expect(waitUntil(timeout: 5) { log.iterationsEnded == 1 })
            #expect(log.bytes < 64 << 20)
            server.stop()
            harness.finish()
        }

        /// nginx answers a `return` location at once and discards the body: either way (the body
        /// sent whole, or cut short by the answer) the task gets the answer and the iteration ends.
        @Test(arguments: [true, false]) func nginxAnswersWhateverItDoesWithTheBody(knownLength: Bool) throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            let log = GeneratedBytesLog()
            let size: Int64 = 8 << 20
            let body = GeneratedBytes.body(.init(produce: size, fast: true), declaredLength: knownLength ? size : nil, log: log)
            let outcome = harness.fetch(request(nginx.baseURL + "/hello", body: body))
            #expect(outcome.status == 200)
            #expect(outcome.text == NginxServer.helloBody)
            #expect(waitUntil(timeout: 5) { log.iterationsEnded == 1 })
            harness.finish()
        }

        /// `Expect: 100-continue` answered with a final response: the body is never sent, and its
        /// sequence is never even made (the producer starts at the first chunk asked for).
        @Test func aRefusedExpectContinueNeverMakesTheSequence() throws {
            let server = try ScriptedServer { connection in
                _ = try connection.readRequestHead()
                try connection.write("HTTP/1.1 417 Expectation Failed\r\nContent-Length: 2\r\n\r\nno")
                _ = try? connection.readUntilClose(timeout: 5)
            }
            let harness = ClientHarness()
            let log = GeneratedBytesLog()
            var request = request("http://127.0.0.1:\(server.port)/",
                                  body: StreamedBody(length: 1_000) { GeneratedBytes(.init(produce: 1_000), log: log) })
            request.setValue("100-continue", forHTTPHeaderField: "Expect")
            let outcome = harness.fetch(request)
            #expect(outcome.status == 417)
            #expect(log.sequencesMade == 0)
            server.stop()
            harness.finish()
        }

        /// Expect: 100-continue answered with 100: the sequence is made only then, and the body
        /// flows in full.
        @Test func anAcceptedExpectContinueMakesTheSequenceOnlyAfterThe100() throws {
            let log = GeneratedBytesLog()
            let madeBefore100 = Mutex(-1)
            let server = try ScriptedServer { connection in
                let head = try connection.readRequestHead()
                connection.pause(0.3)
                madeBefore100.withLock { $0 = log.sequencesMade }
                try connection.write("HTTP/1.1 100 Continue\r\n\r\n")
                let body = try connection.readRequestBody(of: head)
                let same = body == GeneratedBody.expected(body.count) ? "same" : "different"
                try connection.write(ScriptedResponse.text("\(body.count) \(same)"))
                _ = connection.waitForPeerClose()
            }
            let harness = ClientHarness()
            var request = request("http://127.0.0.1:\(server.port)/",
                                  body: StreamedBody(length: 150_000, bufferLimit: 20_000) {
                                      GeneratedBytes(.init(produce: 150_000, elementSize: 7_000), log: log)
                                  })
            request.setValue("100-continue", forHTTPHeaderField: "Expect")
            let outcome = harness.fetch(request)
            #expect(outcome.text == "150000 same")
            #expect(madeBefore100.withLock { $0 } == 0, "the sequence was made before the 100")
            #expect(log.sequencesMade == 1)
            server.stop()
            harness.finish()
        }

        /// A sequence that never yields again does not hold the task: the inactivity timeout ends
        /// it, and the iteration with it.
        @Test func aProducerThatNeverFinishesIsEndedByTheTimeout() throws {
            let server = try ScriptedServer { connection in
                _ = try connection.readRequestHead()
                _ = try? connection.readUntilClose(timeout: 10)
            }
            let harness = ClientHarness()
            let log = GeneratedBytesLog()
            let body = GeneratedBytes.body(.init(produce: 1 << 20, hangAfter: 1_000), declaredLength: 1 << 20, log: log)
            let outcome = harness.fetch(request("http://127.0.0.1:\(server.port)/", body: body, timeout: 0.5))
            #expect(outcome.code == .requestTimeout)
            #expect(waitUntil(timeout: 5) { log.cancelledInNext == 1 && log.iterationsEnded == 1 })
            server.stop()
            harness.finish()
        }

        /// An idempotent request whose reused connection turns out dead is sent again, from a new
        /// sequence the factory makes.
        @Test func aRetryIteratesANewSequence() throws {
            let server = try deadSecondRequestServer()
            let harness = ClientHarness()
            let base = "http://127.0.0.1:\(server.port)/"
            #expect(harness.fetch(base).text == "first")
            let log = GeneratedBytesLog()
            let outcome = harness.fetch(request(base, method: .put,
                                                body: GeneratedBytes.body(.init(produce: 1_000, elementSize: 300), declaredLength: 1_000, log: log)))
            #expect(outcome.text == "got 1000")
            #expect(log.sequencesMade == 2)
            server.stop()
            harness.finish()
        }

        /// The same with a one-shot sequence: the retry cannot send it again, and says so.
        @Test func aRetryOfAOneShotSequenceFailsClearly() throws {
            let server = try deadSecondRequestServer()
            let harness = ClientHarness()
            let base = "http://127.0.0.1:\(server.port)/"
            #expect(harness.fetch(base).text == "first")
            let log = GeneratedBytesLog()
            let sequence = GeneratedBytes(.init(produce: 1_000, elementSize: 300), log: log)
            let outcome = harness.fetch(request(base, method: .put, body: StreamedBody(length: 1_000, oneShot: sequence)))
            #expect(outcome.code == .bodyStreamFailed)
            #expect((outcome.error as? NetworkingError)?.detail.contains("cannot be replayed") == true)
            server.stop()
            harness.finish()
        }

        /// Answers the first request on the first connection, then drops the second unanswered;
        /// later connections answer with the body's size.
        private func deadSecondRequestServer() throws -> ScriptedServer {
            try ScriptedServer { connection in
                if connection.index == 0 {
                    _ = try connection.readRequest()
                    try connection.write(ScriptedResponse.text("first"))
                    let second = try connection.readRequestHead()
                    _ = second
                    connection.close()
                } else {
                    try connection.serveKeepAlive { request in ScriptedResponse.text("got \(request.body.count)") }
                }
            }
        }

        @Test(arguments: Wire.allCases) func a307SendsAFactoryBodyAgainAndFailsAOneShotOneClearly(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            let url = base + "/redirect-to?url=/post&status_code=307"
            let log = GeneratedBytesLog()
            let replayable = harness.fetch(request(url, body: GeneratedBytes.body(.init(produce: 5_000, elementSize: 999), declaredLength: 5_000, log: log)))
            #expect(replayable.status == 200)
            #expect(try echoed(replayable.data).body == GeneratedBody.expected(5_000))
            #expect(log.sequencesMade == 2)

            let oneShotLog = GeneratedBytesLog()
            let sequence = GeneratedBytes(.init(produce: 5_000, elementSize: 999), log: oneShotLog)
            let oneShot = harness.fetch(request(url, body: StreamedBody(length: 5_000, oneShot: sequence)))
            let error = oneShot.error as? NetworkingError
            #expect(error?.code == .bodyStreamFailed)
            #expect(error?.detail.contains("cannot be replayed") == true, "\(error?.detail ?? "no error")")
            #expect(oneShotLog.iterationsEnded == 1, "the one sequence was iterated once")
            harness.finish()
        }

        /// A small bufferLimit (below a chunk) and a Content-Length body whose last element
        /// brings the whole rest in: the last chunk waits for the end, which the producer must
        /// still look for (it hung until the timeout).
        @Test func aSmallBufferLimitStillEndsAKnownLengthBody() throws {
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    let same = request.body == GeneratedBody.expected(request.body.count) ? "same" : "different"
                    return ScriptedResponse.text("\(request.body.count) \(same)")
                }
            }
            let harness = ClientHarness()
            let log = GeneratedBytesLog()
            let body = StreamedBody(length: 98_304, bufferLimit: 16_384) {
                GeneratedBytes(.init(produce: 98_304, elementSize: 32_768), log: log)
            }
            let outcome = harness.fetch(request("http://127.0.0.1:\(server.port)/", body: body, timeout: 5))
            #expect(outcome.error == nil, "\(outcome.error.map { "\($0)" } ?? "")")
            #expect(outcome.text == "98304 same")
            #expect(log.sequencesMade == 1)
            server.stop()
            harness.finish()
        }

        /// A 303 turns the request into a GET without a body: the sequence is made for the POST
        /// only, never for the GET that follows.
        @Test(arguments: Wire.allCases) func a303DropsTheBodyAndNeverMakesTheSequenceAgain(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            let log = GeneratedBytesLog()
            let body = GeneratedBytes.body(.init(produce: 5_000, elementSize: 999), declaredLength: 5_000, log: log)
            let outcome = harness.fetch(request(base + "/redirect-to?url=/get&status_code=303", body: body))
            #expect(outcome.status == 200)
            #expect(outcome.text?.contains("\"/get\"") == true || outcome.text?.contains("/get") == true)
            #expect(log.sequencesMade <= 1, "the GET after the 303 made the sequence again")
            #expect(waitUntil(timeout: 5) { log.iterationsEnded == log.sequencesMade })
            harness.finish()
        }

        @Test func emptySequences() throws {
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    ScriptedResponse.text("\(request.body.count) \(request.header("Content-Length") ?? "-") \(request.header("Transfer-Encoding") ?? "-")")
                }
            }
            let harness = ClientHarness()
            let url = "http://127.0.0.1:\(server.port)/"
            let empty = GeneratedBytes.Spec(produce: 0)
            #expect(harness.fetch(request(url, body: GeneratedBytes.body(empty, declaredLength: 0, log: GeneratedBytesLog()))).text == "0 0 -")
            #expect(harness.fetch(request(url, body: GeneratedBytes.body(empty, declaredLength: nil, log: GeneratedBytesLog()))).text == "0 - chunked")
            let none = StreamedBody(length: nil, oneShot: AsyncStream<[UInt8]> { $0.finish() })
            #expect(harness.fetch(request(url, body: none)).text == "0 - chunked")
            server.stop()
            harness.finish()
        }

        /// Chunked without a length, Content-Length with one; the bytes arrive intact either way.
        @Test func framingOnTheWire() throws {
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    let same = request.body == GeneratedBody.expected(request.body.count) ? "same" : "different"
                    return ScriptedResponse.text("\(request.body.count) \(same) \(request.header("Content-Length") ?? "-") \(request.header("Transfer-Encoding") ?? "-")")
                }
            }
            let harness = ClientHarness()
            let url = "http://127.0.0.1:\(server.port)/"
            let spec = GeneratedBytes.Spec(produce: 200_003, elementSize: 4_099)
            #expect(harness.fetch(request(url, body: GeneratedBytes.body(spec, declaredLength: nil, log: GeneratedBytesLog()))).text
                    == "200003 same - chunked")
            #expect(harness.fetch(request(url, body: GeneratedBytes.body(spec, declaredLength: 200_003, log: GeneratedBytesLog()))).text
                    == "200003 same 200003 -")
            server.stop()
            harness.finish()
        }
    }
}
