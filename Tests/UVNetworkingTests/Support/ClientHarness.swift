import Dispatch
import Foundation
import HTTPTypes
import Synchronization
import Testing
import Tracing
@_spi(Testing) @testable import UVNetworking

/// What a task's completion handler received.
struct Outcome: @unchecked Sendable {
    // @unchecked: `object` is Data or a JSON object made on the worker and only read by the test.
    var response: HTTPResponse?
    var object: Any?
    var error: (any Error)?
    /// How many times the completion handler ran (must be exactly 1).
    var calls = 1
    /// The protocol the response came over ("h2", "http/1.1"; `SessionTask.networkProtocolName`).
    var networkProtocolName: String?

    var status: Int? { response?.status.code }
    var data: Data? { object as? Data }
    var text: String? { data.map { String(decoding: $0, as: UTF8.self) } }
    var code: NetworkingError.Code? { (error as? NetworkingError)?.code }
}

/// Accepts every status, so tests see every body; still runs on the worker pool like any serializer.
struct AcceptAllSerializer: ResponseSerializer {
    func responseObject(for response: HTTPResponse, data: Data?) throws -> Any? { data ?? Data() }
}

/// A session for one test, with helpers to run tasks synchronously and, at the end, proof that
/// the session left nothing behind: no handle open on the loop, no file descriptor more than
/// before it started.
///
/// The session runs on an event loop of the harness's own (unless `makeManager` picks another),
/// so the loop's handle count is this test's alone. The descriptor count is the process's: the
/// test tiers run one test at a time per process (scripts/run-tests.sh), which keeps it exact.
final class ClientHarness: @unchecked Sendable {
    let manager: SessionManager
    /// The harness's own loop: the default session's, shut down by `finish()` (or when the
    /// harness goes away).
    let loop: EventLoop
    let queue = DispatchQueue(label: "uvnetworking.tests.completions")
    private let baselineFileDescriptors: Int
    private let baselineHandles: Int
    private let baselineLoopHandles: Int
    private let baselineDescriptorTargets: [Int32: String]

    /// One-time descriptors (libdispatch's eventfd and epoll, and whatever else the runtime opens
    /// lazily on a first exchange) must exist before the baseline, not appear inside the first
    /// test: one full exchange through a throw-away session does that.
    private static let warmUp: Void = {
        let done = DispatchSemaphore(value: 0)
        DispatchQueue(label: "uvnetworking.tests.warmup").asyncAfter(deadline: .now() + .milliseconds(1)) { done.signal() }
        _ = done.wait(timeout: .now() + 5)
        guard let server = try? ScriptedServer({ connection in
            try connection.serveKeepAlive { _ in ScriptedResponse.text("warm") }
        }) else { return }
        let manager = SessionManager()
        manager.completionQueue = DispatchQueue(label: "uvnetworking.tests.warmup.completions")
        manager.dataTask(with: Request(url: URL(string: "http://127.0.0.1:\(server.port)/")!), completionHandler: { _, _, _ in
            done.signal()
        }).resume()
        _ = done.wait(timeout: .now() + 5)
        manager.invalidateSessionCancelingTasks(true, resetSession: false)
        server.stop()
    }()

    private static func warmUpDispatch() { _ = warmUp }

    /// A loop opens a descriptor of its own on its first connection (and keeps it until it shuts
    /// down): one refused connection makes it before the test starts, so that a test's own
    /// descriptor baseline sees the loop as it would see the long-lived shared one.
    private static func warmUpLoop(_ loop: EventLoop) {
        let done = DispatchSemaphore(value: 0)
        // No spans: a test may have scoped the process's tracer around the harness.
        var configuration = SessionConfiguration()
        configuration.tracer = NoOpTracer()
        let manager = SessionManager(configuration: configuration, loop: loop)
        manager.completionQueue = DispatchQueue(label: "uvnetworking.tests.harness.warmup")
        manager.dataTask(with: Request(url: URL(string: "http://127.0.0.1:1/")!), completionHandler: { _, _, _ in
            done.signal()
        }).resume()
        _ = done.wait(timeout: .now() + 5)
        manager.invalidateSessionCancelingTasks(true, resetSession: false)
    }

