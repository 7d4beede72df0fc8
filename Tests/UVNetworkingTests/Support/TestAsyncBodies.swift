// Async request bodies for tests: AsyncSequences of bytes generated as they are iterated (never
// held in memory), with knobs for the faults a producer can have, and counters to see how the
// library iterated them.

import Foundation
import Synchronization
@testable import UVNetworking

/// What the sequences made from one `GeneratedBytes.Spec` did, across every sequence (attempt).
final class GeneratedBytesLog: Sendable {
    private struct Counts {
        var sequencesMade = 0, nextCalls = 0, bytes: Int64 = 0, nextCallsOnLoop = 0
        var iterationsEnded = 0, cancelledInNext = 0
    }
    private let counts = Mutex(Counts())

    /// Sequences made (one per attempt that started its body).
    var sequencesMade: Int { counts.withLock { $0.sequencesMade } }
    /// Calls of the iterators' `next()`.
    var nextCalls: Int { counts.withLock { $0.nextCalls } }
    /// Bytes yielded by every sequence.
    var bytes: Int64 { counts.withLock { $0.bytes } }
    /// `next()` calls made on the event loop's thread (must be 0).
    var nextCallsOnLoop: Int { counts.withLock { $0.nextCallsOnLoop } }
    /// Iterators released (their iteration is over, however it ended).
    var iterationsEnded: Int { counts.withLock { $0.iterationsEnded } }
    /// `next()` calls that saw their task cancelled.
    var cancelledInNext: Int { counts.withLock { $0.cancelledInNext } }

    fileprivate func madeSequence() { counts.withLock { $0.sequencesMade += 1 } }
    fileprivate func next(onLoop: Bool) { counts.withLock { $0.nextCalls += 1; if onLoop { $0.nextCallsOnLoop += 1 } } }
    fileprivate func yielded(_ count: Int) { counts.withLock { $0.bytes += Int64(count) } }
    fileprivate func ended() { counts.withLock { $0.iterationsEnded += 1 } }
    fileprivate func sawCancellation() { counts.withLock { $0.cancelledInNext += 1 } }
}

/// An AsyncSequence of `produce` bytes in `ArraySlice<UInt8>` elements of `elementSize` bytes,
/// made up as it is iterated: byte i is `i % 251` (the same bytes as `GeneratedBody`), or one
/// repeated byte with `fast`. It can throw after `throwAfter` bytes, or stop yielding after
/// `hangAfter` bytes (it then waits until its task is cancelled).
struct GeneratedBytes: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>

    struct Spec: Sendable {
        var produce: Int64
        var elementSize = 16_384
        var throwAfter: Int64? = nil
        var hangAfter: Int64? = nil
        var fast = false
    }

    let spec: Spec
    let log: GeneratedBytesLog

    init(_ spec: Spec, log: GeneratedBytesLog) {
        self.spec = spec
        self.log = log
        log.madeSequence()
    }

    /// A body whose every attempt iterates a new `GeneratedBytes`, optionally with a gauge.
    static func body(_ spec: Spec, declaredLength: Int64?, log: GeneratedBytesLog, bufferLimit: Int = StreamedBody.defaultBufferLimit,
                     gauge: AsyncBodyGauge? = nil) -> StreamedBody {
        StreamedBody(length: declaredLength, async: AsyncBodyOrigin(bufferLimit: bufferLimit, gauge: gauge) {
            GeneratedBytes(spec, log: log)
        })
    }

    func makeAsyncIterator() -> Iterator { Iterator(spec: spec, log: log) }

    final class Iterator: AsyncIteratorProtocol {
        private let spec: Spec
        private let log: GeneratedBytesLog
        private var produced: Int64 = 0

        init(spec: Spec, log: GeneratedBytesLog) {
            self.spec = spec
            self.log = log
        }

        func next() async throws -> ArraySlice<UInt8>? {
            log.next(onLoop: EventLoop.onAnyLoopThread)
            if let limit = spec.throwAfter, produced >= limit { throw TestStreamError() }
            if let limit = spec.hangAfter, produced >= limit {
                while !Task.isCancelled {
                    try? await Task.sleep(nanoseconds: 10_000_000)
                }
                log.sawCancellation()
                return nil
            }
            var count = Int(Swift.min(Int64(spec.elementSize), spec.produce - produced))
            if let limit = spec.throwAfter { count = Swift.min(count, Int(limit - produced)) }
            if let limit = spec.hangAfter { count = Swift.min(count, Int(limit - produced)) }
            guard count > 0 else { return nil }
            var bytes = [UInt8](repeating: UInt8(ascii: "x"), count: count + 2)
            if !spec.fast {
                var value = Int(produced % 251)
                for index in 1...count {
                    bytes[index] = UInt8(value)
                    value = value == 250 ? 0 : value + 1
                }
            }
            produced += Int64(count)
            log.yielded(count)
            // A slice that is not the whole array, as an OpenAPI HTTPBody's chunks may be.
            return bytes[1...count]
        }

        deinit { log.ended() }
    }
}
