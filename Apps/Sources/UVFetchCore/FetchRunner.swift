import Dispatch
import Foundation
import HTTPTypes
import Synchronization
import UVNetworking

/// Fetches every URL of a `URLInput` with at most `concurrency` in flight, writing a record per
/// URL and counting the results.
///
/// The run is driven from the completion queue: each URL's result starts the next URL's
/// request there, with no thread waiting per request. The calling thread reads the input ahead
/// of the requests into an `EntryFeed` that holds a bounded number of entries, so the memory a
/// run needs is bounded by `concurrency`, not by the length of the list, and a slow input (a
/// pipe) never holds up the results.
public final class FetchRunner: Sendable {
    /// How a run behaves beyond the requests themselves.
    public struct Settings: Sendable {
        /// Requests in flight at once.
        public var concurrency = 64
        /// Connections per host.
        public var perHost = 64
        /// Event loops (threads) that run the connections: 1 is the library's shared loop; more
        /// spread the origins over a group of that many loops (every URL of one origin on one
        /// loop), for lists of many hosts, and TLS handshakes on more than one core.
        public var loops = 1
        /// Connections in total, across hosts; nil for the library's default (from the process's
        /// descriptor limit).
        public var maxConnections: Int? = nil
        /// Politeness: the most requests started per second to one host (scheme, host, port);
        /// nil for no limit (`--rate-per-host`).
        public var ratePerHost: Double? = nil
        /// Politeness: seconds between two requests started to one host, as wget's `--wait`;
        /// 0 for none (`--delay-per-host`). With a rate too, the larger spacing holds.
        public var delayPerHost: Double = 0
        /// Whether to print the human-readable line per URL on standard output.
        public var printsLines = true
        /// Whether to draw the live progress line on standard output. Only for a terminal: the
        /// caller checks `FetchRunner.standardOutputIsTerminal`.
        public var showsProgress = false
        /// Receives every URL's record as it is written to `--jsonl` (measured alike), on the
        /// completion queue, so it must return quickly; nil for none. For a caller that keeps the
        /// records elsewhere (`uvfetch worker` records them in its queue's database). With
        /// `--warc`, a record comes only once its URL's exchanges are archived, so a URL the
        /// caller records is never missing from the archive.
        public var onRecord: (@Sendable (FetchRecord) -> Void)? = nil
        /// `--robots`: each origin's robots.txt is fetched before its first URL and obeyed
        /// (`RobotsBook`), with `RequestOptions.userAgent`'s product token.
        public var obeysRobots = false
        /// `--since`: the validators of an earlier run's records (or, for `uvfetch worker`, the
        /// queue's), sent as If-None-Match and If-Modified-Since with their URLs (unless `-H`
        /// sets those fields); nil for none.
        public var since: (any ValidatorLookup)? = nil
        /// `--cache DIR`: the HTTP cache the run's GET requests go through (kept across runs in
        /// its directory); nil for none.
        public var cache: HTTPCache? = nil
        /// `--cache-mode`: how each request uses `cache` (the Fetch standard's modes).
        public var cacheMode = Request.CachePolicy.useProtocolCachePolicy

        /// Whether the run builds a record per URL, and so measures every task.
        var buildsRecords: Bool { onRecord != nil }

        /// The defaults: 64 in flight, 64 per host, a line per URL.
        public init() {}

        /// Seconds between two requests to one host that the delay and rate ask for (the
        /// larger), nil when neither does: the run then feeds URLs in input order.
        var pacingInterval: Double? {
            var seconds = delayPerHost.isFinite && delayPerHost > 0 ? delayPerHost : 0
            if let rate = ratePerHost, rate.isFinite, rate > 0 { seconds = max(seconds, 1 / rate) }
            return seconds > 0 ? seconds : nil
        }
    }

    /// What a run produced.
    public struct Outcome: Sendable {
        /// Counts and latencies.
        public var statistics: FetchStatistics
        /// Wall-clock seconds of the run.
        public var seconds: Double
        /// The write that stopped the run, if one failed.
        public var writeFailure: WriteFailure? = nil
    }

