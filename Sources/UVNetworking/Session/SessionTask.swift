import Foundation
import HTTPTypes
import Synchronization
import UVHTTP1

/// A request's life as the caller sees it, like URLSessionTask: created suspended, started with
/// `resume()`, ended once with its completion handler. Safe to use from any thread.
public class SessionTask: @unchecked Sendable {
    // @unchecked: mutable state lives in `snapshot` (a Mutex) and atomics; the rest is immutable.

    /// The task's state, numbered like URLSessionTask.State.
    public enum State: Int, Sendable {
        case running = 0, suspended = 1, canceling = 2, completed = 3
    }

    /// Unique within its session.
    public let taskIdentifier: Int
    /// The request as given.
    public let originalRequest: Request
    /// The request being sent: `originalRequest` (with the trace context fields of the task's
    /// span, when the session has a tracer) until a redirect is followed, then the request the
    /// redirect led to.
    public var currentRequest: Request { snapshot.withLock { $0.redirected?.request } ?? sentRequest }

    struct Snapshot {
        var state: State = .suspended
        /// Set when a redirect is followed. Boxed: most tasks follow none, and an optional
        /// request inline would make every snapshot (made, copied into its lock and destroyed
        /// per task) several times larger.
        var redirected: Redirected?
        /// The raw head from the loop, converted on first request.
        var head: ResponseHead?
        var response: HTTPResponse?
        var error: (any Error & Sendable)?
        var uploadProgress: Progress?
        var downloadProgress: Progress?
        var retryCount = 0
    }

    /// The request a followed redirect led to (`Snapshot.redirected`).
    final class Redirected: Sendable {
        let request: Request
        init(_ request: Request) { self.request = request }
    }

    let snapshot = Mutex(Snapshot())
    private let bytesReceived = Atomic<Int64>(0)
    private let bytesSent = Atomic<Int64>(0)
    private let bytesExpectedToReceive = Atomic<Int64>(-1)
    private let bytesExpectedToSend: Int64
    private let discardsBody = Atomic<Bool>(false)
    private let bytesDiscarded = Atomic<Int64>(0)
    let progressDeliveryPending = Atomic<Bool>(false)
    /// Whether anyone has asked for a Progress object, so the loop skips the lock when nobody has.
    private let progressObserved = Atomic<Bool>(false)
    let completionHandler: CompletionHandler?
    /// The request checked and encoded at creation; nil when it cannot be sent.
    ///
    /// Kept apart from the failure (not one `Result`): the runner reads it on every start, and
    /// reading a `Result` out of the task copies the whole enum, error payload and all.
    let preparedRequest: PreparedRequest?
    /// The request checked and encoded at creation, or why it cannot be sent.
    var prepared: Result<PreparedRequest, NetworkingError> {
        if let preparedRequest { return .success(preparedRequest) }
        return .failure(extras!.preparationFailure!)
    }
    var isHEAD: Bool { originalRequest.method == .head }

    /// Where the task is on the loop. Loop thread only: it is what keeps a late `cancel()` from
    /// starting a task that already finished.
    enum LoopPhase { case notStarted, running, finished }
    var loopPhase = LoopPhase.notStarted
    /// The engine running the task, while it runs. Loop thread only. Its runner's: a reference
    /// of the task's own would be one more to take and drop per task.
    var loopEngine: SessionEngine? { loopRunner?.engine }
    /// The task's loop-side half while it runs (a cycle, broken when the task finishes). Loop
    /// thread only.
    var loopRunner: TaskRunner?

    /// The manager's registry's links (TaskRegistry.swift), guarded by the registry.
    var registryNext: SessionTask?
    var registryPrevious: Unmanaged<SessionTask>?
    var registryIncomingNext: Unmanaged<SessionTask>?
    var registryMembership = TaskRegistry.Membership.none

