import Dispatch
import Foundation
import Synchronization
import UVNetworking

/// Fetches every URL of a `URLInput` with at most `concurrency` in flight, writing a record per
/// URL and counting the results.
///
/// The input is pulled one entry at a time and the pull blocks while all slots are taken, so the
/// memory a run needs is bounded by `concurrency`, not by the length of the list.
public final class FetchRunner: Sendable {
    /// How a run behaves beyond the requests themselves.
    public struct Settings: Sendable {
        /// Requests in flight at once.
        public var concurrency = 64
        /// Connections per host.
        public var perHost = 64
        /// Whether to print the human-readable line per URL on standard output.
        public var printsLines = true

        /// The defaults: 64 in flight, 64 per host, a line per URL.
        public init() {}
    }

    /// What a run produced.
    public struct Outcome: Sendable {
        /// Counts and latencies.
        public var statistics: FetchStatistics
        /// Wall-clock seconds of the run.
        public var seconds: Double
    }

    private let options: RequestOptions
    private let settings: Settings
    private let writer: RecordWriter?
    private let diagnostics: @Sendable (String) -> Void
    private let statistics = Mutex(FetchStatistics())
    private let metrics = Mutex([Int: TaskMetrics]())
    private let queue = DispatchQueue(label: "uvfetch.completions")

    /// Creates a runner. `diagnostics` receives the lines meant for standard error (malformed
    /// input), without the trailing newline.
    public init(options: RequestOptions, settings: Settings, writer: RecordWriter?,
                diagnostics: @escaping @Sendable (String) -> Void) {
        self.options = options
        self.settings = settings
        self.writer = writer
        self.diagnostics = diagnostics
    }

    /// Fetches everything in `input` (a `URLInput`, or any other stream of entries such as the
    /// demo's generated URLs) and returns once every URL has its record.
    /// - Throws: `FetchInputError` for an unreadable `@file` body; `NetworkingError` for a
    ///   security policy the session refuses (pins that are not base64 SHA-256).
    public func run(_ input: some Sequence<URLInput.Entry>) throws -> Outcome {
        let body = try options.body()
        let manager = try makeManager()
        let retry = RetryPolicy(retries: options.retries, isIdempotent: options.isIdempotent)
        let slots = DispatchSemaphore(value: settings.concurrency)
        let group = DispatchGroup()
        let started = DispatchTime.now()
        for entry in input {
            switch entry {
            case .malformed(let place, let text):
                diagnostics("uvfetch: \(place): not an http(s) URL: \(text)")
                statistics.withLock { $0.addMalformed() }
            case .url(let url):
                slots.wait()
                group.enter()
                let fetch = Fetch(url: url, request: options.makeRequest(for: url, body: body), begin: .now())
                start(fetch, attempt: 1, manager: manager, retry: retry) {
                    slots.signal()
                    group.leave()
                }
            }
        }
        group.wait()
        manager.invalidateSessionCancelingTasks(false, resetSession: false)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        return Outcome(statistics: statistics.withLock { $0 }, seconds: seconds)
    }

    /// One URL across its attempts.
    private struct Fetch: Sendable {
        let url: URL
        let request: Request
        let begin: DispatchTime
    }

    private func makeManager() throws -> SessionManager {
        var configuration = SessionConfiguration()
        configuration.maximumConnectionsPerHost = settings.perHost
        options.apply(to: &configuration)
        let manager = SessionManager(configuration: configuration)
        manager.completionQueue = queue
        manager.responseSerializer = HTTPResponseSerializer()
        if let policy = options.securityPolicy() { try manager.setSecurityPolicy(policy) }
        // Only with JSON Lines: the hook makes the session measure every task, which the plain
        // summary does not need and a 100,000-request run should not pay for.
        if writer != nil {
            manager.taskDidFinishCollectingMetrics = { [self] task, taskMetrics in
                metrics.withLock { $0[task.taskIdentifier] = taskMetrics }
            }
        }
        return manager
    }

    private func start(_ fetch: Fetch, attempt: Int, manager: SessionManager, retry: RetryPolicy,
                       done: @escaping @Sendable () -> Void) {
        // The handler learns its task's identifier through this box, set before `resume()`.
        let identifier = TaskIdentifierBox()
        let task = manager.dataTask(with: fetch.request, completionHandler: { [self] response, object, error in
            let status = response?.status.code
            if retry.shouldRetry(attempt: attempt, status: status, error: error) {
                metrics.withLock { _ = $0.removeValue(forKey: identifier.value.load(ordering: .acquiring)) }
                queue.asyncAfter(deadline: .now() + retry.delay(afterAttempt: attempt)) { [self] in
                    start(fetch, attempt: attempt + 1, manager: manager, retry: retry, done: done)
                }
                return
            }
            let taskMetrics = metrics.withLock { $0.removeValue(forKey: identifier.value.load(ordering: .acquiring)) }
            let total = Double(DispatchTime.now().uptimeNanoseconds - fetch.begin.uptimeNanoseconds) / 1e6
            let bytes = (object as? Data)?.count ?? (error as? NetworkingError)?.responseData?.count ?? 0
            let record = FetchRecord(url: fetch.url.absoluteString, status: status, bytes: bytes,
                                     timings: .init(total: total, metrics: taskMetrics),
                                     error: error.map(FetchRecord.Failure.init), attempts: attempt)
            finish(record, error: error)
            done()
        })
        identifier.value.store(task.taskIdentifier, ordering: .releasing)
        task.resume()
    }

    private func finish(_ record: FetchRecord, error: (any Error)?) {
        statistics.withLock { $0.add(record) }
        writer?.write(record)
        guard settings.printsLines else { return }
        let statusText = record.status.map(String.init) ?? "-"
        let outcome = error.map { "error: \($0)" } ?? (record.succeeded ? "ok" : "error: status \(statusText)")
        print("\(statusText) \(record.bytes) bytes \(String(format: "%.1f", record.timings.total)) ms \(record.url) \(outcome)")
    }
}

/// A task's identifier, for a completion handler made before its task exists.
private final class TaskIdentifierBox: Sendable {
    let value = Atomic<Int>(-1)
}