    private let options: RequestOptions
    private let settings: Settings
    private let writer: RecordWriter?
    private let outputDirectory: OutputDirectory?
    /// Archives every exchange (`--warc`), or nil.
    private let warc: WARCWriter?
    private let diagnostics: @Sendable (String) -> Void
    private let statistics = Mutex(FetchStatistics())
    /// The metrics of the task whose completion handler runs next: the session calls the metrics
    /// hook and then the handler in one block on the completion queue, so one slot carries them
    /// (a table keyed by task hashed twice per URL).
    private let handedMetrics = Mutex<(task: Int, metrics: TaskMetrics)?>(nil)
    private let queue = DispatchQueue(label: "uvfetch.completions")
    /// Entries the run will have in all, for the progress line; -1 while unknown.
    private let expectedTotal = Atomic<Int>(-1)
    /// The run in progress: when it started, its progress line and its session, for `interrupt`.
    private let current = Mutex<(started: DispatchTime, progress: ProgressLine?, manager: SessionManager)?>(nil)
    /// Set once the run is being stopped (interrupt or write error): no request starts or is
    /// reported after it.
    private let stopping = Atomic<Bool>(false)
    /// The write that failed, if one did.
    private let writeFailure = Mutex<WriteFailure?>(nil)
    /// Reports a failed write and ends the process (the command's handler), or nil.
    private let onWriteFailure: (@Sendable (Outcome) -> Void)?
    /// The session's completion group: empty once every result it delivered has been handled.
    private let completions = DispatchGroup()
    /// Set when the session stopped by `stop` has no task left: every result it will deliver is
    /// in `completions` by then.
    private let invalidated = Atomic<Bool>(false)
    /// What URLs ended after the stop owe the run (`Run.ended`), paid once the stop's handler has
    /// returned, if it does: the run must not end first. nil once paid: later ones pay at once.
    private let heldDones = Mutex<[@Sendable () -> Void]?>([])

    /// The running run's driver, whose feed a stop closes so that the reading thread stops.
    private let driverInUse = Mutex<RunDriver?>(nil)
    /// The running run's robots.txt rules (`--robots`), whose fetches a stop cancels.
    private let robotsInUse = Mutex<RobotsBook?>(nil)
    /// Records and lines not yet written (on the queue).
    private let lines: PendingLines

    /// Whether standard output is a terminal, where the progress line belongs.
    public static var standardOutputIsTerminal: Bool { ProgressLine.standardOutputIsTerminal }

    /// Creates a runner that keeps bodies in `outputDirectory` (as downloads, never whole in
    /// memory) or, when it is nil, counts and drops them as they arrive. `diagnostics` receives the lines meant for standard error (malformed
    /// input), without the trailing newline.
    ///
    /// A failed write (a record, or a line on standard output) stops the run as `interrupt`
    /// does, then calls `onWriteFailure` with what finished (its `writeFailure` set); the
    /// handler is expected to report it and exit. Without one, `run` returns that outcome once
    /// the requests in flight have ended.
    ///
    /// With `warc`, every try's exchanges (redirects and the library's replays among them) are
    /// captured as they cross the wire and archived on the completion queue together with the
    /// URL's record: a URL's exchanges are in the archive exactly when its record is in the
    /// `--jsonl` file (`PendingLines`). A URL stopped by a signal or a failed write is in
    /// neither; a failed WARC write stops the run as a failed record does.
    public init(options: RequestOptions, settings: Settings, writer: RecordWriter?, outputDirectory: OutputDirectory? = nil,
                warc: WARCWriter? = nil,
                onWriteFailure: (@Sendable (Outcome) -> Void)? = nil, diagnostics: @escaping @Sendable (String) -> Void) {
        self.warc = warc
        self.options = options
        self.onWriteFailure = onWriteFailure
        self.settings = settings
        self.writer = writer
        lines = PendingLines(records: writer?.output, archive: warc, onRecord: settings.onRecord)
        self.outputDirectory = outputDirectory
        self.diagnostics = diagnostics
    }

