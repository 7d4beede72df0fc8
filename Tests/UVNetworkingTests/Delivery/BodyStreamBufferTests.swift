import Foundation
import Testing
@testable import UVNetworking
import UVHTTP1

/// The buffer between the loop and a body stream's consumer, driven by hand (no socket).
@Suite(.tags(.loopback)) struct BodyStreamBufferTests {
    private let manager = SessionManager()

    private func makeBuffer() -> (BodyStreamBuffer, DataTask) {
        let task = manager.dataTask(with: Request(url: URL(string: "http://127.0.0.1:1/")!))
        return (BodyStreamBuffer(task: task), task)
    }

    private func chunk(_ size: Int) -> [UInt8] { [UInt8](repeating: 7, count: size) }

    @Test func pausesOneReadBelowTheHighWaterMarkAndResumesAtTheLowWaterMark() async throws {
        let (buffer, _) = makeBuffer()
        let read = BodyStreamBuffer.maximumReadSize
        let threshold = buffer.highWaterMark - read
        var pushed = 0
        while pushed + 16 * 1024 < threshold {
            #expect(!buffer.push(chunk(16 * 1024)), "paused at \(pushed) bytes, before the threshold")
            pushed += 16 * 1024
        }
        #expect(buffer.push(chunk(16 * 1024)), "not paused at \(pushed + 16 * 1024) bytes")
        pushed += 16 * 1024
        #expect(buffer.isProducerPaused)
        // The rest of the read that crossed the threshold still lands, under the high-water mark.
        #expect(buffer.push(chunk(read - 16 * 1024)))
        pushed += read - 16 * 1024
        #expect(buffer.bufferedByteCount == pushed && pushed < buffer.highWaterMark)
        #expect(buffer.pauseCount == 1)
        // Draining to the low-water mark lifts the pause, not before.
        while buffer.bufferedByteCount > buffer.lowWaterMark + 16 * 1024 {
            _ = try await buffer.next()
            #expect(buffer.isProducerPaused)
        }
        while buffer.bufferedByteCount > buffer.lowWaterMark { _ = try await buffer.next() }
        #expect(!buffer.isProducerPaused)
    }

    @Test func endsWithTheBufferedChunksThenTheErrorOnce() async throws {
        let (buffer, _) = makeBuffer()
        buffer.receivedHead(ResponseHead.testHead)
        _ = buffer.push([1, 2])
        _ = buffer.push([3])
        buffer.finish(error: NetworkingError(.truncatedResponse, "cut"))
        #expect(try await buffer.next() == [1, 2])
        #expect(try await buffer.next() == [3])
        await #expect(throws: NetworkingError.self) { try await buffer.next() }
        #expect(try await buffer.next() == nil)
        // A second finish (impossible from the runner) changes nothing.
        buffer.finish(error: nil)
        #expect(try await buffer.next() == nil)
    }

    @Test func aWaitingConsumerGetsTheChunkDirectly() async throws {
        let (buffer, _) = makeBuffer()
        buffer.receivedHead(ResponseHead.testHead)
        async let first = buffer.next()
        try await Task.sleep(for: .milliseconds(50))
        #expect(!buffer.push([9]))
        #expect(try await first == [9])
        #expect(buffer.bufferedByteCount == 0)
        buffer.finish(error: nil)
        #expect(try await buffer.next() == nil)
    }

    @Test func theConsumerStoppingDiscardsTheBufferAndCancelsTheTask() async throws {
        let (buffer, task) = makeBuffer()
        buffer.receivedHead(ResponseHead.testHead)
        _ = buffer.push(chunk(1000))
        buffer.cancelByConsumer()
        #expect(buffer.bufferedByteCount == 0)
        #expect(buffer.push([1]), "pushes after the consumer left must keep the loop paused")
        let error = await #expect(throws: NetworkingError.self) { try await buffer.next() }
        #expect(error?.code == .cancelled)
        #expect(waitUntil(timeout: 5) { task.state == .completed })
        #expect((task.error as? NetworkingError)?.code == .cancelled)
    }

    @Test func aFailureBeforeTheHeadIsThrownByHead() async throws {
        let (buffer, _) = makeBuffer()
        buffer.finish(error: NetworkingError(.connectionRefused, "refused"))
        let error = await #expect(throws: NetworkingError.self) { try await buffer.head() }
        #expect(error?.code == .connectionRefused)
    }

    @Test func onlyTheFirstIteratorReadsTheBody() async throws {
        let (buffer, _) = makeBuffer()
        buffer.receivedHead(ResponseHead.testHead)
        let stream = AsyncBodyStream(buffer)
        var first = stream.makeAsyncIterator()
        var second = stream.makeAsyncIterator()
        _ = buffer.push([5])
        buffer.finish(error: nil)
        #expect(try await second.next() == nil)
        #expect(try await first.next() == [5])
        #expect(try await first.next() == nil)
    }
}

extension ResponseHead {
    fileprivate static var testHead: ResponseHead {
        ResponseHead(versionMajor: 1, versionMinor: 1, status: 200, reason: "OK", headers: [], keepAlive: true)
    }
}
