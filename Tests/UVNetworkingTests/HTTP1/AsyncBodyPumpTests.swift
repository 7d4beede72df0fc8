import Dispatch
import Foundation
import Synchronization
import Testing
@testable import UVNetworking

/// The task side of an async body, driven directly (no loop, no socket): when the sequence is
/// made, how far the producer runs ahead of a slow taker, and what a second one-shot attempt gets.
@Suite(.tags(.unit)) struct AsyncBodyPumpTests {
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

    @Test(arguments: [1, 3_000, 64 * 1024])
    func aKnownLengthBodyNoLargerThanOneChunkEndsWhateverTheLimit(limit: Int) {
        // The whole rest of the body held at or above the limit: the producer must still look
        // for the sequence's end, which the last chunk waits for.
        let origin = AsyncBodyOrigin(bufferLimit: limit, gauge: nil) {
            GeneratedBytes(.init(produce: 3_000, elementSize: 3_000, fast: true), log: GeneratedBytesLog())
        }
        let pump = AsyncBodyPump(origin: origin, length: 3_000)
        let (bytes, failure) = drain(pump)
        #expect(failure == nil)
        #expect(bytes == 3_000)
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

    /// A huge element is held once, as the bytes the buffer took, not also as the element it
    /// was copied from: a producer waiting for room has let go of its element.
    @Test func aWaitingProducerHoldsNoElementBesidesItsBytes() {
        let live = LiveCount()
        let origin = AsyncBodyOrigin(bufferLimit: 1, gauge: nil) { TrackedElements(count: 3, size: 100_000, live: live) }
        let pump = AsyncBodyPump(origin: origin, length: nil)
        pump.requestChunk(max: 10) { _ in }
        // The first element's first 10 bytes went; the producer holds the rest and waits.
        #expect(waitUntil(timeout: 5) { pump.produced == 100_000 })
        usleep(50_000)
        #expect(live.count == 0, "the element copied into the buffer is still alive")
        pump.cancel()
    }

    @Test func anAsyncBodyHasNoBlockingStream() {
        let body = StreamedBody(length: nil, oneShot: AsyncStream<[UInt8]> { $0.finish() })
        #expect(body.isAsyncSequence)
        #expect(throws: (any Error).self) { try body.makeStream() }
        #expect(!StreamedBody(length: 0) { DataBodyStream(Data()) }.isAsyncSequence)
    }
}

/// `count` elements of `size` bytes whose storage counts, in `live`, how many are alive; each
/// made when asked for, not an `[UInt8]` (so the pump copies it).
private struct TrackedElements: AsyncSequence {
    final class Storage {
        let bytes: [UInt8]
        let live: LiveCount
        init(size: Int, live: LiveCount) {
            bytes = [UInt8](repeating: 7, count: size)
            self.live = live
            live.add(1)
        }
        deinit { live.add(-1) }
    }
    struct Element: Sequence {
        let storage: Storage
        func makeIterator() -> [UInt8].Iterator { storage.bytes.makeIterator() }
        func withContiguousStorageIfAvailable<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R? {
            try storage.bytes.withUnsafeBufferPointer(body)
        }
    }
    let count: Int
    let size: Int
    let live: LiveCount

    struct AsyncIterator: AsyncIteratorProtocol {
        var left: Int
        let size: Int
        let live: LiveCount
        mutating func next() async -> Element? {
            guard left > 0 else { return nil }
            left -= 1
            return Element(storage: Storage(size: size, live: live))
        }
    }
    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(left: count, size: size, live: live) }
}

/// How many `TrackedElements` storages are alive.
private final class LiveCount: Sendable {
    private let value = Mutex(0)
    var count: Int { value.withLock { $0 } }
    func add(_ delta: Int) { value.withLock { $0 += delta } }
}