    /// Fetches everything in `input` (a `URLInput`, or any other stream of entries such as the
    /// demo's generated URLs) and returns once every URL has its record.
    ///
    /// `count`, when given and the progress line is on, is called once on a background queue for
    /// the number of entries `input` will yield (`URLInput.countEntries`), so the line can show a
    /// total and an ETA before the input has been read to its end.
    ///
    /// With `skipping` (`--resume`), a URL it holds is neither fetched nor reported, only
    /// counted (`FetchStatistics.alreadyRecorded`), and each URL fetched is added to it, so
    /// that a URL the input gives again is skipped too. The progress line's total leaves out
    /// the URLs skipped so far: the reading runs ahead of the requests, so it soon knows them.
    /// - Throws: `FetchInputError` for an unreadable `@file` body; `NetworkingError` for a
    ///   security policy the session refuses (pins that are not base64 SHA-256).
    public func run(_ input: some Sequence<URLInput.Entry>, skipping recorded: RecordedURLs? = nil,
                    count: (@Sendable () -> Int?)? = nil) throws -> Outcome {
        let body = try options.body()
        // Every request alike but for its URL, so the options are read once: each read of an
        // ArgumentParser option looks up generic metadata, which cost ~2k instructions a URL.
        var template = options.makeRequest(for: URL(string: "http://localhost/")!, body: body)
        template.cachePolicy = settings.cacheMode
        let manager = try makeManager()
        let robots = settings.obeysRobots
            ? try RobotsBook(userAgent: template.value(forHTTPHeaderField: "User-Agent") ?? options.userAgent,
                             configuration: manager.configuration, policy: options.securityPolicy(), queue: queue)
            : nil
        robotsInUse.withLock { $0 = robots }
        let started = DispatchTime.now()
        // Only for the progress line: a run without one opens no netlink socket.
        let network = settings.showsProgress
            ? NetworkWatch(loop: manager.loop, workers: manager.workers, queue: queue,
                           loopback: LoopbackHosts(overrides: manager.configuration.hostAddressOverrides))
            : nil
        let progress = settings.showsProgress ? makeProgressLine(started: started, count: count, network: network) : nil
        current.withLock { $0 = (started, progress, manager) }
        progress?.start()
        let finished = DispatchSemaphore(value: 0)
        // Retries may be told to wait by a server, for its whole host: then hosts are managed.
        let driver = RunDriver(concurrency: settings.concurrency, queue: queue, finished: finished,
                               readAhead: max(256, 2 * settings.concurrency), pacing: settings.pacingInterval,
                               managesHosts: options.retries > 0 || robots != nil)
        let run = Run(runner: self, manager: manager, retry: options.retryPolicy, progress: progress) { [weak driver] url, requested in
            // Weak: the driver's launch holds `run`. `run` returns only once every URL has ended.
            driver?.fetchEnded(url, requested: requested)
        }
        driver.begin(isStopping: { [self] in stopping.load(ordering: .acquiring) }) { [self, unowned driver] next in
            if let robots, !admit(next, robots: robots, driver: driver, run: run) { return }
            let fetch = Fetch(entry: next, template: template, run: run, begin: .now())
            if let since = settings.since, let validators = since.validators(text: next.text, bytes: next.bytes) {
                Self.add(validators, to: &fetch.request)
                if let capture = validators.capture {
                    fetch.earlierCapture = .init(id: capture.recordID, targetURI: validators.capturedURL ?? next.url.absoluteString,
                                                 date: capture.date)
                }
            }
            start(fetch, attempt: 1, requestsSent: 0)
        }
        driverInUse.withLock { $0 = driver }
        // A stop that came first closed no feed: close this one now.
        if stopping.load(ordering: .acquiring) { driver.feed.close() }
        var entries = 0
        reading: for entry in input {
            entries += 1
            switch entry {
            case .malformed(let place, let text):
                statistics.withLock { $0.addMalformed() }
                report("uvfetch: \(place): not an http(s) URL: \(text)", around: progress)
            case .url(let url, let text, let bytes):
                if let recorded, !recorded.insert(text: text, bytes: bytes) {
                    statistics.withLock { $0.addAlreadyRecorded() }
                    continue
                }
                network?.note(url)
                // Waits only while the feed is full; false once the run stops.
                guard driver.feed.push(RunDriver.Pending(url: url, text: text, bytes: bytes)) else { break reading }
            }
        }
        // Now exact, whatever the count said (the file may have changed since).
        expectedTotal.store(entries, ordering: .relaxed)
        driver.feed.end()
        finished.wait()
        // The last batch's lines, before anything else is written (the summary).
        queue.sync { flushLines() }
        driverInUse.withLock { $0 = nil }
        progress?.stop()
        // After the last tick: its netlink socket closed, nothing left open by the run.
        network?.stop()
        manager.invalidateSessionCancelingTasks(false, resetSession: false)
        robots?.stop()
        robotsInUse.withLock { $0 = nil }
        // The last responses are stored after their records: the next run wants them.
        settings.cache?.flush()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        return Outcome(statistics: statistics.withLock { $0 }, seconds: seconds, writeFailure: writeFailure.withLock { $0 })
    }

    /// For a process that exits without the completion queue (`outcomeSoFar`): takes back the
    /// archived exchanges whose URLs' records had not gone out (`WARCWriter.abandonUncommitted`),
    /// and stops the archive. Call it just before exiting.
    public func abandonUnrecordedArchive() {
        warc?.abandonUncommitted()
    }

    /// What has finished so far, from any thread: for a process that must exit without waiting
    /// for the completion queue (blocked writing to a pipe nobody reads).
    public func outcomeSoFar() -> Outcome {
        let started = current.withLock { $0?.started } ?? .now()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        return Outcome(statistics: statistics.withLock { $0 }, seconds: seconds, writeFailure: writeFailure.withLock { $0 })
    }

