import DequeModule
import Foundation
import Synchronization

/// Writes a download's body to its file on the worker pool, so the loop thread never touches
/// the disk.
///
/// The loop queues operations (open, write a chunk, close) and never waits; one worker job at a
/// time performs them in order, taking everything queued at once. Backpressure: `push` asks the
/// loop to stop reading the connection once `pauseThreshold` bytes wait to be written (a slow
/// disk, a busy pool); after that at most one socket read (64 KiB) still lands, so the bytes
/// held stay near 1 MiB whatever the body's size. When the job has written the queue down to
/// `resumeThreshold`, it calls `onDrained`, and the loop reads again.
///
/// A write that fails (a full disk) makes the writer drop every later chunk and call
/// `onFailed` once; the task then fails. `close` always comes last and reports the file's size.
///
/// A body written from its start goes to an unnamed file (O_TMPFILE) that gets its name, `path`,
/// only when the writer closes and keeps it (complete, or partial for resume data): a task that
/// fails or is cancelled leaves nothing by closing it, and neither does a process that dies in
/// the middle (a crash, ^C). Where the file system cannot make unnamed files, the file is named
/// from the start and removed when it is not kept.
final class DownloadFileWriter: @unchecked Sendable {
    // @unchecked: `state` is a Mutex. `fd`, `position`, `opened` and `isUnnamed` are touched only
    // by the one job in flight (`State.draining` hands them from job to job under the mutex).

    /// Reading pauses while this many bytes wait to be written.
    static let pauseThreshold = 1 << 20
    /// Reading resumes once the queue is down to this many bytes.
    static let resumeThreshold = 256 << 10

    /// How the file is opened when the response head has said what its body is.
    enum Start: Equatable, Sendable {
        /// A new body: create the file, or empty it (the server ignored a range and sent it all).
        case fromBeginning
        /// The rest of a body: keep the file's first `offset` bytes and append after them.
        case appending(at: Int64)
        /// The file is already complete: leave it as it is and write nothing.
        case keepingFile
    }

    /// What becomes of the file when the writer closes.
    enum Ending: Sendable {
        /// The body is complete: the file stays (created empty if no body was written).
        case complete
        /// A cancelled download that produces resume data: the partial file stays as it is.
        case keepPartial
        /// Failed or cancelled: the file is removed.
        case discard
    }

    /// The outcome of `close`: the file's size when it was kept, or why writing failed (the
    /// file is then removed).
    struct Closed: Sendable {
        var size: Int64?
        var error: NetworkingError?
    }

    private enum Operation {
        case start(Start)
        case write([UInt8])
        case close(Ending, @Sendable (Closed) -> Void)
    }

    private struct State {
        var operations = Deque<Operation>()
        /// Bytes queued or being written.
        var queuedBytes = 0
        var peakQueuedBytes = 0
        var pauseCount = 0
        var draining = false
        /// The loop was told to stop reading and not yet told to resume.
        var paused = false
        var failure: NetworkingError?
        var failureReported = false
        var closing = false
    }

    /// The file's path.
    let path: String
    private let workers: WorkerPool
    private let onDrained: @Sendable () -> Void
    private let onFailed: @Sendable (NetworkingError) -> Void
    private let state = Mutex(State())
    private var fd: Int32 = -1
    private var position: Int64 = 0
    private var opened = false
    /// `fd` is an unnamed file, to be linked to `path` if it is kept.
    private var isUnnamed = false

    /// A writer for `path`. `onDrained` and `onFailed` run on a worker thread.
    init(path: String, workers: WorkerPool, onDrained: @escaping @Sendable () -> Void,
         onFailed: @escaping @Sendable (NetworkingError) -> Void) {
        self.path = path
        self.workers = workers
        self.onDrained = onDrained
        self.onFailed = onFailed
    }

    // MARK: Loop side

    /// Opens the file as `start` says; chunks pushed afterwards are written after it.
    func start(_ start: Start) {
        _ = enqueue(.start(start), bytes: 0)
    }

    /// Queues a chunk; returns true when the loop should stop reading.
    func push(_ bytes: [UInt8]) -> Bool {
        enqueue(.write(bytes), bytes: bytes.count)
    }

    /// Whether the writer still wants the loop paused (a drained notice may be stale).
    var wantsPause: Bool { state.withLock { $0.paused } }

    /// Writes what is queued (or, for `.discard`, skips it), closes the file and handles it as
    /// `ending` says; then calls `completion` on a worker thread. Called once, last.
    func close(_ ending: Ending, completion: @escaping @Sendable (Closed) -> Void) {
        if case .discard = ending {
            // Nobody will read what is still queued: drop it rather than write it.
            state.withLock { state in
                let queued = state.operations.reduce(0) { total, operation in
                    if case .write(let bytes) = operation { return total + bytes.count }
                    return total
                }
                state.operations.removeAll { if case .write = $0 { return true } else { return false } }
                state.queuedBytes -= queued
            }
        }
        _ = enqueue(.close(ending, completion), bytes: 0)
    }

    private func enqueue(_ operation: Operation, bytes: Int) -> Bool {
        let (startJob, pause) = state.withLock { state -> (Bool, Bool) in
            if case .close = operation {
                state.closing = true
            } else if state.closing {
                return (false, true)
            }
            if bytes > 0 && state.failure != nil {
                // Writing already failed; the task is being failed. Keep the loop paused.
                return (false, true)
            }
            state.operations.append(operation)
            state.queuedBytes += bytes
            state.peakQueuedBytes = max(state.peakQueuedBytes, state.queuedBytes)
            var pause = false
            if state.queuedBytes >= Self.pauseThreshold {
                pause = true
                if !state.paused {
                    state.paused = true
                    state.pauseCount += 1
                }
            }
            let startJob = !state.draining
            state.draining = true
            return (startJob, pause)
        }
        if startJob { workers.run { self.drain() } }
        return pause
    }

