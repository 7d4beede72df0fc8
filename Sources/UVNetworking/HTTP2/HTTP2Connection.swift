import CNGHTTP2
import UVHTTP1
import Foundation

/// The I/O shell of one HTTP/2 connection: an established transport, the nghttp2 session
/// (`HTTP2Session`, sans-I/O) and the streams running on it (`HTTP2Stream`, each an
/// `Exchange`). Bytes read go into the session; what the session wants sent is taken once per
/// loop turn and written in one write (we set TCP_NODELAY, so small writes would each be a
/// packet).
///
/// Loop-confined. Owned by its pool from `start()` until it reports `connectionClosed`.
final class HTTP2Connection {
    /// The pool's number for this connection.
    let id: Int
    let loop: EventLoop
    private let owner: HTTP2ConnectionOwner
    @exclusivity(unchecked) private var transport: StreamTransport
    /// "https" or "http": the :scheme of its requests.
    let scheme: String
    private let settings: HTTP2Session.Settings
    @exclusivity(unchecked) private var session: HTTP2Session?
    /// The streams running, by id.
    @exclusivity(unchecked) private var streams = HTTP2StreamTable<HTTP2Stream>()
    @exclusivity(unchecked) private var timer: LoopTimer?
    @exclusivity(unchecked) private var idleDeadline: UInt64 = .max
    /// When an idle connection gives back the memory nghttp2 freed (`HTTP2SessionMemory`): a
    /// while after it went idle, not at once, since a busy connection goes idle between bursts.
    @exclusivity(unchecked) private var trimDeadline: UInt64 = .max
    static let trimDelayMilliseconds: UInt64 = 1_000
    @exclusivity(unchecked) private var flushScheduled = false
    @exclusivity(unchecked) private var output: [UInt8] = []
    @exclusivity(unchecked) private var writePending = false
    @exclusivity(unchecked) private(set) var isClosed = false
    /// Whether the server said GOAWAY (or the connection failed): no new stream.
    @exclusivity(unchecked) private(set) var isDraining = false
    /// Whether the server processed some stream on this connection (a response head came, or a
    /// GOAWAY named a stream it processed): replays of streams it refused are then no loop.
    @exclusivity(unchecked) var madeProgress = false
    /// Streams opened so far.
    @exclusivity(unchecked) private(set) var streamsOpened = 0
    /// Bytes read on the connection so far: a stream's share is what was read while it ran.
    @exclusivity(unchecked) private(set) var bytesRead: Int64 = 0
    /// Streams whose request has not all been handed to the transport: told at each write.
    /// Kept apart from `streams` so that a write costs nothing per stream that is only waiting
    /// for its response, the common case with many streams open.
    @exclusivity(unchecked) private var streamsWriting: [HTTP2Stream] = []
    /// Streams whose body a reader streams in, told when output was taken (they may read on).
    @exclusivity(unchecked) private var streamsReadingBodies: [HTTP2Stream] = []
    @exclusivity(unchecked) private(set) var timings: ConnectTimings
    /// For a session that logs or measures: who is told why it closes (ConnectionObserver.swift);
    /// nil otherwise.
    @exclusivity(unchecked) var observation: (any ConnectionObserver)?
    /// Makes the response heads, reusing those the tasks are done with (HTTP2ResponseHeads.swift).
    let heads = HTTP2ResponseHeads()

    init(id: Int, loop: EventLoop, owner: HTTP2ConnectionOwner, transport: StreamTransport, timings: ConnectTimings, scheme: String,
         settings: HTTP2Session.Settings) {
        loop.assertInLoop()
        self.id = id
        self.loop = loop
        self.owner = owner
        self.transport = transport
        self.timings = timings
        self.scheme = scheme
        self.settings = settings
    }

    /// Takes over the transport, sends the preface and SETTINGS, and reads.
    func start() throws(HTTP2Error) {
        transport.delegate = self
        session = try HTTP2Session(delegate: self, settings: settings)
        timer = LoopTimer(loop: loop) { [unowned self] in self.timerFired() }
        transport.startReading()
        scheduleFlush()
    }

    var tlsTransport: TLSTransport? { transport as? TLSTransport }
    var remoteAddressText: String? { timings.remoteAddressText() }
    /// Streams running now.
    var activeStreamCount: Int { streams.count }
    /// What the session keeps of nghttp2's freed memory (`HTTP2SessionMemory`).
    var cachedSessionBytes: Int { session?.memory.cachedBytes ?? 0 }

    // MARK: Streams

    /// A stream for the next request the pool assigns (it opens when the task executes).
    func makeStream() -> HTTP2Stream {
        HTTP2Stream(connection: self, isReused: streamsOpened > 0)
    }

