import DequeModule

/// The bytes of an async request body that its producer has handed over and the connection has
/// not taken yet, with the decisions about them: when the producer must wait for room, when a
/// chunk can go and how it is framed, and when the body has broken its declared length.
///
/// A value type without I/O: `AsyncBodyPump` holds it under a lock and acts on what each event
/// returns. The producer is asked for more only while fewer than `limit` bytes wait here, so
/// at most `limit - 1` bytes plus one element (the one that crossed the limit) are ever held.
struct AsyncBodyBuffer {
    typealias Chunk = RequestBodyReader.Chunk

    /// The body's exact length (sent as Content-Length), or nil for chunked framing.
    let declared: Int64?
    /// The producer waits once this many bytes are held.
    let limit: Int

    /// What the producer should do after handing over an element.
    enum PushResult: Equatable {
        /// Hand over the next element.
        case more
        /// Wait until `hasRoom` (or the pump is cancelled) before asking for the next one.
        case waitForRoom
        /// Stop iterating: the body is complete as far as the connection is concerned (it went
        /// past its declared length), or the exchange ended.
        case stop
    }

    private var pieces = Deque<[UInt8]>()
    /// Bytes of `pieces.first` already taken.
    private var headOffset = 0
    /// Bytes held (in `pieces`, past `headOffset`).
    private(set) var buffered = 0
    /// The most bytes ever held at once.
    private(set) var maxBuffered = 0
    /// Body bytes the producer handed over (those past a declared length not counted).
    private(set) var produced: Int64 = 0
    /// Body bytes the connection took.
    private(set) var taken: Int64 = 0
    /// The producer's sequence ended.
    private var ended = false
    /// The producer failed (its factory or its sequence threw).
    private var failure: RequestBodyError?
    /// The producer had more than the declared length.
    private var excess = false
    /// The chunk size the connection asked for and is still waiting on.
    private(set) var loopWaiting: Int?
    /// The exchange ended: everything held is dropped and the producer stops.
    private(set) var cancelled = false
    /// The last chunk (or a failure) went to the connection.
    private(set) var delivered = false

    init(declared: Int64?, limit: Int) {
        self.declared = declared
        self.limit = max(1, limit)
    }

    /// Whether the producer may hand over another element.
    var hasRoom: Bool { buffered < limit }

    /// Whether the producer has nothing more to do (ended, failed, over length, or cancelled).
    var producerDone: Bool { ended || failure != nil || excess || cancelled }

    // MARK: Producer events

    /// The producer's next element. Returns what the producer does next, and the chunk for a
    /// connection that was waiting, if this element completes one.
    mutating func push(_ bytes: [UInt8]) -> (PushResult, Chunk?) {
        guard !producerDone else { return (.stop, nil) }
        guard !bytes.isEmpty else { return (.more, nil) }
        var bytes = bytes
        if let declared, produced + Int64(bytes.count) > declared {
            // Only the declared bytes are kept; that there were more fails the exchange once
            // they have been sent (as the blocking reader does).
            excess = true
            bytes.removeLast(Int(produced + Int64(bytes.count) - declared))
        }
        if !bytes.isEmpty {
            produced += Int64(bytes.count)
            buffered += bytes.count
            maxBuffered = max(maxBuffered, buffered)
            pieces.append(bytes)
        }
        let chunk = serveWaitingLoop()
        if excess { return (.stop, chunk) }
        return (hasRoom ? .more : .waitForRoom, chunk)
    }

    /// The producer's sequence ended. Returns the chunk for a waiting connection, if any.
    mutating func finish() -> Chunk? {
        guard !producerDone else { return nil }
        ended = true
        return serveWaitingLoop()
    }

    /// The producer failed. Returns the failure for a waiting connection, if one waits.
    mutating func fail(_ error: RequestBodyError) -> Chunk? {
        guard !producerDone else { return nil }
        failure = error
        return serveWaitingLoop()
    }

    // MARK: Connection events

    /// The connection wants the next chunk of at most `max` body bytes: returns it, or nil when
    /// it must wait for the producer (it then comes from `push`, `finish` or `fail`).
    mutating func take(max: Int) -> Chunk? {
        precondition(!delivered && !cancelled && loopWaiting == nil, "a chunk was asked for after the end, or twice")
        if let chunk = nextChunk(max: Swift.max(1, max)) { return chunk }
        loopWaiting = Swift.max(1, max)
        return nil
    }

    /// The exchange ended: drops what is held; the producer is told to stop.
    mutating func cancel() {
        cancelled = true
        loopWaiting = nil
        pieces = []
        headOffset = 0
        buffered = 0
    }

    // MARK: Chunks

    private mutating func serveWaitingLoop() -> Chunk? {
        guard let max = loopWaiting, let chunk = nextChunk(max: max) else { return nil }
        loopWaiting = nil
        return chunk
    }

    private mutating func nextChunk(max: Int) -> Chunk? {
        if let failure {
            delivered = true
            return .failed(failure)
        }
        guard let declared else { return nextChunkedChunk(max: max) }
        let remaining = declared - taken
        if ended && produced < declared {
            delivered = true
            return .failed(.endedEarly(bodyRead: produced, declared: declared))
        }
        if Int64(buffered) >= remaining && remaining <= Int64(max) {
            // This chunk completes the body: it goes once it is known whether more follows.
            guard ended || excess else { return nil }
            var bytes: [UInt8] = []
            moveBytes(Int(remaining), into: &bytes)
            delivered = true
            return .data(bytes: bytes, bodyCount: bytes.count, isLast: true,
                         excess: excess ? .longerThanDeclared(declared: declared) : nil)
        }
        guard buffered > 0 else { return nil }
        var bytes: [UInt8] = []
        moveBytes(Swift.min(max, buffered), into: &bytes)
        return .data(bytes: bytes, bodyCount: bytes.count, isLast: false, excess: nil)
    }

    /// Chunked framing (RFC 9112 §7.1): each chunk as it is held, the last one followed by the
    /// `0` chunk and the empty trailer section.
    private mutating func nextChunkedChunk(max: Int) -> Chunk? {
        guard buffered > 0 || ended else { return nil }
        let count = Swift.min(max, buffered)
        var bytes: [UInt8] = []
        if count > 0 {
            bytes.reserveCapacity(count + 16)
            bytes.append(contentsOf: String(count, radix: 16).utf8)
            bytes.append(0x0D); bytes.append(0x0A)
            moveBytes(count, into: &bytes)
            bytes.append(0x0D); bytes.append(0x0A)
        }
        let isLast = ended && buffered == 0
        if isLast {
            bytes.append(contentsOf: "0\r\n\r\n".utf8)
            delivered = true
        }
        return .data(bytes: bytes, bodyCount: count, isLast: isLast, excess: nil)
    }

    /// Moves the first `count` held bytes to the end of `out`.
    private mutating func moveBytes(_ count: Int, into out: inout [UInt8]) {
        var left = count
        buffered -= count
        taken += Int64(count)
        while left > 0 {
            let head = pieces[pieces.startIndex]
            let available = head.count - headOffset
            if out.isEmpty && headOffset == 0 && available == left {
                // A whole element makes the whole chunk: it goes as it is, without a copy.
                out = pieces.removeFirst()
                return
            }
            let n = Swift.min(available, left)
            out.append(contentsOf: head[headOffset ..< headOffset + n])
            left -= n
            if n == available {
                pieces.removeFirst()
                headOffset = 0
            } else {
                headOffset += n
            }
        }
    }
}