    // MARK: Worker side

    /// Performs every queued operation, batch after batch, until the queue is empty.
    private func drain() {
        while true {
            let taken = state.withLock { state -> (Deque<Operation>, failed: Bool)? in
                guard !state.operations.isEmpty else {
                    state.draining = false
                    return nil
                }
                var batch = Deque<Operation>()
                swap(&batch, &state.operations)
                return (batch, state.failure != nil)
            }
            guard let (batch, failedBefore) = taken else { return }
            var written = 0
            var failure: NetworkingError?
            var closings: [(Closed, @Sendable (Closed) -> Void)] = []
            for operation in batch {
                switch operation {
                case .start(let start):
                    if !failedBefore && failure == nil { failure = open(start) }
                case .write(let bytes):
                    written += bytes.count
                    if !failedBefore && failure == nil { failure = write(bytes) }
                case .close(let ending, let completion):
                    let known = failure ?? (failedBefore ? state.withLock { $0.failure } : nil)
                    closings.append((finish(ending, failure: known), completion))
                }
            }
            let (drained, report) = state.withLock { state -> (Bool, NetworkingError?) in
                state.queuedBytes -= written
                if let failure, state.failure == nil { state.failure = failure }
                var report: NetworkingError?
                if let failure = state.failure, !state.failureReported, !state.closing {
                    state.failureReported = true
                    report = failure
                }
                var drained = false
                if state.paused && state.queuedBytes <= Self.resumeThreshold {
                    state.paused = false
                    drained = true
                }
                return (drained, report)
            }
            if let report { onFailed(report) }
            if drained { onDrained() }
            for (closed, completion) in closings { completion(closed) }
        }
    }

    private func open(_ start: Start) -> NetworkingError? {
        if fd >= 0 {
            POSIXFile.closeDescriptor(fd)
            fd = -1
        }
        opened = true
        isUnnamed = false
        switch start {
        case .keepingFile:
            return nil
        case .fromBeginning:
            fd = POSIXFile.openUnnamed(inDirectory: (path as NSString).deletingLastPathComponent)
            if fd >= 0 {
                isUnnamed = true
            } else {
                fd = POSIXFile.openForWriting(path, create: true)
                guard fd >= 0 else { return .file(.cannotCreateFile, "cannot create the download file \(path)", errno: errno) }
            }
            position = 0
            return nil
        case .appending(let offset):
            fd = POSIXFile.openForWriting(path, create: false)
            guard fd >= 0 else { return .file(.cannotOpenFile, "cannot open the partial download \(path)", errno: errno) }
            if let status = POSIXFile.status(of: fd), status.size < offset {
                return NetworkingError(.cannotOpenFile, "the partial download \(path) has \(status.size) bytes, fewer than the \(offset) it resumes after")
            }
            // A file that grew since the resume data was made is cut back to where the server's
            // range starts.
            if let code = POSIXFile.truncateAndSeek(fd, to: offset) {
                return .file(.cannotWriteToFile, "cannot position the partial download \(path) at \(offset)", errno: code)
            }
            position = offset
            return nil
        }
    }

    private func write(_ bytes: [UInt8]) -> NetworkingError? {
        guard !bytes.isEmpty else { return nil }
        guard fd >= 0 else { return NetworkingError(.cannotWriteToFile, "a body chunk arrived before the download file was opened") }
        let ok = bytes.withUnsafeBytes { POSIXFile.writeAll(fd, $0.baseAddress!, count: $0.count) }
        guard ok else { return .file(.cannotWriteToFile, "writing the download to \(path) failed after \(position) bytes", errno: errno) }
        position += Int64(bytes.count)
        return nil
    }

    private func finish(_ ending: Ending, failure: NetworkingError?) -> Closed {
        var error = failure
        var size: Int64?
        if fd >= 0 {
            if isUnnamed && error == nil && ending != .discard, let code = POSIXFile.link(unnamed: fd, to: path) {
                error = .file(.cannotWriteToFile, "naming the download file \(path) failed", errno: code)
            }
            isUnnamed = false
            if let code = POSIXFile.closeDescriptor(fd), error == nil {
                error = .file(.cannotWriteToFile, "closing the download file \(path) failed", errno: code)
            }
            fd = -1
            size = position
        }
        switch ending {
        case .discard:
            // An unnamed file went with its descriptor; a named one (or a resumed download's
            // partial file) is removed.
            POSIXFile.remove(path)
            return Closed(size: nil, error: error)
        case .complete, .keepPartial:
            if error != nil {
                POSIXFile.remove(path)
                return Closed(size: nil, error: error)
            }
            if size == nil {
                if case .complete = ending, !opened {
                    // No head opened the file (an empty delivered response): an empty file.
                    let created = POSIXFile.openForWriting(path, create: true)
                    guard created >= 0 else {
                        return Closed(size: nil, error: .file(.cannotCreateFile, "cannot create the download file \(path)", errno: errno))
                    }
                    POSIXFile.closeDescriptor(created)
                }
                // The file as it stands: a kept partial file, or a complete one left untouched.
                guard let status = POSIXFile.status(atPath: path), status.isRegularFile else {
                    return Closed(size: nil, error: nil)
                }
                size = status.size
            }
            return Closed(size: size, error: nil)
        }
    }

    // MARK: For tests

    /// The most bytes ever queued at once, and how often the loop was paused.
    var peakQueuedByteCount: Int { state.withLock { $0.peakQueuedBytes } }
    var pauseCount: Int { state.withLock { $0.pauseCount } }
}
