import Foundation
import UVHTTP1

/// A stored response played to a task as if a connection received it: the task's runner gets
/// the head, the body in chunks and the end through `ExchangeDelegate`, so progress, hooks,
/// sinks (memory, stream, file), redirects and the serializer work as for the network, and the
/// cache needs no path of its own through them. Nothing is sent. Loop thread only.
///
/// The body goes in `chunkSize` pieces, one loop turn each, and stops while the task's
/// consumer is behind or the task suspended (`pauseReading`), as a socket would. A large body
/// left in its file (`CacheEntry.bodyFile`) is read a chunk at a time on a worker, the next
/// read starting only once the chunk before was handed over: memory holds one chunk.
///
/// After a 304 it plays the body alone (`bodyOf`): the 304's exchange handed over the stored
/// head, merged, and the stored body follows as if that response went on.
final class StoredExchange: Exchange {
    private let loop: EventLoop
    /// nil when only the body is played.
    private let head: ResponseHead?
    private var body: Data
    private let file: CacheBodyFile?
    private let workers: WorkerPool?
    /// The body's length, in `body` or in `file`.
    private var length: Int
    /// A chunk of `file` is being read on a worker.
    private var reading = false
    /// The chunk of `file` read, waiting for its turn (the task may be paused).
    private var readChunk: Data?
    private var offset = 0
    private weak var delegate: ExchangeDelegate?
    private var paused = false
    /// A turn is queued to deliver the next chunk.
    private var scheduled = false
    private var over = false
    private var headSent = false

    static let chunkSize = 64 * 1024

    /// Plays `entry`, aged as at `now` (its Age field says so, RFC 9111 §5.1). A body in a file
    /// is read on `workers`.
    convenience init(entry: CacheEntry, now: Date, loop: EventLoop, workers: WorkerPool? = nil) {
        self.init(head: Self.head(of: entry, now: now), entry: entry, loop: loop, workers: workers)
    }

    /// Plays `entry`'s body alone, once `playBody(for:paused:)` is called.
    convenience init(bodyOf entry: CacheEntry, loop: EventLoop, workers: WorkerPool) {
        self.init(head: nil, entry: entry, loop: loop, workers: workers)
    }

    private init(head: ResponseHead?, entry: CacheEntry, loop: EventLoop, workers: WorkerPool?) {
        self.loop = loop
        self.head = head
        headSent = head == nil
        body = entry.body
        file = workers == nil ? nil : entry.bodyFile
        self.workers = workers
        length = entry.bodyLength
        precondition(entry.bodyFile == nil || workers != nil, "a body in a file needs workers to read it")
    }

    /// `entry`'s head as a connection would hand it over, with its age at `now` in Age. Its
    /// swift-http-types response goes with it, so that delivery does not build it from bytes.
    static func head(of entry: CacheEntry, now: Date) -> ResponseHead {
        let age = String(Int(entry.freshness.age(at: now).rounded(.down)))
        var fields = entry.fields
        fields[.age] = age
        let response = HTTPResponse(status: .init(code: entry.status, reasonPhrase: entry.reason), headerFields: fields)
        return ResponseHead.built(response, headers: entry.receivedFields.appending(name: "Age", value: age))
    }

    func execute(_ request: [UInt8], isHEAD: Bool, body: RequestBodyReader?, expectsContinue: Bool, for delegate: ExchangeDelegate) {
        self.delegate = delegate
        // A stored GET response may answer a HEAD that a stored redirect led to: no body then.
        if isHEAD {
            self.body = Data()
            length = 0
        }
        // Next turn: the runner is in the middle of assigning the exchange.
        schedule()
    }

    /// Starts playing the body to `delegate` (from `bodyOf`), held until `resumeReading` when
    /// `paused` (the task is suspended, its consumer behind, or a hook holds the response).
    func playBody(for delegate: ExchangeDelegate, paused: Bool) {
        self.delegate = delegate
        self.paused = paused
        schedule()
    }

    private func schedule() {
        guard !scheduled, !over else { return }
        scheduled = true
        let me = LoopBound(self, loop: loop)
        if !loop.execute({ me.value.step() }) { scheduled = false }
    }

    /// One turn: the request "written" and the head, or the next chunk, or the end.
    private func step() {
        scheduled = false
        guard !over, !paused, let delegate else { return }
        if !headSent, let head {
            headSent = true
            delegate.exchangeRequestWritten()
            guard !over else { return }
            delegate.exchangeReceivedHead(head, bodyLength: Int64(length))
        } else if offset < length, file != nil {
            guard let chunk = readChunk else {
                readNextChunk()
                return
            }
            readChunk = nil
            offset += chunk.count
            chunk.withUnsafeBytes { delegate.exchangeReceivedBody($0) }
        } else if offset < length {
            let end = min(length, offset + Self.chunkSize)
            let range = offset..<end
            offset = end
            body.withUnsafeBytes { bytes in
                delegate.exchangeReceivedBody(UnsafeRawBufferPointer(rebasing: bytes[range]))
            }
        }
        guard !over else { return }
        if offset >= length {
            over = true
            delegate.exchangeFinished()
        } else if !paused {
            schedule()
        }
    }

    /// Reads the next chunk of `file` on a worker; `step` hands it over when it is back.
    private func readNextChunk() {
        guard !reading, let file, let workers else { return }
        reading = true
        let me = LoopBound(self, loop: loop)
        let loop = self.loop
        let offset = self.offset
        let submitted = workers.submit {
            let chunk = file.chunk(at: offset)
            _ = loop.execute { me.value.chunkRead(chunk) }
        }
        if !submitted { chunkRead(nil) }
    }

    /// A chunk of `file` is back (nil: it could not be read, which ends the exchange).
    private func chunkRead(_ chunk: Data?) {
        reading = false
        guard !over else { return }
        guard let chunk, !chunk.isEmpty else {
            over = true
            // The file was checked when it was looked up; a read that fails now is a disk
            // failing under it, reported as a response cut short.
            delegate?.exchangeFailed(.closedInsideResponse, context: ExchangeFailureContext(onReusedConnection: false, responseStarted: true))
            return
        }
        readChunk = chunk
        if !paused { schedule() }
    }

    func record(with recorder: WireExchangeRecorder) {}
    func pauseReading() { paused = true }
    func resumeReading() {
        guard paused else { return }
        paused = false
        schedule()
    }
    func abort() { over = true }
    func armExchangeTimer(at deadline: UInt64) {}
    var responseBodyEndsWithConnection: Bool { false }

    var connectionID: Int { -1 }
    /// Not a protocol of the wire: metrics say `nil` and `localCache` for it.
    var protocolName: String { "cache" }
    var isReused: Bool { false }
    var hasServedRequests: Bool { false }
    var timings: ConnectTimings { ConnectTimings() }
    var remoteAddressText: String? { nil }
    var tlsTransport: TLSTransport? { nil }
    var exchangeBytesWritten: Int64 { 0 }
    var exchangeBytesRead: Int64 { 0 }
    var connectionObservation: (any ConnectionObserver)? { nil }
}