    /// Ends the run early, for ^C and SIGTERM: requests in flight are cancelled at once and
    /// never reported; then, on the completion queue, between two results, so no record or line
    /// is half-written, they get up to `settleSeconds` to end (a cancelled download removes its
    /// partial file as it ends; where the file system cannot keep it unnamed, a process that
    /// exits first would leave it behind; results already on their way run, unreported, only to
    /// drop their bodies), the progress line is cleared and `handler` gets what finished so
    /// far. The handler is expected to report it and exit the process. Only the
    /// first stop (interrupt or write error) calls its handler.
    ///
    /// The completion queue may be stuck writing to a pipe nobody reads: the caller must not
    /// count on `handler` running, and should exit on its own after a bounded wait.
    public func interrupt(settleSeconds: Double = 2, _ handler: @escaping @Sendable (Outcome) -> Void) {
        stop(settleSeconds: settleSeconds, handler)
    }

    private func stop(settleSeconds: Double, _ handler: @escaping @Sendable (Outcome) -> Void) {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let run = current.withLock { $0 }
        run?.manager.sessionDidBecomeInvalid = { [self] in invalidated.store(true, ordering: .releasing) }
        run?.manager.invalidateSessionCancelingTasks(true, resetSession: false)
        robotsInUse.withLock { $0 }?.stop()
        // No more input: the reading thread stops, and the run ends once its last URL has.
        if let driver = driverInUse.withLock({ $0 }) {
            driver.feed.close()
            queue.async { driver.pump() }
        }
        queue.async { [self] in
            // Lines of results reported before the stop go out now, whole.
            flushLines()
            settle(run != nil, until: .now() + settleSeconds) { [self] in
                run?.progress?.clear()
                handler(outcomeSoFar())
                let dones = heldDones.withLock { held in
                    defer { held = nil }
                    return held ?? []
                }
                for done in dones { done() }
            }
        }
    }

    /// Calls `done` on the queue once the stopped session has no task left (a download's file
    /// is closed or removed by then) and every result it delivered has been handled, or at
    /// `deadline`. It polls without holding the queue, so the results delivered meanwhile run
    /// in between: unreported, each drops its body, which a download finished just before the
    /// stop already holds under a name in the temporary directory.
    private func settle(_ running: Bool, until deadline: DispatchTime, then done: @escaping @Sendable () -> Void) {
        let settled = !running || (invalidated.load(ordering: .acquiring) && completions.wait(timeout: .now()) == .success)
        if settled || DispatchTime.now() >= deadline { return done() }
        queue.asyncAfter(deadline: .now() + .milliseconds(5)) { [self] in settle(running, until: deadline, then: done) }
    }

    /// Pays a URL's `done` after a stop: held until the stop's handler has returned, at once if
    /// it has.
    private func holdUntilStopped(_ done: @escaping @Sendable () -> Void) {
        let held = heldDones.withLock { held -> Bool in
            guard held != nil else { return false }
            held!.append(done)
            return true
        }
        if !held { done() }
    }

    /// Stops the run after a failed write, on the completion queue.
    private func fail(_ failure: WriteFailure) {
        writeFailure.withLock { if $0 == nil { $0 = failure } }
        stop(settleSeconds: 2) { [onWriteFailure] outcome in onWriteFailure?(outcome) }
    }

    private func makeProgressLine(started: DispatchTime, count: (@Sendable () -> Int?)?, network: NetworkWatch?) -> ProgressLine {
        if let count {
            DispatchQueue.global(qos: .utility).async { [self] in
                // Only if the input has not ended first: then the total is already exact.
                if let total = count() {
                    _ = expectedTotal.compareExchange(expected: -1, desired: total, ordering: .relaxed)
                }
            }
        }
        return ProgressLine(queue: queue) { [self] in
            let (done, errors, skipped) = statistics.withLock { ($0.total + $0.malformed, $0.failed + $0.malformed, $0.alreadyRecorded) }
            let counted = expectedTotal.load(ordering: .relaxed)
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
            return ProgressSnapshot(done: done, errors: errors, total: counted >= 0 ? max(0, counted - skipped) : nil, elapsed: elapsed,
                                    isNetworkUnreachable: network?.isNetworkUnreachable ?? false)
        }
    }

    /// Prints a diagnostic; with the progress line on, from its queue with the line cleared
    /// first, since both go to the same terminal.
    private func report(_ message: String, around progress: ProgressLine?) {
        guard let progress else { return diagnostics(message) }
        queue.async { [self] in
            progress.clear()
            diagnostics(message)
        }
    }