    /// A session made by `makeManager` (by default a `SessionManager` on the harness's own loop)
    /// from a configuration that `configure` adjusts.
    init(_ configure: (inout SessionConfiguration) -> Void = { _ in },
         makeManager: ((SessionConfiguration) -> SessionManager)? = nil) {
        // The shared loop and worker pool exist before the baseline is taken (sessions that a
        // test makes on them must leave them as they were too).
        baselineHandles = EventLoop.shared.openHandleCountFromOutside()
        _ = WorkerPool.shared
        Self.warmUpDispatch()
        DispatchTimerWarmUp.openTimerDescriptors()
        // Before the harness's loop: its own descriptors must be gone once `finish` shut it down.
        baselineFileDescriptors = openFileDescriptorCount()
        baselineDescriptorTargets = fileDescriptorTargets()
        do {
            loop = try EventLoop(name: "uvnetworking.tests.harness")
        } catch {
            fatalError("a test harness could not start its event loop: \(error)")
        }
        Self.warmUpLoop(loop)
        baselineLoopHandles = loop.openHandleCountFromOutside()
        var configuration = SessionConfiguration()
        configure(&configuration)
        manager = makeManager?(configuration) ?? SessionManager(configuration: configuration, loop: loop)
        manager.completionQueue = queue
        manager.responseSerializer = AcceptAllSerializer()
    }

    /// A request for `url` with optional method, fields and body.
    static func request(_ url: String, method: HTTPRequest.Method = .get, fields: [(String, String)] = [],
                        body: String? = nil, timeout: TimeInterval = 30) -> Request {
        var request = Request(url: URL(string: url)!, method: method, body: body.map { Data($0.utf8) }, timeoutInterval: timeout)
        for (name, value) in fields { request.addValue(value, forHTTPHeaderField: name) }
        return request
    }

    /// Creates a task whose outcome can be awaited with `wait`. Does not resume it.
    func makeTask(_ request: Request) -> (task: DataTask, wait: (Double) -> Outcome?) {
        let result = Mutex<Outcome?>(nil)
        let done = DispatchSemaphore(value: 0)
        let task = manager.dataTask(with: request, completionHandler: { response, object, error in
            let boxed = Outcome(response: response, object: object, error: error)
            let first = result.withLock { current -> Bool in
                if current == nil { current = boxed; return true }
                current!.calls += 1
                return false
            }
            if first { done.signal() }
        })
        let wait: (Double) -> Outcome? = { seconds in
            guard done.wait(timeout: .now() + seconds) == .success else { return nil }
            // Give a second, wrong call of the handler a moment to show itself.
            var outcome = result.withLock { $0 }
            outcome?.networkProtocolName = task.networkProtocolName
            return outcome
        }
        return (task, wait)
    }

    /// Runs `request` to completion (at most `seconds`); records a test failure on a hang.
    func fetch(_ request: Request, within seconds: Double = 30, sourceLocation: SourceLocation = #_sourceLocation) -> Outcome {
        let (task, wait) = makeTask(request)
        task.resume()
        guard let outcome = wait(seconds) else {
            Issue.record("task \(task.taskIdentifier) did not complete within \(seconds) s", sourceLocation: sourceLocation)
            task.cancel()
            return Outcome(response: nil, object: nil, error: nil, calls: 0)
        }
        return outcome
    }

    func fetch(_ url: String, method: HTTPRequest.Method = .get, fields: [(String, String)] = [], body: String? = nil,
               timeout: TimeInterval = 30, sourceLocation: SourceLocation = #_sourceLocation) -> Outcome {
        fetch(Self.request(url, method: method, fields: fields, body: body, timeout: timeout), sourceLocation: sourceLocation)
    }