    /// What few tasks have (`Extras`, below): nil for most, so that making and
    /// destroying a task stores and releases one nil reference, not one per field.
    let extras: Extras?
    /// The task's span, when its session has a tracer (Observability/Tracing); nil otherwise.
    let trace: TaskTrace?
    /// The task's part in its session's cache (Cache/TaskCacheState.swift); nil when the
    /// session has none.
    let cacheState: TaskCacheState?

    /// The async API's seams. Each is set at most once, right after the task is made and before
    /// it is resumed or cancelled, and only read afterwards (on the loop, then on a worker): the
    /// loop's job queue orders the write before every read. Inline, not in `extras`: a box made
    /// per async task would be one more allocation for it.
    /// Receives the outcome on the worker instead of `completionHandler` (`data(for:)`).
    var outcomeReceiver: (any TaskOutcomeReceiver)?
    /// Streaming mode (`bytes(for:)`): the runner sends the head, the body and the end here.
    var bodyStream: BodyStreamBuffer?

    /// AFNetworking's completion: the response (nil if none arrived), the serialized object,
    /// and the error.
    public typealias CompletionHandler = @Sendable (HTTPResponse?, Any?, (any Error)?) -> Void
    let manager: SessionManager
    var uploadProgressHandler: (@Sendable (Progress) -> Void)? { extras?.uploadProgressHandler }
    var downloadProgressHandler: (@Sendable (Progress) -> Void)? { extras?.downloadProgressHandler }

    /// `preparationFailure`: why the task cannot be sent (an upload's unreadable file), found
    /// before the task was made; the task then fails with it when resumed, before any socket.
    init(identifier: Int, request: Request, manager: SessionManager,
         uploadProgress: (@Sendable (Progress) -> Void)?, downloadProgress: (@Sendable (Progress) -> Void)?,
         completionHandler: CompletionHandler?, preparationFailure: NetworkingError? = nil) {
        // With a tracer, the span starts here, on the caller's thread, under its ServiceContext,
        // and the request sent is the caller's with the span's context in its fields
        // (`trace.request(from:)`, `sentRequest`); `originalRequest` stays as given. Without one,
        // a nil check, nothing more (Observability/Tracing).
        let trace: TaskTrace?
        if let tracing = manager.tracing {
            trace = TaskTrace(tracer: tracing.tracer, request: request, template: tracing.template(for: request))
        } else {
            trace = nil
        }
        self.completionHandler = completionHandler
        // Each way sets `extras` itself: a local optional error for all of them would be
        // destroyed per task through the runtime's generic Optional witness (~60 instructions).
        if var failure = preparationFailure {
            failure.failingURL = failure.failingURL ?? request.url
            self.preparedRequest = nil
            extras = Extras(preparationFailure: failure, uploadProgressHandler: uploadProgress, downloadProgressHandler: downloadProgress)
        } else {
            do throws(NetworkingError) {
                if let trace {
                    self.preparedRequest = try manager.preparedRequests.prepare(request, tracedBy: trace, for: manager)
                } else {
                    self.preparedRequest = try manager.preparedRequests.prepare(request, for: manager)
                }
                extras = uploadProgress != nil || downloadProgress != nil
                    ? Extras(preparationFailure: nil, uploadProgressHandler: uploadProgress, downloadProgressHandler: downloadProgress)
                    : nil
            } catch {
                self.preparedRequest = nil
                extras = Extras(preparationFailure: error, uploadProgressHandler: uploadProgress, downloadProgressHandler: downloadProgress)
            }
        }
        self.taskIdentifier = identifier
        self.bytesExpectedToSend = request.expectedBodyLength
        self.trace = trace
        self.cacheState = manager.cache.map(TaskCacheState.init)
        // Last: the arguments are the caller's (+1) references, moved into the fields when
        // nothing reads them afterwards; a read after the store costs a retain and a release.
        self.originalRequest = request
        self.manager = manager
    }