    /// One URL across its tries, and the try in progress. One object a URL, shared by
    /// reference: its completion handler captures nothing else (no context allocated), and no
    /// struct of a request and an entry is copied (~600 instructions and ~40 retains a copy).
    fileprivate final class Fetch: @unchecked Sendable {
        // @unchecked: made on the queue, then touched only there, by one try at a time; a try's
        // task is written before `resume()` and read by its handler, which the task's hand-off
        // through the loop's job queue and the completion queue orders after the write.

        /// The URL, and the input as given for the record (`URLInput.Entry.url`).
        let entry: RunDriver.Pending
        /// What the tries send; each try sets its wire capture.
        @exclusivity(unchecked) var request: Request
        let begin: DispatchTime
        let run: Run
        /// `--since` with `--warc`: where the earlier run archived this URL's response, which
        /// a 304 is then a revisit of.
        @exclusivity(unchecked) var earlierCapture: WARCExchangeRecords.Original?
        /// The exchanges of the tries so far (`--warc`), archived with the URL's record.
        @exclusivity(unchecked) var exchanges: [WireExchange] = []
        /// The try in progress, 1 for the first; 0 before it.
        @exclusivity(unchecked) private(set) var tryNumber = 0
        /// Requests the earlier tries sent.
        @exclusivity(unchecked) private(set) var requestsSent = 0
        /// The try's task, until its handler takes it: the task holds the handler, which holds
        /// this object, so keeping it after would keep both alive forever.
        @exclusivity(unchecked) private var task: SessionTask?

        init(entry: consuming RunDriver.Pending, request: consuming Request, run: Run, begin: DispatchTime) {
            self.entry = entry
            self.request = request
            self.run = run
            self.begin = begin
        }

        /// A fetch of `entry`'s URL with `template`'s method, fields and body, copied once.
        init(entry: consuming RunDriver.Pending, template: Request, run: Run, begin: DispatchTime) {
            request = template
            request.url = entry.url
            self.entry = entry
            self.run = run
            self.begin = begin
        }

        var url: URL { entry.url }
        var text: String { entry.text }
        var bytes: [UInt8]? { entry.bytes }

        /// Starts try `number` after earlier tries sent `requestsSent` requests, its exchanges
        /// recorded by `capture` (`--warc`) or not at all.
        func beginTry(_ number: Int, requestsSent: Int, capture: WireCapture?) {
            tryNumber = number
            self.requestsSent = requestsSent
            if capture != nil || request.wireCapture != nil { request.wireCapture = capture }
        }

        func fill(_ task: SessionTask) { self.task = task }

        func takeTask() -> SessionTask? { task.take() }

        /// Adds the ended try's exchanges to the earlier tries' (for `--warc`). Once a try.
        func keepExchanges() {
            if let capture = request.wireCapture { exchanges += capture.exchanges }
        }
    }

    private func makeManager() throws -> SessionManager {
        var configuration = SessionConfiguration()
        configuration.maximumConnectionsPerHost = settings.perHost
        if let total = settings.maxConnections { configuration.maximumConnections = total }
        configuration.delayPerHost = settings.delayPerHost
        configuration.requestsPerSecondPerHost = settings.ratePerHost
        configuration.cache = settings.cache
        options.apply(to: &configuration)
        let manager = settings.loops <= 1
            ? SessionManager(configuration: configuration)
            : SessionManager(configuration: configuration, group: try Self.loopGroup(settings.loops))
        manager.completionQueue = queue
        manager.completionGroup = completions
        manager.responseSerializer = HTTPResponseSerializer()
        if let policy = options.securityPolicy() { try manager.setSecurityPolicy(policy) }
        // Only with JSON Lines: the hook makes the session measure every task, which the plain
        // summary does not need and a 100,000-request run should not pay for.
        if writer != nil || settings.buildsRecords {
            manager.taskDidFinishCollectingMetrics = { [self] task, taskMetrics in
                handedMetrics.withLock { $0 = (task.taskIdentifier, taskMetrics) }
            }
        }
        return manager
    }

    /// The groups of more than one loop that runs have used, by size: made once, kept for the
    /// process's life as the shared loop is (a run's last completion may come before its
    /// connections have closed, so a group shut down at the end of a run could cut them off).
    static let loopGroups = Mutex<[Int: EventLoopGroup]>([:])

    private static func loopGroup(_ count: Int) throws(NetworkingError) -> EventLoopGroup {
        if count == EventLoopGroup.defaultLoopCount { return .shared }
        return try loopGroups.withLock { groups throws(NetworkingError) -> EventLoopGroup in
            if let group = groups[count] { return group }
            let group = try EventLoopGroup(loopCount: count, name: "uvfetch.loop")
            groups[count] = group
            return group
        }
    }

    /// What every fetch of one run shares; a class, so that each try holds it by one reference.
    fileprivate final class Run: Sendable {
        /// The runner, which a fetch's handler calls back. Strong: the cycle it closes (runner,
        /// its driver in use, the driver's launch, this run) ends when `run(_:)` lets the driver
        /// go at its end.
        let runner: FetchRunner
        let manager: SessionManager
        let retry: RetryPolicy
        let progress: ProgressLine?
        private let done: @Sendable (URL?, Bool) -> Void

        init(runner: FetchRunner, manager: SessionManager, retry: RetryPolicy, progress: ProgressLine?,
             done: @escaping @Sendable (URL?, Bool) -> Void) {
            self.runner = runner
            self.manager = manager
            self.retry = retry
            self.progress = progress
            self.done = done
        }

        /// A slot in flight is free: its URL `url` (nil for a slot spent on a robots.txt) ended,
        /// requested or not (`RunDriver.fetchEnded`).
        func ended(_ url: URL?, requested: Bool = true) { done(url, requested) }
    }

