import Synchronization

/// Reads a streamed request body for one exchange, one chunk per worker job, and hands each
/// chunk back to the loop through `EventLoop.execute`. The loop side asks for a chunk only when
/// the connection's state machine says so: at most one read is in flight, and the memory held is
/// the chunk being written plus at most the one being read or waiting, whatever the body's size.
///
/// Chunks arrive framed for the wire: as is under Content-Length (the reader never reads past the
/// declared length; it then probes for one more byte so that a stream longer than declared is
/// caught), or in chunked framing, the last chunk carrying the terminating `0` chunk.
///
/// The loop-side methods are loop-confined; the stream itself is touched only by worker jobs,
/// and is released on a worker too. A body made from an `AsyncSequence` has no stream and uses
/// no worker: its chunks come from an `AsyncBodyPump` (a Swift task iterating the sequence),
/// framed the same way and handed to the loop the same way.
final class RequestBodyReader {
    /// The most body bytes one chunk carries (fewer when the body is paced).
    static let chunkSize = 64 * 1024

    /// One read's outcome, delivered on the loop.
    enum Chunk: Sendable {
        /// `bytes`: what to write (framing included); `bodyCount`: how many of them are body bytes;
        /// `isLast`: the body ends with this chunk. `excess`: the stream has more than its declared
        /// length (the chunk still completes the declared length; the exchange must then fail).
        case data(bytes: [UInt8], bodyCount: Int, isLast: Bool, excess: RequestBodyError?)
        /// The factory or a read threw, or the stream ended before its declared length.
        case failed(RequestBodyError)
    }

    private let loop: EventLoop
    private let workers: WorkerPool
    private let shared: Shared
    /// A body made from an `AsyncSequence`: chunks come from its pump instead of worker reads.
    private let pump: AsyncBodyPump?
    /// Loop side: true once `cancel()` ran; later results are dropped.
    @exclusivity(unchecked) private var cancelled = false
    @exclusivity(unchecked) private var readInFlight = false
    /// Paced bodies: when the last read started (loop clock, ms), and the timer that holds the
    /// next read back until `delay` has passed since then.
    @exclusivity(unchecked) private var lastReadStartedAt: UInt64?
    @exclusivity(unchecked) private var pacingTimer: LoopTimer?
    /// Where chunks go, on the loop thread.
    @exclusivity(unchecked) var onChunk: ((Chunk) -> Void)?

    init(body: StreamedBody, loop: EventLoop, workers: WorkerPool) {
        self.loop = loop
        self.workers = workers
        self.shared = Shared(body: body)
        self.pump = body.asyncOrigin.map { AsyncBodyPump(origin: $0, length: body.length) }
    }

    /// Whether the body is sent with chunked framing (no declared length).
    var isChunked: Bool { shared.body.length == nil }

    /// Reads the next chunk on a worker; it arrives through `onChunk`. One read at a time.
    func readNext() {
        loop.assertInLoop()
        precondition(!readInFlight && !cancelled, "a body read was requested while another runs, or after cancel")
        readInFlight = true
        if let pacing = shared.body.pacing, let last = lastReadStartedAt {
            let earliest = LoopDuration.deadline(last, plus: LoopDuration.clamped(pacing.delay))
            if LoopTimer.now(loop) < earliest {
                if pacingTimer == nil { pacingTimer = LoopTimer(loop: loop) { [unowned self] in self.startRead() } }
                pacingTimer!.arm(at: earliest)
                return
            }
        }
        startRead()
    }

    /// Submits the read job (for a paced body, once its delay has passed).
    private func startRead() {
        guard !cancelled else { return }
        lastReadStartedAt = LoopTimer.now(loop)
        let shared = self.shared
        let me = LoopBound(self, loop: loop)
        let loop = self.loop
        if let pump {
            // Delivered through the loop even when ready at once: `onChunk` is never re-entered.
            pump.requestChunk(max: shared.chunkSize) { chunk in loop.execute { me.value.delivered(chunk) } }
            return
        }
        workers.run {
            let chunk = shared.readChunk()
            loop.execute { me.value.delivered(chunk) }
        }
    }

    private func delivered(_ chunk: Chunk) {
        readInFlight = false
        guard !cancelled else {
            // The exchange ended while this read ran: whatever the job left open goes now.
            releaseStream()
            return
        }
        onChunk?(chunk)
    }

    /// Stops reading: no further read starts, a result in flight is dropped, and the stream is
    /// released (closed) on a worker. Idempotent.
    func cancel() {
        loop.assertInLoop()
        guard !cancelled else { return }
        cancelled = true
        onChunk = nil
        pacingTimer?.close()
        pacingTimer = nil
        pump?.cancel()
        if !readInFlight { releaseStream() }
    }

    deinit {
        // A reader dropped without `cancel()` (not expected) must not leave a producer waiting.
        pump?.cancel()
    }

    private func releaseStream() {
        // The job takes the stream itself: a reference held here, even briefly, could make the
        // loop thread the one that releases it.
        guard shared.holdsStream else { return }
        let shared = self.shared
        workers.run { shared.releaseStream() }
    }
}

extension RequestBodyReader {
    /// Moves a stream between worker jobs. @unchecked: only one job uses it at a time (the loop
    /// asks for one read at a time), and the loop never calls it.
    private struct StreamBox: @unchecked Sendable {
        let stream: any RequestBodyStream
    }