    /// The current state.
    public var state: State { snapshot.withLock { $0.state } }
    /// The response head, once it arrived.
    public var response: HTTPResponse? {
        snapshot.withLock { snapshot in
            if snapshot.response == nil, let head = snapshot.head { snapshot.response = head.httpResponse }
            return snapshot.response
        }
    }
    /// The protocol the response came over, in ALPN's names as
    /// `TransactionMetrics.networkProtocolName` has them: "h2" or "http/1.1"; nil until a
    /// response head arrived. For a caller that wants only this, it costs a lock, not the
    /// collection of the task's metrics.
    public var networkProtocolName: String? {
        snapshot.withLock { $0.head.map { $0.versionMajor == 2 ? "h2" : "http/1.1" } }
    }
    /// How many times the request was sent again because the session's retrier asked
    /// (`SessionConfiguration.retrier`); 0 for a task that took one attempt. The library's own
    /// resends (a reused connection found closed, a redirect) do not count.
    public var retryCount: Int { snapshot.withLock { $0.retryCount } }
    /// How the session's cache took part (`SessionConfiguration.cache`): hit, revalidated,
    /// miss or bypass. nil when the session has no cache, and until the task has looked it up.
    public var cacheOutcome: CacheOutcome? { cacheState?.outcome }
    /// The error the task ended with, if it failed.
    public var error: (any Error & Sendable)? { snapshot.withLock { $0.error } }
    /// Body bytes received so far (after decoding the transfer coding).
    public var countOfBytesReceived: Int64 { bytesReceived.load(ordering: .relaxed) }
    /// Body bytes sent so far.
    public var countOfBytesSent: Int64 { bytesSent.load(ordering: .relaxed) }
    /// Whether the response body is counted and dropped as it arrives instead of kept for the
    /// response serializer, so memory stays flat whatever the body's size: for callers that want
    /// a response's status and size but not its bytes (a batch fetcher checking URLs, a load
    /// generator), or that take the bytes from `dataTaskDidReceiveData` themselves, as a
    /// URLSession delegate does. The serializer then gets no data. Set it before `resume()`;
    /// later changes are ignored. Download tasks and `bytes(for:)` streams ignore it.
    public var discardsResponseBody: Bool {
        get { discardsBody.load(ordering: .relaxed) }
        set { discardsBody.store(newValue, ordering: .relaxed) }
    }
    /// With `discardsResponseBody`, the final response's body bytes dropped so far, after
    /// content decoding (gzip, deflate, br, zstd): the size the serializer would have been given.
    public var countOfBytesDiscarded: Int64 { bytesDiscarded.load(ordering: .relaxed) }
    /// The response's Content-Length, or -1 while unknown.
    public var countOfBytesExpectedToReceive: Int64 { bytesExpectedToReceive.load(ordering: .relaxed) }
    /// The request body's length (-1 for a streamed body of unknown length).
    public var countOfBytesExpectedToSend: Int64 { bytesExpectedToSend }

    /// Upload progress (total: the body's length). Created on first use.
    public var uploadProgress: Progress {
        snapshot.withLock { snapshot in
            if let progress = snapshot.uploadProgress { return progress }
            // Flag first, then read the count (both sequentially consistent, as is the loop's
            // add-then-check): either the loop sees the flag, or this read sees its bytes.
            progressObserved.store(true, ordering: .sequentiallyConsistent)
            let progress = Progress(totalUnitCount: bytesExpectedToSend)
            progress.completedUnitCount = bytesSent.load(ordering: .sequentiallyConsistent)
            controlTask(with: progress)
            snapshot.uploadProgress = progress
            return progress
        }
    }

    /// Download progress (total: Content-Length, or -1 while unknown). Created on first use.
    public var downloadProgress: Progress {
        snapshot.withLock { snapshot in
            if let progress = snapshot.downloadProgress { return progress }
            progressObserved.store(true, ordering: .sequentiallyConsistent)
            let progress = Progress(totalUnitCount: bytesExpectedToReceive.load(ordering: .relaxed))
            progress.completedUnitCount = bytesReceived.load(ordering: .sequentiallyConsistent)
            controlTask(with: progress)
            snapshot.downloadProgress = progress
            return progress
        }
    }