    /// Opens `stream` on the wire for `request` (a head in HTTP/1.1 form); returns its id and
    /// what it sends as DATA (see `HTTP2Session.submit`).
    func open(_ stream: HTTP2Stream, request: [UInt8], streamed: Bool) throws(HTTP2Error) -> (stream: Int32, body: HTTP2Session.BodySource?) {
        guard let session, !isClosed else { throw .engine("the connection is closed") }
        let opened = try session.submit(request: request, scheme: scheme, streamed: streamed)
        let id = opened.stream
        streams.insert(stream, id: id)
        streamsWriting.append(stream)
        streamsOpened += 1
        idleDeadline = .max
        trimDeadline = .max
        scheduleFlush()
        return opened
    }

    /// The task abandoned `stream`: RST_STREAM CANCEL; the others go on.
    func reset(_ stream: HTTP2Stream) {
        guard let id = stream.streamID, streams[id] === stream else { return }
        session?.reset(id)
        scheduleFlush()
    }

    /// `stream`'s body comes from a reader: it hears when output was taken, until `bodyEnded`.
    func bodyStreams(_ stream: HTTP2Stream) {
        streamsReadingBodies.append(stream)
    }

    func bodyEnded(_ stream: HTTP2Stream) {
        streamsReadingBodies.removeAll { $0 === stream }
    }

    func bodyAppended(_ stream: HTTP2Stream) {
        guard let id = stream.streamID else { return }
        session?.bodyAppended(id)
        scheduleFlush()
    }

    /// `stream`'s window grows to `size` (`HTTP2StreamWindow`): a WINDOW_UPDATE for the difference.
    func setWindow(of stream: HTTP2Stream, to size: Int32) {
        guard let id = stream.streamID, let session else { return }
        session.setWindow(of: id, to: size)
        scheduleFlush()
    }

    func consume(_ stream: HTTP2Stream, _ count: Int) {
        guard let id = stream.streamID, let session else { return }
        session.consume(id, count)
        scheduleFlush()
    }

    /// `stream` wants `exchangeTimerFired` at `deadline` (loop milliseconds).
    func armTimer(noLaterThan deadline: UInt64) {
        guard let armed = timer?.armedDeadline, deadline < armed else { return }
        timer?.arm(at: deadline)
    }

    private func timerFired() {
        let now = LoopTimer.now(loop)
        if streams.isEmpty && now >= idleDeadline {
            observation?.noteCloseReason("idle timeout")
            close()
            return
        }
        if streams.isEmpty && now >= trimDeadline {
            trimDeadline = .max
            session?.trimMemory()
            heads.trim()
        }
        // Each stream re-checks its own deadlines and re-arms for the next.
        let running = streams.sortedByID
        for stream in running where stream.deadline <= now {
            stream.deadline = .max
            stream.timerFired()
        }
        let next = min(streams.entries.map(\.stream.deadline).min() ?? .max, streams.isEmpty ? min(idleDeadline, trimDeadline) : .max)
        if next != .max { timer?.arm(at: next) }
    }

    // MARK: The pool's calls

    /// No stream runs: close after `timeout` seconds unless one opens.
    func parkIdle(timeout: Double) {
        let now = LoopTimer.now(loop)
        idleDeadline = LoopDuration.deadline(now, plus: LoopDuration.clamped(timeout))
        trimDeadline = LoopDuration.deadline(now, plus: Self.trimDelayMilliseconds)
        armTimer(noLaterThan: min(idleDeadline, trimDeadline))
    }

    /// Says GOAWAY and closes once the running streams end (session invalidation, shutdown).
    func drain() {
        guard !isClosed, !isDraining else { return }
        isDraining = true
        owner.connectionDraining(self)
        session?.goAway()
        guard streams.isEmpty else {
            scheduleFlush()
            return
        }
        // Nothing to wait for: the GOAWAY goes out now, then the connection closes.
        flush()
        close()
    }

    /// Closes now: running streams fail.
    func close() {
        guard !isClosed else { return }
        if let session, !isDraining {
            session.goAway()
            flush()
        }
        tearDown(failing: .http2(.protocolViolation("the connection was closed")), reset: false)
    }

    // MARK: Output

    /// Writes what the session has, once this loop turn is over: one write for all of it.
    private func scheduleFlush() {
        guard !flushScheduled, !isClosed else { return }
        flushScheduled = true
        loop.runAfterIO {
            self.flushScheduled = false
            self.flush()
        }
    }