    /// The state worker jobs share: the stream (made by the first read) and the count of body
    /// bytes read. Reads are serialized by the loop; the mutex makes the hand-over between jobs,
    /// and to `takeStream`, safe.
    private final class Shared: Sendable {
        let body: StreamedBody
        private struct State {
            var stream: StreamBox?
            var started = false
            var finished = false
            var bodyRead: Int64 = 0
        }
        private let state = Mutex(State())

        /// The most body bytes per chunk: a paced body's packet size, else `chunkSize`.
        let chunkSize: Int

        init(body: StreamedBody) {
            self.body = body
            chunkSize = min(RequestBodyReader.chunkSize, max(1, body.pacing?.packetSize ?? RequestBodyReader.chunkSize))
        }

        /// Whether a stream is open (no read may be running).
        var holdsStream: Bool { state.withLock { $0.stream != nil } }

        /// On a worker: drops the stream, which closes it.
        func releaseStream() {
            let stream = state.withLock { state in
                defer { state.stream = nil }
                state.finished = true
                return state.stream
            }
            _ = stream
        }

        /// Runs on a worker: reads one chunk (blocking as the stream likes).
        func readChunk() -> Chunk {
            var (box, started, bodyRead, finished) = state.withLock { ($0.stream, $0.started, $0.bodyRead, $0.finished) }
            guard !finished else {
                return .failed(.readAfterEnd)
            }
            if !started {
                do {
                    box = StreamBox(stream: try body.makeStream())
                } catch {
                    state.withLock { $0.started = true; $0.finished = true }
                    return .failed(.factoryFailed(error))
                }
                state.withLock { $0.started = true; $0.stream = box }
            }
            guard let stream = box?.stream else {
                return .failed(.released)
            }
            let chunk: Chunk
            do {
                if let length = body.length {
                    chunk = try Self.readCounted(stream, length: length, chunkSize: chunkSize, bodyRead: &bodyRead)
                } else {
                    chunk = try Self.readChunked(stream, chunkSize: chunkSize, bodyRead: &bodyRead)
                }
            } catch {
                state.withLock { $0.stream = nil; $0.finished = true }
                return .failed(.readFailed(bodyRead: bodyRead, error))
            }
            let ended: Bool
            switch chunk {
            case .data(_, _, let isLast, _): ended = isLast
            case .failed: ended = true
            }
            state.withLock { state in
                state.bodyRead = bodyRead
                if ended {
                    state.finished = true
                    state.stream = nil
                }
            }
            // At the end `box` held the last reference: the stream is released here, on the worker.
            return chunk
        }

        /// Fills `buffer` from `stream` until it is full or the stream ends; returns the count.
        private static func fill(_ buffer: UnsafeMutableRawBufferPointer, from stream: any RequestBodyStream) throws -> Int {
            var filled = 0
            while filled < buffer.count {
                let count = try stream.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                guard count >= 0 && count <= buffer.count - filled else {
                    throw BodyStreamContractError(count: count, room: buffer.count - filled)
                }
                if count == 0 { break }
                filled += count
            }
            return filled
        }

        /// The next piece of a body with a declared length, never past that length.
        private static func readCounted(_ stream: any RequestBodyStream, length: Int64, chunkSize: Int, bodyRead: inout Int64) throws -> Chunk {
            let want = Int(min(Int64(chunkSize), length - bodyRead))
            var filled = 0
            var thrown: (any Error)?
            let bytes = [UInt8](unsafeUninitializedCapacity: want) { buffer, count in
                do {
                    filled = try fill(UnsafeMutableRawBufferPointer(buffer), from: stream)
                } catch {
                    thrown = error
                }
                count = filled
            }
            if let thrown { throw thrown }
            bodyRead += Int64(filled)
            if filled < want {
                return .failed(.endedEarly(bodyRead: bodyRead, declared: length))
            }
            guard bodyRead == length else { return .data(bytes: bytes, bodyCount: filled, isLast: false, excess: nil) }
            // All declared bytes are in hand: one more read tells an ended stream from a longer one.
            var probe: UInt8 = 0
            let extra = try withUnsafeMutableBytes(of: &probe) { try stream.read(into: $0) }
            let excess: RequestBodyError? = extra == 0 ? nil : .longerThanDeclared(declared: length)
            return .data(bytes: bytes, bodyCount: filled, isLast: true, excess: excess)
        }

        /// The next chunk of a body of unknown length, in chunked framing (RFC 9112 §7.1); the
        /// last one ends with the `0` chunk and the empty trailer section.
        private static func readChunked(_ stream: any RequestBodyStream, chunkSize: Int, bodyRead: inout Int64) throws -> Chunk {
            let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 1)
            defer { scratch.deallocate() }
            let filled = try fill(scratch, from: stream)
            bodyRead += Int64(filled)
            let isLast = filled < scratch.count
            var bytes: [UInt8] = []
            bytes.reserveCapacity(filled + 16)
            if filled > 0 {
                bytes.append(contentsOf: String(filled, radix: 16).utf8)
                bytes.append(0x0D); bytes.append(0x0A)
                bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[..<filled]))
                bytes.append(0x0D); bytes.append(0x0A)
            }
            if isLast { bytes.append(contentsOf: "0\r\n\r\n".utf8) }
            return .data(bytes: bytes, bodyCount: filled, isLast: isLast, excess: nil)
        }
    }
}

/// A body stream returned a count below 0 or above the room it was given.
struct BodyStreamContractError: Error, Sendable, CustomStringConvertible {
    let count: Int
    let room: Int
    var description: String { "read(into:) returned \(count) for a \(room)-byte buffer" }
}