    /// What one attempt produced, from a data task or a download task alike.
    private struct Attempt {
        var response: HTTPResponse?
        var error: (any Error)?
        var bytes: Int
        /// The body's temporary file (downloads only), valid until the handler returns.
        var file: URL?
        /// A 304 to a conditional request (`acceptNotModified`).
        var notModified = false
    }

    /// Sends `validators` with `request`: If-None-Match and If-Modified-Since, both when both
    /// were recorded (a server that knows ETags ignores the date, RFC 9110 §13.1.3), unless the
    /// request already sets that field (`-H` wins).
    static func add(_ validators: RecordedValidators.Validators, to request: inout Request) {
        if let etag = validators.etag, request.value(forHTTPHeaderField: "If-None-Match") == nil {
            request.setValue(etag, forHTTPHeaderField: "If-None-Match")
        }
        if let date = validators.lastModified, request.value(forHTTPHeaderField: "If-Modified-Since") == nil {
            request.setValue(date, forHTTPHeaderField: "If-Modified-Since")
        }
    }

    /// Whether a 304 answers a conditional request (If-None-Match or If-Modified-Since, the
    /// user's own or `--since`'s): then it is the answer asked for, a success as curl counts
    /// it (even with --fail), and the status check's error on it is dropped. A 304 to a
    /// request that asked no such thing stays a failure.
    private static func acceptNotModified(_ outcome: inout Attempt, request: Request) -> Bool {
        guard request.value(forHTTPHeaderField: "If-None-Match") != nil || request.value(forHTTPHeaderField: "If-Modified-Since") != nil
        else { return false }
        if let error = outcome.error as? NetworkingError, error.code == .unacceptableStatusCode { outcome.error = nil }
        return outcome.error == nil
    }

    /// Starts try number `attempt` of `fetch`, after earlier tries sent `requestsSent` requests.
    private func start(_ fetch: Fetch, attempt: Int, requestsSent: Int) {
        fetch.beginTry(attempt, requestsSent: requestsSent, capture: warc.map { WireCapture(limit: $0.captureLimit) })
        let task: SessionTask
        // The handlers capture the fetch alone, which reaches the runner through its run.
        if outputDirectory != nil {
            task = fetch.run.manager.downloadTask(with: fetch.request, completionHandler: { [fetch] response, file, error in
                // Not counted by the serializer (downloads skip it), so validated here alike.
                var error = error
                if error == nil, let response {
                    do { try HTTPResponseSerializer().validate(response, data: nil) } catch let invalid { error = invalid }
                }
                let bytes = file.flatMap { try? FileManager.default.attributesOfItem(atPath: $0.path)[.size] as? Int } ?? 0
                fetch.run.runner.completed(Attempt(response: response, error: error, bytes: bytes, file: file), of: fetch,
                                           task: fetch.takeTask())
            })
        } else {
            task = fetch.run.manager.dataTask(with: fetch.request, completionHandler: { [fetch] response, _, error in
                let task = fetch.takeTask()
                fetch.run.runner.completed(Attempt(response: response, error: error, bytes: Int(task?.countOfBytesDiscarded ?? 0)),
                                           of: fetch, task: task)
            })
            // Counted and dropped as they arrive: a list of large files costs no more memory
            // than a list of small ones.
            task.discardsResponseBody = true
        }
        fetch.fill(task)
        task.resume()
    }