    /// As in AFNetworking, cancelling, pausing or resuming a task's Progress does the same to the
    /// task. The handlers hold the task weakly: a Progress kept by a caller keeps nothing alive.
    private func controlTask(with progress: Progress) {
        progress.isCancellable = true
        progress.isPausable = true
        progress.cancellationHandler = { [weak self] in self?.cancel() }
        progress.pausingHandler = { [weak self] in self?.suspend() }
        progress.resumingHandler = { [weak self] in self?.resume() }
    }

    /// Starts the task, or resumes it after `suspend()`.
    public func resume() {
        let changed = snapshot.withLock { snapshot -> Bool in
            guard snapshot.state == .suspended else { return false }
            snapshot.state = .running
            return true
        }
        guard changed else { return }
        // Tested without binding: a session without a cache takes and drops no reference.
        if cacheState != nil && cacheHoldsResume() { return }
        manager.send(.resume, for: self)
    }

    /// With a cache, the first resume looks the request up on a worker first, and that lookup
    /// sends the resume (SessionManager+Cache.swift): true when it holds this one.
    @inline(never)
    private func cacheHoldsResume() -> Bool {
        guard let cacheState else { return false }
        switch cacheState.start() {
        case .lookUp:
            manager.lookUp(self, cacheState)
            return true
        case .wait:
            return true
        case .proceed:
            return false
        }
    }

    /// Pauses the task: before it starts, it does not start; while it runs, reading stops.
    public func suspend() {
        let changed = snapshot.withLock { snapshot -> Bool in
            guard snapshot.state == .running else { return false }
            snapshot.state = .suspended
            return true
        }
        if changed { manager.send(.suspend, for: self) }
    }

    /// Cancels the task: it completes with `NetworkingError.Code.cancelled`, unless it has already
    /// completed.
    public func cancel() {
        requestCancellation()
    }

    /// `cancel()`, saying whether this call is the one that cancelled the task.
    @discardableResult
    func requestCancellation() -> Bool {
        let changed = snapshot.withLock { snapshot -> Bool in
            guard snapshot.state == .running || snapshot.state == .suspended else { return false }
            snapshot.state = .canceling
            return true
        }
        if changed { manager.send(.cancel, for: self) }
        return changed
    }

    /// `SessionManager.send`'s job, on the loop: hands the public state to the engine.
    func stateChangedOnLoop() {
        let operation: SessionManager.TaskOperation
        switch state {
        case .running: operation = .resume
        case .suspended: operation = .suspend
        case .canceling: operation = .cancel
        case .completed: return
        }
        manager.perform(operation, for: self)
    }

    // MARK: Updates from the loop thread

    func recordResponse(_ head: ResponseHead, expectedLength: Int64?) {
        if let expectedLength { bytesExpectedToReceive.store(expectedLength, ordering: .relaxed) }
        let progress = snapshot.withLock { snapshot -> Progress? in
            snapshot.head = head
            snapshot.response = nil
            return snapshot.downloadProgress
        }
        if let progress, let expectedLength { progress.totalUnitCount = expectedLength }
    }

    /// The session's retrier asked for another attempt: nothing of the last response stands.
    func recordRetry() {
        bytesExpectedToReceive.store(-1, ordering: .relaxed)
        snapshot.withLock {
            $0.retryCount += 1
            $0.head = nil
            $0.response = nil
        }
    }

    /// A redirect was followed: `request` is sent next.
    func recordRedirect(to request: Request) {
        let redirected = Redirected(request)
        snapshot.withLock { $0.redirected = redirected }
    }