    private func flush() {
        guard !isClosed, !writePending, let session else { return }
        do {
            try session.takeOutput(into: &output)
        } catch {
            fail(.http2(error))
            return
        }
        if !streamsReadingBodies.isEmpty {
            // A copy: a stream may end (and leave the list) while it reads.
            for stream in streamsReadingBodies { stream.outputTaken() }
        }
        guard !output.isEmpty else {
            if let fatal = session.fatal { fail(.http2(fatal)) }
            return
        }
        let bytes = output
        output.removeAll(keepingCapacity: true)
        if !streamsWriting.isEmpty {
            // Reporting may open or end streams: the list is rebuilt, keeping those still writing.
            let writing = streamsWriting
            streamsWriting.removeAll(keepingCapacity: true)
            for stream in writing where stream.countWritten() { streamsWriting.append(stream) }
        }
        switch transport.write(bytes) {
        case .written:
            // nghttp2 ended the connection over the server's frames: its GOAWAY is out.
            if let fatal = session.fatal {
                fail(.http2(fatal))
                return
            }
            if session.hasOutput { scheduleFlush() }
        case .pending:
            writePending = true
        case .failed(let status):
            fail(.socketFailed(status: status))
        }
    }

    // MARK: Endings

    /// The connection failed: every stream fails with `error` and the connection closes.
    private func fail(_ error: ExchangeError) {
        guard !isClosed else { return }
        observation?.noteCloseReason(error)
        tearDown(failing: error, reset: false)
    }

    private func tearDown(failing error: ExchangeError, reset: Bool) {
        isClosed = true
        let wasDraining = isDraining
        isDraining = true
        timer?.close()
        timer = nil
        transport.close(reset: reset)
        // The pool first, so that a stream replayed from below does not come back here.
        if !wasDraining { owner.connectionDraining(self) }
        let running = streams.removeAll()
        streamsWriting.removeAll()
        streamsReadingBodies.removeAll()
        for stream in running { stream.connectionFailed(error) }
        session = nil
        owner.connectionClosed(self)
    }

    /// `stream` is over: the pool hears that a stream is free.
    private func streamReleased(_ id: Int32) {
        guard streams.remove(id) else { return }
        owner.connectionReleasedStream(self)
        if isDraining && streams.isEmpty && !isClosed { close() }
    }
}

extension HTTP2Connection: HTTP2SessionDelegate {
    func sessionChangedStreamLimit(_ limit: Int) {
        owner.connection(self, changedStreamLimit: limit)
    }

    func session(stream: Int32, receivedHead status: Int, block: HTTP2HeaderBlock, isFinal: Bool) {
        streams[stream]?.receivedHead(status: status, block: block, isFinal: isFinal)
    }

    func session(stream: Int32, receivedData bytes: UnsafeRawBufferPointer) {
        streams[stream]?.receivedData(bytes)
    }

    func session(streamEnded stream: Int32) {
        streams[stream]?.receivedEnd()
    }

    func session(stream: Int32, closedWith errorCode: UInt32, byClient: Bool) {
        streams[stream]?.closed(errorCode: errorCode, byClient: byClient)
        streamReleased(stream)
    }

    func sessionReceivedGoAway(lastStreamID: Int32, errorCode: UInt32) {
        // Streams above the last one were never processed: they go elsewhere, whatever their
        // method (RFC 9113 §6.8). nghttp2 closes them, and `closed` replays them.
        for (id, stream) in streams.entries where id > lastStreamID { stream.neverProcessed = true }
        if lastStreamID > 0 { madeProgress = true }
        if errorCode != NGHTTP2_NO_ERROR.rawValue {
            for (id, stream) in streams.entries where id <= lastStreamID { stream.goAwayCode = errorCode }
        }
        if !isDraining {
            isDraining = true
            owner.connectionDraining(self)
        }
    }
}

extension HTTP2Connection: TransportDelegate {
    func transportDidConnect(_ transport: StreamTransport) {}

    func transport(_ transport: StreamTransport, didFailToConnect code: Int32) {
        fail(.socketFailed(status: code))
    }

    func transport(_ transport: StreamTransport, didRead bytes: UnsafeRawBufferPointer) {
        guard let session else { return }
        bytesRead &+= Int64(bytes.count)
        do {
            try session.receive(bytes)
        } catch {
            fail(.http2(error))
            return
        }
        if session.hasOutput { scheduleFlush() }
        if !session.isAlive && !isClosed { close() }
    }

    func transportDidReadEOF(_ transport: StreamTransport, cleanly: Bool) {
        fail(streams.isEmpty ? .closedWithoutResponse : .closedInsideResponse)
    }

    func transport(_ transport: StreamTransport, didFailWith code: Int32) {
        fail(.socketFailed(status: code))
    }

    func transport(_ transport: StreamTransport, didFail error: TransportError) {
        fail(.transport(error))
    }

    func transportDidFinishWriting(_ transport: StreamTransport) {
        writePending = false
        flush()
    }
}

extension HTTP2Connection: PooledConnection {
    var protocolName: String { "h2" }
}
