import Dispatch
import Foundation
import Synchronization
import Testing
@testable import UVNetworking

/// The task side of an async body, driven directly (no loop, no socket): when the sequence is
/// made, how far the producer runs ahead of a slow taker, and what a second one-shot attempt gets.
@Suite struct AsyncBodyPumpTests {
    /// Takes chunks one at a time, waiting for each, until the last one or a failure.
    private func drain(_ pump: AsyncBodyPump, max: Int = 64 * 1024, pause: useconds_t = 0) -> (bodyBytes: Int, failure: NetworkingError?) {
        var total = 0
        while true {
            let next = Mutex<RequestBodyReader.Chunk?>(nil)
            let arrived = DispatchSemaphore(value: 0)
            pump.requestChunk(max: max) { chunk in
                next.withLock { $0 = chunk }
                arrived.signal()
            }
            guard arrived.wait(timeout: .now() + 10) == .success, let chunk = next.withLock({ $0 }) else {
                Issue.record("no chunk came")
                return (total, nil)
            }
            switch chunk {
            case .data(_, let bodyCount, let isLast, _):
                total += bodyCount
                if isLast { return (total, nil) }
            case .failed(let error):
                return (total, NetworkingError(error))
            }
            if pause > 0 { usleep(pause) }
        }
    }

    @Test func theSequenceIsMadeOnlyWhenTheFirstChunkIsAskedFor() {
        let log = GeneratedBytesLog()
        let body = GeneratedBytes.body(.init(produce: 10), declaredLength: 10, log: log)
        let untouched = AsyncBodyPump(origin: body.asyncOrigin!, length: 10)
        untouched.cancel()
        let used = AsyncBodyPump(origin: body.asyncOrigin!, length: 10)
        #expect(drain(used).bodyBytes == 10)
        #expect(log.sequencesMade == 1)
        used.cancel()
    }

    @Test func aSlowTakerHoldsTheProducerWithinTheBound() {
        let log = GeneratedBytesLog()
        let gauge = AsyncBodyGauge()
        let limit = 20_000
        let origin = AsyncBodyOrigin(bufferLimit: limit, gauge: gauge) {
            GeneratedBytes(.init(produce: 400_000, elementSize: 3_000, fast: true), log: log)
        }
        let pump = AsyncBodyPump(origin: origin, length: nil)
        let (bytes, failure) = drain(pump, max: 8_192, pause: 1_000)
        #expect(failure == nil)
        #expect(bytes == 400_000)
        #expect(gauge.maxBuffered >= limit)
        #expect(gauge.maxBuffered <= limit + 3_000 - 1)
        pump.cancel()
    }

    @Test func aOneShotSequenceServesOneAttempt() {
        let log = GeneratedBytesLog()
        let body = StreamedBody(length: 5_000, oneShot: GeneratedBytes(.init(produce: 5_000, elementSize: 1_000), log: log))
        let first = AsyncBodyPump(origin: body.asyncOrigin!, length: 5_000)
        #expect(drain(first).bodyBytes == 5_000)
        first.cancel()
        let second = AsyncBodyPump(origin: body.asyncOrigin!, length: 5_000)
        let again = drain(second)
        #expect(again.bodyBytes == 0)
        #expect(again.failure?.code == .bodyStreamFailed)
        #expect(again.failure?.detail.contains("cannot be replayed") == true)
        second.cancel()
    }

    @Test func aFactoryThatThrowsFailsTheBodyWithItsError() throws {
        let body = StreamedBody(length: nil) { () throws -> AsyncStream<[UInt8]> in throw TestStreamError() }
        let pump = AsyncBodyPump(origin: try #require(body.asyncOrigin), length: nil)
        let failure = drain(pump).failure
        #expect(failure?.code == .bodyStreamFailed)
        #expect(failure?.underlyingError is TestStreamError)
        pump.cancel()
    }

    /// An `AsyncThrowingStream` of slices (what OpenAPI's HTTPBody is like): its elements arrive,
    /// and cancelling the pump terminates the stream as cancelled.
    @Test func cancelTerminatesAnAsyncThrowingStream() {
        let (stream, continuation) = AsyncThrowingStream<ArraySlice<UInt8>, any Error>.makeStream()
        let termination = Mutex<String?>(nil)
        continuation.onTermination = { reason in
            termination.withLock { $0 = if case .cancelled = reason { "cancelled" } else { "finished" } }
        }
        let body = StreamedBody(length: nil, oneShot: stream)
        let pump = AsyncBodyPump(origin: body.asyncOrigin!, length: nil)
        continuation.yield([1, 2, 3, 4][1...2])
        let first = Mutex<RequestBodyReader.Chunk?>(nil)
        let arrived = DispatchSemaphore(value: 0)
        pump.requestChunk(max: 1_024) { chunk in
            first.withLock { $0 = chunk }
            arrived.signal()
        }
        #expect(arrived.wait(timeout: .now() + 5) == .success)
        guard case .data(let bytes, 2, false, nil)? = first.withLock({ $0 }) else {
            Issue.record("not the first element")
            return
        }
        #expect(bytes == Array("2\r\n".utf8) + [2, 3] + Array("\r\n".utf8))
        // The next chunk waits on the stream; cancelling ends the wait and the iteration.
        pump.requestChunk(max: 1_024) { _ in Issue.record("a chunk after cancel") }
        pump.cancel()
        #expect(waitUntil(timeout: 5) { termination.withLock { $0 } == "cancelled" })
    }

    @Test func anAsyncBodyHasNoBlockingStream() {
        let body = StreamedBody(length: nil, oneShot: AsyncStream<[UInt8]> { $0.finish() })
        #expect(body.isAsyncSequence)
        #expect(throws: (any Error).self) { try body.makeStream() }
        #expect(!StreamedBody(length: 0) { DataBodyStream(Data()) }.isAsyncSequence)
    }
}