    /// Stores the response built off the loop, so `response` need not build it again.
    func cacheResponse(_ response: HTTPResponse) {
        snapshot.withLock { $0.response = response }
    }

    /// Adds received body bytes; returns the download Progress if anyone is watching it.
    func recordReceived(_ count: Int) {
        let total = bytesReceived.add(Int64(count), ordering: .sequentiallyConsistent).newValue
        guard progressObserved.load(ordering: .sequentiallyConsistent) else { return }
        if let progress = snapshot.withLock({ $0.downloadProgress }) { progress.completedUnitCount = total }
    }

    /// Counts dropped body bytes (`discardsResponseBody`); nil starts over, for a new attempt.
    func recordDiscarded(_ count: Int?) {
        if let count {
            bytesDiscarded.add(Int64(count), ordering: .relaxed)
        } else {
            bytesDiscarded.store(0, ordering: .relaxed)
        }
    }

    /// A download resumes at `offset`: the bytes already in its file count as received, so its
    /// progress runs over the whole file.
    func recordResumedBytes(_ offset: Int64) {
        bytesReceived.store(offset, ordering: .sequentiallyConsistent)
        guard progressObserved.load(ordering: .sequentiallyConsistent) else { return }
        if let progress = snapshot.withLock({ $0.downloadProgress }) { progress.completedUnitCount = offset }
    }

    func recordSent(_ count: Int64) {
        bytesSent.store(count, ordering: .sequentiallyConsistent)
        guard progressObserved.load(ordering: .sequentiallyConsistent) else { return }
        if let progress = snapshot.withLock({ $0.uploadProgress }) { progress.completedUnitCount = count }
    }

    /// Marks the task completed with `error`; false when it already was (the loop's ending of a
    /// task and `completeWithoutLoop` never both run, and this keeps it so).
    @discardableResult
    func recordCompletion(error: (any Error & Sendable)?) -> Bool {
        let claimed = snapshot.withLock { snapshot in
            guard snapshot.state != .completed else { return false }
            snapshot.state = .completed
            snapshot.error = error
            return true
        }
        // The span ends with the task, once (Observability/Tracing).
        if claimed, let trace { endSpan(trace, error: error) }
        return claimed
    }
}

/// A task whose response body is collected in memory, like URLSessionDataTask.
public final class DataTask: SessionTask, @unchecked Sendable {}

/// A task that sends a body from a file, from memory or from a stream, like
/// URLSessionUploadTask (see `SessionManager.uploadTask`). Its response is collected in memory
/// and serialized, as a data task's; the manager's data-task hooks (`dataTaskDidReceiveResponse`,
/// `dataTaskDidReceiveData`) are not called for it.
public final class UploadTask: SessionTask, @unchecked Sendable {}

extension SessionTask {
    /// A task's rarely set fields, boxed (`SessionTask.extras`): a preparation failure and the
    /// progress handlers. Most tasks have none of them and make no box. (A trace is the task's
    /// own field: every task of a traced session has one, and a box for it alone would be one
    /// more allocation per task.)
    final class Extras: Sendable {
        /// Why the task cannot be sent (an upload's unreadable file, a request that does not encode).
        let preparationFailure: NetworkingError?
        let uploadProgressHandler: (@Sendable (Progress) -> Void)?
        let downloadProgressHandler: (@Sendable (Progress) -> Void)?

        init(preparationFailure: NetworkingError?, uploadProgressHandler: (@Sendable (Progress) -> Void)?,
             downloadProgressHandler: (@Sendable (Progress) -> Void)?) {
            self.preparationFailure = preparationFailure
            self.uploadProgressHandler = uploadProgressHandler
            self.downloadProgressHandler = downloadProgressHandler
        }
    }

    /// Whether the task is a DownloadTask: a comparison of class metadata (DownloadTask is
    /// final), not a dynamic cast, which walks the class chain to find that most tasks are not.
    var isDownload: Bool { type(of: self) == DownloadTask.self }
}
