import Dispatch
import Foundation
import Histogram
import HTTPTypes
import UVNetworking

/// What one closed-loop run of the task model measured.
public struct LoadResult: Sendable {
    /// Tasks whose completion handler ran.
    public var completed: Int
    /// Completions with an error, a status other than 200, or a body other than the expected one.
    public var errors: Int
    /// The first such failure, described.
    public var firstError: String?
    /// From the first resume() to the last completion, in seconds.
    public var elapsed: Double
    /// resume() to completion handler, in nanoseconds.
    public var latency: Histogram<UInt64>

    public var requestsPerSecond: Double { elapsed > 0 ? Double(completed) / elapsed : 0 }
    public var isValid: Bool { errors == 0 && completed > 0 }
}

/// Drives UVNetworking through its public task API with a fixed number of tasks in flight: each
/// completion handler checks its response and resumes the next task, until the time or the
/// request budget runs out. State is touched only where completions run: the completion queue (a
/// serial queue), or the loop thread with `deliversOnEventLoop`; so the driver itself takes no
/// lock.
public final class ClosedLoopLoad: @unchecked Sendable {
    public let manager: SessionManager
    public let queue: DispatchQueue
    /// Completions run on the session's loop thread, and each resumes the next task there.
    public let deliversOnEventLoop: Bool
    private let request: Request
    private let expectedBody: Data

    // Completion-queue state.
    private var stopAt: UInt64 = 0
    private var remainingLaunches = 0
    private var inFlight = 0
    private var completed = 0
    private var errors = 0
    private var firstError: String?
    private var lastCompletion: UInt64 = 0
    private var recordLatency = true
    private var latency = ClosedLoopLoad.makeHistogram()
    private var finished: DispatchSemaphore?

    /// GETs `url` with a session with `connections` connections per host, HTTPResponseSerializer (the body as
    /// Data, status validated) and a private serial completion queue.
    /// With `deliversOnEventLoop`, completions run on the loop thread instead of the queue.
    public convenience init(url: URL, connections: Int = 64, expectedBody: String = NginxServer.defaultBody,
                            deliversOnEventLoop: Bool = false) {
        var configuration = SessionConfiguration()
        configuration.maximumConnectionsPerHost = connections
        self.init(request: Request(url: url), configuration: configuration, expectedBody: expectedBody,
                  deliversOnEventLoop: deliversOnEventLoop)
    }

    /// Sends `request` over and over with a session made from `configuration` (the HTTPS runs:
    /// trusted CAs, session resumption, `Connection: close`).
    public init(request: Request, configuration: SessionConfiguration, expectedBody: String = NginxServer.defaultBody,
                deliversOnEventLoop: Bool = false) {
        manager = SessionManager(configuration: configuration)
        queue = DispatchQueue(label: "uvbench.completions")
        self.deliversOnEventLoop = deliversOnEventLoop
        manager.completionQueue = queue
        manager.deliversOnEventLoop = deliversOnEventLoop
        manager.responseSerializer = HTTPResponseSerializer()
        self.request = request
        self.expectedBody = Data(expectedBody.utf8)
    }

    static func makeHistogram() -> Histogram<UInt64> {
        Histogram<UInt64>(lowestDiscernibleValue: 1_000, highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
    }

    /// Runs with `concurrency` tasks in flight for `seconds`, or for exactly `requests` tasks.
    /// Blocks the calling thread (which must not be the completion queue) until every task ended.
    public func run(concurrency: Int, seconds: Double? = nil, requests: Int? = nil, recordLatency: Bool = true) -> LoadResult {
        precondition(seconds != nil || requests != nil, "give a duration or a request count")
        let finished = DispatchSemaphore(value: 0)
        let start = monotonicNanoseconds()
        queue.sync {
            self.stopAt = seconds.map { start + UInt64($0 * 1e9) } ?? .max
            self.remainingLaunches = requests ?? .max
            self.inFlight = 0
            self.completed = 0
            self.errors = 0
            self.firstError = nil
            self.lastCompletion = start
            self.recordLatency = recordLatency
            self.latency.reset()
            self.finished = finished
        }
        let launchAll: @Sendable () -> Void = {
            for _ in 0..<concurrency where self.remainingLaunches > 0 { self.launch() }
            if self.inFlight == 0 { finished.signal() }
        }
        // The state above was written before this hand-off; the semaphore orders the driver's
        // last writes before the read below.
        if deliversOnEventLoop {
            manager.loop.execute(launchAll)
        } else {
            queue.async(execute: launchAll)
        }
        finished.wait()
        return queue.sync {
            LoadResult(completed: completed, errors: errors, firstError: firstError,
                       elapsed: Double(lastCompletion - start) / 1e9, latency: latency)
        }
    }

    /// Completion queue (or loop thread) only.
    private func launch() {
        remainingLaunches -= 1
        inFlight += 1
        let started = monotonicNanoseconds()
        let task = manager.dataTask(with: request, completionHandler: { [self] response, object, error in
            // Already on `queue` (the manager's completion queue), or on the loop thread.
            self.completed(started: started, response: response, object: object, error: error)
        })
        task.resume()
    }

    private func completed(started: UInt64, response: HTTPResponse?, object: Any?, error: (any Error)?) {
        let now = monotonicNanoseconds()
        inFlight -= 1
        completed += 1
        lastCompletion = now
        if recordLatency { latency.record(now &- started) }
        if let error {
            noteError("\(error)")
        } else if response?.status.code != 200 {
            noteError("status \(response.map { String($0.status.code) } ?? "none")")
        } else if let body = object as? Data, body == expectedBody {
            // The expected response.
        } else {
            noteError("unexpected body: \((object as? Data).map { "\($0.count) bytes" } ?? String(describing: object))")
        }
        if remainingLaunches > 0 && now < stopAt {
            launch()
        } else if inFlight == 0 {
            finished?.signal()
        }
    }

    private func noteError(_ description: String) {
        errors += 1
        if firstError == nil { firstError = description }
    }

    /// Lets every open connection close (the manager is not usable afterwards).
    public func shutdown() {
        manager.invalidateSessionCancelingTasks(false, resetSession: false)
    }
}
