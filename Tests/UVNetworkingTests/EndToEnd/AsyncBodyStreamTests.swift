import Foundation
import HTTPTypes
import Testing
@_spi(Testing) @testable import UVNetworking

/// Resident set size of this process, in bytes (/proc/self/statm, second field).
private func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

extension EndToEnd {
    /// bytes(for:): the head first, the body as it arrives, bounded by backpressure.
    @Suite(.tags(.nginx)) struct AsyncBodyStreaming {
        @Test func chunksConcatenateToTheBody() async throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            let (response, stream) = try await harness.manager.bytes(for: ClientHarness.request(nginx.baseURL + "/large-8m"))
            #expect(response.status.code == 200)
            var body: [UInt8] = []
            body.reserveCapacity(NginxServer.large8MSize)
            var chunks = 0
            for try await chunk in stream {
                body += chunk
                chunks += 1
            }
            #expect(body.count == NginxServer.large8MSize)
            #expect(body == NginxServer.largeBody(count: NginxServer.large8MSize))
            #expect(chunks > 1)
            #expect(harness.manager.tasks.isEmpty)
            // Iterated to the end: the connection went back to the pool and serves the next one.
            let (_, again) = try await harness.manager.bytes(for: ClientHarness.request(nginx.baseURL + "/chunked"))
            var text: [UInt8] = []
            for try await chunk in again { text += chunk }
            #expect(String(decoding: text, as: UTF8.self) == NginxServer.helloBody)
            #expect(harness.manager.openConnectionCount == 1)
            harness.finish()
        }

        @Test func slowConsumerKeepsBufferedBytesBounded() async throws {
            let nginx = try TestServers.nginx()
            // Task.sleep's first use opens the runtime's timer descriptor: before the baseline.
            try await Task.sleep(for: .milliseconds(1))
            let harness = ClientHarness()
            let residentBefore = residentBytes()
            let (_, stream) = try await harness.manager.bytes(for: ClientHarness.request(nginx.baseURL + "/large-8m"))
            var offset = 0
            var mismatches = 0
            var residentPeak = residentBefore
            var chunks = 0
            for try await chunk in stream {
                chunks += 1
                for byte in chunk {
                    if byte != UInt8(offset % 251) { mismatches += 1 }
                    offset += 1
                }
                residentPeak = max(residentPeak, residentBytes())
                // Slower than the loopback by far: the buffer fills and the loop must pause.
                if chunks % 4 == 0 { try await Task.sleep(for: .milliseconds(2)) }
            }
            #expect(offset == NginxServer.large8MSize)
            #expect(mismatches == 0)
            let peak = stream.buffer.peakBufferedByteCount
            #expect(peak < AsyncBodyStream.highWaterMark, "buffered \(peak) bytes")
            #expect(peak > AsyncBodyStream.lowWaterMark, "the consumer never fell behind: the test proves nothing")
            #expect(stream.buffer.pauseCount > 0, "the loop never paused reading")
            // Without backpressure the whole 8 MiB body would sit in the buffer.
            #expect(residentPeak - residentBefore < 4 << 20, "resident memory grew by \(residentPeak - residentBefore) bytes")
            harness.finish()
        }

        @Test func breakingOutEarlyCancelsTheRequestAndFreesTheConnection() async throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            let (_, stream) = try await harness.manager.bytes(for: ClientHarness.request(nginx.baseURL + "/large-8m"))
            let task = try #require(harness.manager.tasks.first)
            var received = 0
            for try await chunk in stream {
                received += chunk.count
                break
            }
            #expect(received > 0)
            #expect(waitUntil(timeout: 5) { task.state == .completed })
            #expect((task.error as? NetworkingError)?.code == .cancelled)
            #expect(task.countOfBytesReceived < Int64(NginxServer.large8MSize), "the whole body was read anyway")
            #expect(waitUntil(timeout: 5) { harness.manager.openConnectionCount == 0 })
            harness.finish()
        }

        @Test func droppingTheStreamUnreadCancelsTheRequest() async throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            _ = try await harness.manager.bytes(for: ClientHarness.request(nginx.baseURL + "/large-8m"))
            #expect(waitUntil(timeout: 5) { harness.manager.tasks.isEmpty })
            #expect(waitUntil(timeout: 5) { harness.manager.openConnectionCount == 0 })
            harness.finish()
        }

        @Test(arguments: Wire.allCases) func theHeadArrivesBeforeTheBody(_ wire: Wire) async throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            let started = monotonicSeconds()
            let (response, stream) = try await harness.manager.bytes(
                for: ClientHarness.request(base + "/drip?duration=2&numbytes=4&delay=0"))
            let headAt = monotonicSeconds() - started
            #expect(response.status.code == 200)
            #expect(headAt < 1, "the head waited for the body (\(headAt) s)")
            var body: [UInt8] = []
            for try await chunk in stream { body += chunk }
            #expect(body == Array("****".utf8))
            #expect(monotonicSeconds() - started > 1)
            harness.finish()
        }

        @Test(arguments: Wire.allCases) func cancellingTheConsumerTaskThrowsCancelled(_ wire: Wire) async throws {
            let base = try wire.httpbinBaseURL()
            try await Task.sleep(for: .milliseconds(1))  // the runtime's timer descriptor, before the baseline
            let harness = wire.harness()
            let (_, stream) = try await harness.manager.bytes(
                for: ClientHarness.request(base + "/drip?duration=5&numbytes=5&delay=0"))
            let consumer = Task {
                var count = 0
                for try await chunk in stream { count += chunk.count }
                return count
            }
            try await Task.sleep(for: .milliseconds(300))
            consumer.cancel()
            let error = try #require(await consumer.result.failure as? NetworkingError)
            #expect(error.code == .cancelled)
            #expect(waitUntil(timeout: 5) { harness.manager.tasks.isEmpty })
            harness.finish()
        }

        @Test func anErrorMidBodyIsThrownFromNext() async throws {
            let server = try ScriptedServer { connection in
                _ = try connection.readRequest()
                try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this")
                connection.pause(0.1)
                connection.close()
            }
            let harness = ClientHarness()
            let (response, stream) = try await harness.manager.bytes(for: ClientHarness.request("http://127.0.0.1:\(server.port)/"))
            #expect(response.status.code == 200)
            var body: [UInt8] = []
            let error = await #expect(throws: NetworkingError.self) {
                for try await chunk in stream { body += chunk }
            }
            #expect(error?.code == .truncatedResponse)
            #expect(String(decoding: body, as: UTF8.self) == "only this")
            server.stop()
            harness.finish()
        }

        @Test func aFailureBeforeTheHeadIsThrownByBytes() async throws {
            let harness = ClientHarness()
            let error = await #expect(throws: NetworkingError.self) {
                try await harness.manager.bytes(for: ClientHarness.request("http://127.0.0.1:1/"))
            }
            #expect(error?.code == .connectionRefused)
            harness.finish()
        }
    }
}