    /// Invalidates the session (cancelling what is left), then checks that every loop handle and
    /// file descriptor it opened is closed again. Waits for the invalidation itself, not for
    /// `sessionDidBecomeInvalid`, which runs once per session: a test may have invalidated it
    /// already.
    func finish(sourceLocation: SourceLocation = #_sourceLocation) {
        invalidate(sourceLocation: sourceLocation)
        expectNothingLeft(sourceLocation: sourceLocation)
    }

    /// Invalidates the session (cancelling what is left) and waits for that, leaving the
    /// harness's loop running: for a test that goes on with the invalidated session, and ends
    /// with `expectNothingLeft()`.
    func invalidate(sourceLocation: SourceLocation = #_sourceLocation) {
        let invalidated = DispatchSemaphore(value: 0)
        manager.invalidate(deadline: .now, resetSession: false) { invalidated.signal() }
        #expect(invalidated.wait(timeout: .now() + 10) == .success, "session never became invalid", sourceLocation: sourceLocation)
    }

    /// Checks that every loop handle and file descriptor the session opened is closed again
    /// (after a shutdown or an invalidation that already ended the session), then shuts the
    /// harness's loop down: the harness is done.
    func expectNothingLeft(sourceLocation: SourceLocation = #_sourceLocation) {
        let loopHandlesClosed = waitUntil(timeout: 5) { loop.openHandleCountFromOutside() == baselineLoopHandles }
        #expect(loopHandlesClosed, "handles left open on the harness's loop: \(loop.openHandleCountFromOutside()) > \(baselineLoopHandles)",
                sourceLocation: sourceLocation)
        let handlesClosed = waitUntil(timeout: 5) { EventLoop.shared.openHandleCountFromOutside() == baselineHandles }
        #expect(handlesClosed, "handles left open on the shared loop: \(EventLoop.shared.openHandleCountFromOutside()) > \(baselineHandles)",
                sourceLocation: sourceLocation)
        // The loop's own descriptors (epoll, eventfd) go with it.
        loop.shutdown()
        let descriptorsClosed = waitUntil(timeout: 5) { openFileDescriptorCount() <= baselineFileDescriptors }
        if !descriptorsClosed {
            let now = fileDescriptorTargets()
            let new = now.filter { baselineDescriptorTargets[$0.key] != $0.value }.sorted { $0.key < $1.key }
            // The runtime opens timer descriptors lazily (libdispatch one per clock, each
            // CFRunLoop one of its own), and with tiers side by side one can come after the
            // warm-up. The library never opens one: libuv times with epoll's timeout, and none of
            // libuv, c-ares, nghttp2 or OpenSSL calls timerfd_create. So a new timer descriptor
            // is the runtime's, not a leak; anything else is.
            let leaked = new.filter { $0.value != "anon_inode:[timerfd]" }.map { "\($0.key) -> \($0.value)" }
            // In the expectation's own line, so that a run's summary shows which descriptors.
            #expect(leaked == [], "file descriptors leaked", sourceLocation: sourceLocation)
        }
    }

    /// A test that never called `finish()` still ends the harness's loop thread. (Waiting for it
    /// is not allowed on a loop thread, where a handler may have dropped the last reference.)
    deinit {
        let loop = loop
        if EventLoop.onAnyLoopThread { Thread.detachNewThread { loop.shutdown() } } else { loop.shutdown() }
    }
}

/// Waits until `manager` lists no task, then for `group`'s notification, and returns what
/// `completed` counted when the notification ran (nil if either wait timed out): a group left
/// only after every handler ran reads the full count.
func completionsCountedWhenGroupNotifies(_ manager: SessionManager, _ group: DispatchGroup,
                                         _ completed: @escaping @Sendable () -> Int) -> Int? {
    // The group is entered only once tasks finish; wait until all have, then notify.
    guard waitUntil(timeout: 10, { manager.tasks.isEmpty }) else { return nil }
    let notified = DispatchSemaphore(value: 0)
    let seenAtNotify = Mutex(-1)
    group.notify(queue: .global()) {
        seenAtNotify.withLock { $0 = completed() }
        notified.signal()
    }
    guard notified.wait(timeout: .now() + 10) == .success else { return nil }
    return seenAtNotify.withLock { $0 }
}