    /// Whether `next` may start now under robots.txt (on the queue, from the driver's launch,
    /// its slot taken). The first URL of an origin blocks its host and spends the slot on the
    /// robots.txt fetch, then goes back first in line; a disallowed URL is recorded unrequested.
    private func admit(_ next: RunDriver.Pending, robots: RobotsBook, driver: RunDriver, run: Run) -> Bool {
        let key = RunDriver.hostKey(next.url)
        switch robots.entry(for: key) {
        case .known(let rules):
            guard !rules.isAllowed(next.url) else { return true }
            // Ended from a block of its own: a launch that ends its URL at once would start the
            // next one inside this one, as deep as a host has disallowed URLs in a row.
            queue.async { [self] in
                let fetch = Fetch(entry: next, request: Request(url: next.url), run: run, begin: .now())
                finish(fetch, Attempt(response: nil, error: RobotsDisallowed(url: next.url, productToken: robots.productToken), bytes: 0),
                       status: nil, task: nil, attempts: 0, metrics: nil, progress: run.progress)
                run.ended(next.url, requested: false)
            }
        case .fetching:
            // Not handed out while its host is blocked; put back should it happen.
            driver.putBack(next)
            queue.async { run.ended(next.url) }
        case nil:
            driver.block(hostOf: next.url)
            driver.putBack(next)
            let pacing = settings.pacingInterval ?? 0
            let capture = warc.map { WireCapture(limit: $0.captureLimit) }
            robots.fetch(originOf: next.url, key: key, capture: capture) { [self] rules, exchanges in
                guard !stopping.load(ordering: .acquiring) else { return holdUntilStopped { run.ended(nil) } }
                // Archived as it happened, with no record of its own (`--warc`).
                if warc != nil, !exchanges.isEmpty {
                    lines.addURL(nil, exchanges: exchanges)
                    linesAdded()
                }
                driver.unblock(hostOf: next.url, interval: rules.crawlDelay.map { max($0, pacing) })
                run.ended(nil)
            }
        }
        return false
    }

    /// A try of `attempt` ended with `outcome` (on the queue): retried, or recorded and done.
    private func completed(_ outcome: consuming Attempt, of fetch: Fetch, task: SessionTask?) {
        let run = fetch.run
        // Only JSON Lines runs measure tasks (`makeManager`): no slot to look into otherwise.
        let taskMetrics = writer == nil && !settings.buildsRecords ? nil : handedMetrics.withLock { slot -> TaskMetrics? in
            defer { slot = nil }
            return slot?.task == task?.taskIdentifier ? slot?.metrics : nil
        }
        if stopping.load(ordering: .acquiring) {
            Self.dropBody(outcome)
            holdUntilStopped { run.ended(fetch.url) }
            return
        }
        // Every try is archived, a retried one too: its exchanges happened. They wait with the
        // URL until its record is written.
        fetch.keepExchanges()
        let sent = fetch.requestsSent + Self.requestsSent(by: taskMetrics)
        let status = outcome.response?.status.code
        if status == 304 { outcome.notModified = Self.acceptNotModified(&outcome, request: fetch.request) }
        // Without retries, not asked: its clock read costs more than the rest of the question.
        let decision = outcome.notModified || run.retry.retryLimit < fetch.tryNumber ? .doNotRetry
            : run.retry.retryDecision(for: fetch.request, attempt: fetch.tryNumber, response: outcome.response, error: outcome.error,
                                      now: Date())
        if case .retry(let seconds, let serverAsked) = decision {
            Self.dropBody(outcome)
            let next = fetch.tryNumber + 1
            if serverAsked, let driver = driverInUse.withLock({ $0 }), driver.managesHosts {
                // The server spoke for its host: its other URLs wait as long, this one first in
                // line, and the slot goes to other hosts meanwhile.
                driver.hold(hostOf: fetch.url, for: seconds)
                driver.putBack(RunDriver.Pending(url: fetch.url, text: fetch.text, bytes: fetch.bytes) { [self] in
                    guard !stopping.load(ordering: .acquiring) else { return holdUntilStopped { run.ended(fetch.url) } }
                    start(fetch, attempt: next, requestsSent: sent)
                })
                run.ended(fetch.url)
                return
            }
            queue.asyncAfter(deadline: .now() + seconds) { [self] in
                // A stop since: no new request.
                guard !stopping.load(ordering: .acquiring) else { return holdUntilStopped { run.ended(fetch.url) } }
                start(fetch, attempt: next, requestsSent: sent)
            }
            return
        }
        finish(fetch, outcome, status: status, task: task, attempts: sent, metrics: taskMetrics, progress: run.progress)
        Self.dropBody(outcome)
        run.ended(fetch.url)
    }

    /// Removes a download's body unless `finish` kept it (moved it away). It is ours while the
    /// handler runs, and goes now rather than after the handler on a worker: a process that
    /// ends with its last result, or with ^C, does not wait for that.
    private static func dropBody(_ outcome: Attempt) {
        if let file = outcome.file { unlink(file.path) }
    }

    /// The requests one task sent: each exchange its metrics list that got as far as a
    /// connection (redirects, and the library's replay after a reused connection closed); at
    /// least one, and one when the task was not measured (no JSON Lines).
    private static func requestsSent(by metrics: TaskMetrics?) -> Int {
        max(1, metrics?.transactions.count { $0.requestStartDate != nil } ?? 1)
    }

