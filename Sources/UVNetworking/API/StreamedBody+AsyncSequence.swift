import Synchronization

/// Request bodies whose bytes come from an `AsyncSequence`: anything async can be uploaded
/// (an OpenAPI `HTTPBody`, an `AsyncStream<[UInt8]>`, bytes relayed from another request).
///
/// The sequence's elements are byte sequences — `[UInt8]`, `ArraySlice<UInt8>`, `Data`, or any
/// other `Sequence` of `UInt8` — of any size, each copied once as it arrives (an `[UInt8]` is
/// taken without a copy). The sequence is iterated in a Swift task, never on a thread that
/// waits: no worker thread is held while the sequence has nothing to give.
///
/// **Backpressure.** At most `bufferLimit` bytes wait between the sequence and the connection:
/// the sequence's `next()` is called only while fewer than `bufferLimit` bytes are held, and is
/// not called again until the connection has written enough to go below it. So at most
/// `bufferLimit - 1` bytes plus the one element that crossed the limit are held, besides at most
/// two chunks of up to 64 KiB in the connection (one being written, the next ready). An upload
/// is never further ahead of the socket than that, whatever the body's size; an element is held
/// whole, so a sequence of huge elements holds one of them.
///
/// **Length.** With a `length` the request carries `Content-Length` and the sequence must produce
/// exactly that many bytes: one that ends early, or has more, fails the task with
/// `NetworkingError.Code.bodyStreamFailed`, and no byte beyond `length` is sent (the last bytes
/// go only once the sequence has ended, so that a longer one is caught). Without one the body is
/// sent with `Transfer-Encoding: chunked`, as for any `StreamedBody`.
///
/// **Errors and cancellation.** An error the sequence throws fails the task with
/// `bodyStreamFailed`, carrying the error as `underlyingError`. When the task ends before the body
/// does (it is cancelled, times out, or the server answers early), the task iterating the
/// sequence is cancelled: a sequence that honours cancellation (`AsyncStream`, most others) ends
/// its iteration then. A sequence that never yields does not hold the request forever: the
/// task's `timeoutInterval` counts the wait as inactivity.
///
/// **Replay.** A body is sent again from its start when an idempotent request is retried on a
/// fresh connection and on a 307 or 308 redirect. `init(length:bufferLimit:makeSequence:)` calls
/// its factory for every attempt; `init(length:bufferLimit:oneShot:)` iterates its one sequence
/// once, and an attempt that needs it again fails with `bodyStreamFailed` saying the body
/// cannot be replayed, rather than sending an empty or partial body.
extension StreamedBody {
    /// The default `bufferLimit` of a body made from an `AsyncSequence`: 256 KiB.
    public static let defaultBufferLimit = 256 * 1024

    /// A body whose bytes are the elements of the sequences `makeSequence` returns: it is called
    /// once per attempt (from a Swift task, never on the event loop), and each sequence it returns
    /// must start at the body's first byte.
    ///
    /// - Parameters:
    ///   - length: The exact number of bytes every sequence yields (sent as `Content-Length`), or
    ///     nil to send the body chunked.
    ///   - bufferLimit: How many bytes may wait between the sequence and the connection (at
    ///     least 1; see the backpressure note above).
    ///   - makeSequence: Makes a new sequence for each attempt. An error it throws fails the task
    ///     with `bodyStreamFailed`.
    public init<Bytes: AsyncSequence>(length: Int64?, bufferLimit: Int = StreamedBody.defaultBufferLimit,
                                      makeSequence: @escaping @Sendable () throws -> Bytes)
    where Bytes.Element: Sequence<UInt8> {
        self.init(length: length, async: AsyncBodyOrigin(bufferLimit: bufferLimit, gauge: nil, makeSequence: makeSequence))
    }

    /// A body whose bytes are the elements of `sequence`, which is iterated at most once: a retry
    /// or a 307/308 redirect that must send the body again fails with `bodyStreamFailed` (the
    /// body cannot be replayed). Use `init(length:bufferLimit:makeSequence:)` when the bytes can
    /// be produced again.
    ///
    /// - Parameters:
    ///   - length: The exact number of bytes `sequence` yields (sent as `Content-Length`), or nil
    ///     to send the body chunked.
    ///   - bufferLimit: How many bytes may wait between the sequence and the connection (at
    ///     least 1; see the backpressure note above).
    ///   - sequence: The body's bytes.
    public init<Bytes: AsyncSequence & Sendable>(length: Int64?, bufferLimit: Int = StreamedBody.defaultBufferLimit,
                                                 oneShot sequence: Bytes)
    where Bytes.Element: Sequence<UInt8> {
        self.init(length: length, async: AsyncBodyOrigin(bufferLimit: bufferLimit, gauge: nil, oneShot: sequence))
    }