    /// Keeps the body (with `--out-dir`), then records, counts and prints the URL's result.
    /// `status` is the response's, `task` the last attempt's (for where it was redirected).
    private func finish(_ fetch: Fetch, _ outcome: Attempt, status: Int?, task: SessionTask?, attempts: Int,
                        metrics: TaskMetrics?, progress: ProgressLine?) {
        // Cancelled by a stop, or finished after it: not reported.
        guard !stopping.load(ordering: .acquiring) else { return }
        var error = outcome.error
        var savedFile: String?
        if error == nil, let file = outcome.file, let outputDirectory {
            do {
                savedFile = try outputDirectory.keep(file, for: fetch.url).path
            } catch let failure {
                error = NetworkingError(.cannotMoveFile, "keeping the body in \(outputDirectory.url.path) failed: \(failure)",
                                        failingURL: fetch.url, response: outcome.response, underlyingError: failure)
            }
        }
        let total = Double(DispatchTime.now().uptimeNanoseconds - fetch.begin.uptimeNanoseconds) / 1e6
        // The task knows its response's protocol without metrics, which only JSON Lines collects.
        let httpProtocol = status == nil ? nil : metrics?.transactions.last?.networkProtocolName ?? task?.networkProtocolName
        guard writer != nil || settings.printsLines || settings.buildsRecords else {
            // Nothing written for this URL (--quiet): counted without building its record.
            let failureKind = error.map(FetchRecord.Failure.kind(of:))
            statistics.withLock {
                $0.add(status: status, bytes: outcome.bytes, failureKind: failureKind, milliseconds: total, httpProtocol: httpProtocol,
                       notModified: outcome.notModified)
            }
            if warc != nil {
                lines.addURL(nil, exchanges: fetch.exchanges)
                linesAdded()
            }
            return
        }
        let requestURL = fetch.url.absoluteString
        var record = FetchRecord(url: fetch.text, status: status, bytes: outcome.bytes,
                                 timings: .init(total: total, metrics: metrics),
                                 error: error.map(FetchRecord.Failure.init), attempts: attempts, file: savedFile,
                                 urlBase64: fetch.bytes.map { Data($0).base64EncodedString() }, requestURL: requestURL,
                                 effectiveURL: task?.currentRequest.url.absoluteString ?? requestURL,
                                 httpProtocol: httpProtocol, notModified: outcome.notModified,
                                 cache: task?.cacheOutcome?.description)
        // With an archive: the capture of the final response, named before it is written.
        var final: WARCWriter.FinalResponse?
        if warc != nil, let last = fetch.exchanges.last(where: { !$0.response.isEmpty }) {
            final = .init(id: WARCRecord.newID(), notModifiedOf: outcome.notModified ? fetch.earlierCapture : nil)
            record.capture = .init(date: WARCDate.string(last.startDate), recordID: final!.id)
        }
        if let fields = outcome.response?.headerFields {
            // A 304 need not repeat Last-Modified (RFC 9110 §15.4.5): the validators sent still
            // hold, and the next --since run needs them.
            record.etag = fields[.eTag] ?? (outcome.notModified ? fetch.request.value(forHTTPHeaderField: "If-None-Match") : nil)
            record.lastModified = fields[.lastModified]
                ?? (outcome.notModified ? fetch.request.value(forHTTPHeaderField: "If-Modified-Since") : nil)
        }
        statistics.withLock { $0.add(record) }
        // With an archive, `lines` tells `onRecord` once the URL's exchanges are in it.
        if !lines.deliversRecords { settings.onRecord?(record) }
        // The record and the URL's exchanges go out together, or neither does.
        lines.addURL(record, exchanges: fetch.exchanges, final: final)
        if settings.printsLines {
            let statusText = record.status.map(String.init) ?? "-"
            let result = error.map { "error: \($0)" }
                ?? (record.notModified ? "not modified" : record.succeeded ? "ok" : "error: status \(statusText)")
            // The requested URL: percent-encoded, so the line's fields stay split by spaces.
            lines.addStandard("\(statusText) \(record.bytes) bytes \(String(format: "%.1f", record.timings.total)) ms \(record.requestURL) \(result)\n")
        }
        linesAdded()
    }

    /// Lines were added (on the queue): written at once when a pipe's worth waits, else by a
    /// block queued behind the results being handled, so that one write carries a batch.
    private func linesAdded() {
        if lines.isFull { return flushLines() }
        guard !lines.isEmpty, !lines.flushQueued else { return }
        lines.flushQueued = true
        queue.async { [self] in
            lines.flushQueued = false
            flushLines()
        }
    }

    /// Writes the waiting lines (on the queue), clearing the progress line first; a failed
    /// write stops the run, and after one nothing more is written.
    private func flushLines() {
        guard !lines.isEmpty else { return }
        guard writeFailure.withLock({ $0 }) == nil else { return lines.drop() }
        do throws(WriteFailure) {
            try lines.flush { current.withLock { $0?.progress }?.clear() }
        } catch {
            fail(error)
        }
    }
}