    /// Whether the body's bytes come from an `AsyncSequence` (they are not read from a
    /// `RequestBodyStream`, and `makeStream()` throws).
    public var isAsyncSequence: Bool { asyncOrigin != nil }
}

/// Where an async body's bytes come from: how to iterate a sequence into a pump, once per
/// attempt, and how much the pump may hold.
struct AsyncBodyOrigin: Sendable {
    /// The most bytes the pump holds before the producer waits.
    let bufferLimit: Int
    /// Tests: records the pumps' high-water marks.
    let gauge: AsyncBodyGauge?
    /// Iterates a new sequence into a pump, and tells it how the sequence ended.
    let producer: any AsyncBodyProducing

    init<Bytes: AsyncSequence>(bufferLimit: Int, gauge: AsyncBodyGauge?, makeSequence: @escaping @Sendable () throws -> Bytes)
    where Bytes.Element: Sequence<UInt8> {
        precondition(bufferLimit >= 1, "an async body's buffer limit must be at least 1 byte")
        self.bufferLimit = bufferLimit
        self.gauge = gauge
        producer = AsyncSequenceProducer(makeSequence: makeSequence)
    }

    init<Bytes: AsyncSequence & Sendable>(bufferLimit: Int, gauge: AsyncBodyGauge?, oneShot sequence: Bytes)
    where Bytes.Element: Sequence<UInt8> {
        let unused = Mutex<Bytes?>(sequence)
        self.init(bufferLimit: bufferLimit, gauge: gauge) { () throws -> Bytes in
            guard let sequence = unused.withLock({ $0.take() }) else { throw NotReplayable() }
            return sequence
        }
    }

    /// A one-shot sequence was asked for a second time.
    struct NotReplayable: Error {}

    /// `makeStream()` was called on a body made from an `AsyncSequence`.
    struct NoBlockingStream: Error, CustomStringConvertible {
        var description: String { "this body's bytes come from an AsyncSequence: it has no blocking stream" }
    }
}

/// Iterates a new sequence into a pump for each attempt. (A protocol, not a closure: a closure
/// generic over the sequence would carry its metatypes across tasks.)
protocol AsyncBodyProducing: Sendable {
    /// Makes the sequence, hands its elements to `pump` and tells it how the sequence ended.
    func produce(into pump: AsyncBodyPump) async
}

/// The producer of `StreamedBody(length:bufferLimit:makeSequence:)` (and, with a factory that
/// hands its one sequence out once, of `oneShot:`).
struct AsyncSequenceProducer<Bytes: AsyncSequence>: AsyncBodyProducing where Bytes.Element: Sequence<UInt8> {
    let makeSequence: @Sendable () throws -> Bytes

    func produce(into pump: AsyncBodyPump) async {
        let sequence: Bytes
        do {
            sequence = try makeSequence()
        } catch is AsyncBodyOrigin.NotReplayable {
            pump.finish(.notReplayable)
            return
        } catch {
            pump.finish(.factoryFailed(error))
            return
        }
        do {
            for try await element in sequence {
                guard await pump.push(Self.bytes(of: element)) else { return }
            }
            pump.finish(nil)
        } catch {
            pump.finish(.readFailed(bodyRead: pump.produced, error))
        }
    }

    /// One element's bytes as an array: an array as it is, anything else copied once.
    static func bytes(of element: Bytes.Element) -> [UInt8] {
        if let array = element as? [UInt8] { return array }
        return element.withContiguousStorageIfAvailable { Array($0) } ?? Array(element)
    }
}

/// Tests: the high-water marks of the pumps of a body, across its attempts.
final class AsyncBodyGauge: Sendable {
    private struct Marks {
        var maxBuffered = 0
        var maxProduced: Int64 = 0
    }
    private let marks = Mutex(Marks())

    /// The most bytes any pump of the body held at once.
    var maxBuffered: Int { marks.withLock { $0.maxBuffered } }
    /// The most bytes any attempt's sequence produced.
    var maxProduced: Int64 { marks.withLock { $0.maxProduced } }

    func record(_ pump: AsyncBodyPump) {
        let (buffered, produced) = (pump.maxBuffered, pump.produced)
        marks.withLock {
            $0.maxBuffered = max($0.maxBuffered, buffered)
            $0.maxProduced = max($0.maxProduced, produced)
        }
    }
}
