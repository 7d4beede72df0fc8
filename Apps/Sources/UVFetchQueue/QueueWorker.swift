import Dispatch
import Foundation
import Synchronization
import UVFetchCore

/// `uvfetch worker`: drains the queue through a `FetchRunner`, so every option of `uvfetch`
/// applies (concurrency, per-host limits, politeness, TLS, `--out-dir`).
///
/// The runner reads its input on the calling thread, ahead of the requests, by a bounded
/// amount: that input is `ClaimedEntries`, which hands out claimed batches. A claimer thread
/// keeps one batch claimed ahead of the one being read, so the run never waits for the
/// database while it has URLs, and the worker leases only what it is about to fetch (at most
/// `claimAhead` URLs). Records come back through the runner's `onRecord` hook and go out with the next
/// claim, in the same statement (`QueueExchange`); a lease keeper thread sends them itself when
/// no claim has for `flushSeconds`, and extends the leases every third of a lease.
public final class QueueWorker: Sendable {
    /// How a worker claims and holds URLs.
    public struct Settings: Sendable {
        /// Who holds the leases: `host:pid:random`, unique per process.
        public var owner: String
        /// URLs per claim.
        public var batchSize = 100
        /// Seconds a claim holds its URLs; extended every third of it while the worker lives.
        public var leaseSeconds = 60.0
        /// Claims after which a URL is no longer fetched but recorded as abandoned: its
        /// workers keep dying (or losing their leases) while it is in flight.
        public var maxClaims = 3
        /// Keep polling for new URLs when the queue is empty, instead of exiting.
        public var follow = false
        /// Seconds between polls of an empty queue (others' leases still out, or `follow`).
        public var pollSeconds = 1.0
        /// Seconds a finished record may wait for a claim to carry it before the keeper sends it.
        public var flushSeconds = 1.0
        /// The most URLs claimed and not yet finished: the run's slots, its read-ahead and two
        /// batches. The run would read further ahead (a paced run sets up to 16,384 URLs
        /// aside), and every URL read is a lease held from other workers.
        public var claimAhead = 520

        /// Settings for `owner`, with the defaults.
        public init(owner: String) {
            self.owner = owner
        }

        /// `host:pid:random`: hosts and processes told apart, and a restarted process with the
        /// same pid too.
        public static func defaultOwner() -> String {
            let host = ProcessInfo.processInfo.hostName
            return "\(host):\(getpid()):\(String(UInt32.random(in: .min ... .max), radix: 16))"
        }
    }

    /// What a worker did, for its summary.
    public struct Summary: Sendable {
        /// The run's own outcome: counts, latencies, write failure.
        public var outcome: FetchRunner.Outcome
        /// URLs claimed.
        public var claimed: Int
        /// Results stored in the database.
        public var stored: Int
        /// Results refused because another worker had taken the URL over (its lease expired).
        public var superseded: Int
        /// URLs recorded as abandoned after `maxClaims` claims.
        public var abandoned: Int
        /// Leases handed back at the end (a stop before they finished).
        public var released: Int
        /// Records not stored because the database stayed unreachable: their URLs go back to
        /// the queue when their leases expire.
        public var unrecorded: Int
        /// Statements sent, connections included.
        public var roundTrips: Int
        /// The database error that ended the run early, if one did.
        public var failure: QueueError?

        /// "db round trips: N (X per URL)" and what else the queue did, for standard error.
        public var queueLine: String {
            let perURL = claimed > 0 ? Double(roundTrips) / Double(claimed) : 0
            var line = "db round trips: \(roundTrips) (\(String(format: "%.4f", perURL)) per URL); \(claimed) claimed, \(stored) recorded"
            if superseded > 0 { line += ", \(superseded) taken over by another worker" }
            if abandoned > 0 { line += ", \(abandoned) abandoned after too many claims" }
            if released > 0 { line += ", \(released) released" }
            if unrecorded > 0 { line += ", \(unrecorded) not recorded (left to lease expiry)" }
            return line
        }
    }

    let database: QueueDatabase
    let settings: Settings
    let ledger = Mutex(WorkerLedger())
    /// For the completion queue (the hook runs there), and for the input thread.
    private let encoder = RecordEncoder()
    private let inputEncoder = RecordEncoder()
    /// Set by `stop` or a database failure: no more claims.
    private let stopping = Atomic<Bool>(false)
    private let failure = Mutex<QueueError?>(nil)
    /// Wakes the input thread's poll and the keeper early.
    private let wake = DispatchSemaphore(value: 0)
    /// Wakes the input thread waiting for claimed URLs to finish.
    private let room = DispatchSemaphore(value: 0)
    private let keeperDone = DispatchSemaphore(value: 0)
    /// Batches claimed and not yet read, for the input thread.
    private let supply = Mutex(Supply())
    /// A batch (or the end) was added to `supply`.
    private let supplied = DispatchSemaphore(value: 0)
    /// The input thread wants the claimer to claim the next batch.
    private let claimWanted = DispatchSemaphore(value: 0)
    private let claimerDone = DispatchSemaphore(value: 0)
    /// The last statement's claim token: each statement takes the next (`QueueExchange.claimToken`).
    private let statements = Atomic<Int64>(0)

    /// What the claimer hands the input thread.
    private struct Supply {
        var batches: [[URLInput.Entry]] = []
        /// The claimer is claiming.
        var claiming = false
        /// No more batches will come (the queue is finished, or the worker stopping).
        var ended = false
    }
    private let running = Atomic<Bool>(false)

    /// The validators the queue keeps for the claimed URLs, for the run's
    /// `FetchRunner.Settings.since`: a URL fetched before asks again conditionally.
    public var validatorLookup: any ValidatorLookup { claimedValidators }
    private let claimedValidators = ClaimedValidators()

    /// `--warc --warc-dedup`: the payloads shared with the fleet, which every statement
    /// carries (`QueueExchange.Payloads`); nil otherwise, and the statement has no such part.
    let payloads: FleetPayloads?

    /// A worker on `database` (connected, its schema checked: version 4 with `payloads`), whose
    /// statements share `payloads` (the run's WARC writer's index) if given.
    public init(database: QueueDatabase, settings: Settings, payloads: FleetPayloads? = nil) {
        self.database = database
        self.settings = settings
        self.payloads = payloads
    }

    /// The hook for `FetchRunner.Settings.onRecord`: keeps each URL's record for the next
    /// statement. On the completion queue: a lock and an append, no I/O.
    public func collect(_ record: FetchRecord) {
        guard let data = encoder.line(for: record) else { return }
        let line = String(decoding: data, as: UTF8.self)
        let limit = settings.claimAhead
        let wakeInput = ledger.withLock { ledger -> Bool in
            guard ledger.receive(record, line: line), ledger.roomWanted, ledger.awaitedCount < limit else { return false }
            ledger.roomWanted = false
            return true
        }
        if wakeInput { room.signal() }
    }

    /// Stops claiming; the URLs in flight go on (the caller interrupts the runner after a
    /// grace period if they take too long). From any thread, e.g. a signal's handler.
    public func stop() {
        stopping.store(true, ordering: .releasing)
        wake.signal()
        room.signal()
    }

    /// Whether `stop` was called or the database failed.
    public var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// Runs `runner` over the claimed URLs until the queue is finished (or, with `follow`, until
    /// `stop`), then records what finished and releases what did not.
    public func run(_ runner: FetchRunner) throws -> Summary {
        running.store(true, ordering: .releasing)
        let keeper = Thread { [self] in keepLeases() }
        keeper.name = "uvfetch.lease-keeper"
        keeper.start()
        let claimer = Thread { [self] in claimBatches() }
        claimer.name = "uvfetch.claimer"
        claimer.start()
        let outcome: FetchRunner.Outcome
        do {
            outcome = try runner.run(ClaimedEntries(worker: self))
        } catch {
            stop()
            claimWanted.signal()
            claimerDone.wait()
            running.store(false, ordering: .releasing)
            keeperDone.wait()
            // Nothing will be fetched: whatever the claimer took goes back at once.
            _ = handBack(ledger.withLock { $0.takeFinished() })
            throw error
        }
        // The claimer ends: the queue was finished (then it has), or the run stopped.
        stopping.store(true, ordering: .releasing)
        room.signal()
        wake.signal()
        claimWanted.signal()
        claimerDone.wait()
        running.store(false, ordering: .releasing)
        wake.signal()
        keeperDone.wait()
        let (released, unrecorded) = handBack(ledger.withLock { $0.takeFinished() })
        let final = self.ledger.withLock { $0 }
        return Summary(outcome: outcome, claimed: final.claimed, stored: final.stored, superseded: final.superseded,
                       abandoned: final.abandoned, released: released, unrecorded: unrecorded + final.unrecorded,
                       roundTrips: database.roundTrips, failure: failure.withLock { $0 })
    }

    /// Sends the last records, `remaining`, and hands back every lease this worker still holds,
    /// in one statement: at the end nothing more will be fetched, so a lease kept would only
    /// hold its URL from other workers until it expired. Every lease, not only those the worker
    /// knows of: one claimed by a statement whose answer never came is handed back too.
    ///
    /// After a database failure it is tried once, without the retries (which the failure has
    /// just spent): if the database answers again, the URLs are pending at once rather than
    /// when their leases expire. Returns the leases released, and the records not stored.
    private func handBack(_ remaining: [QueueExchange.Result]) -> (released: Int, unrecorded: Int) {
        let failedBefore = failure.withLock { $0 } != nil
        var last = QueueExchange(owner: settings.owner, leaseSeconds: settings.leaseSeconds, results: remaining)
        last.release = true
        last.claimToken = statements.add(1, ordering: .relaxed).newValue
        last.payloads = payloads?.takeOutgoing()
        do throws(QueueError) {
            let done = try last.send(on: database, retries: !failedBefore)
            ledger.withLock { $0.note(stored: done.stored, sent: remaining.count) }
            return (done.released, 0)
        } catch {
            failure.withLock { if $0 == nil { $0 = error } }
            return (0, remaining.count)
        }
    }

    /// The claimer's loop: claims a batch each time the input thread asks, until a claim finds
    /// the queue finished or the worker stops.
    private func claimBatches() {
        defer { claimerDone.signal() }
        while true {
            claimWanted.wait()
            var batch: [URLInput.Entry] = []
            if !isStopping { claimNext(into: &batch) }
            supply.withLock { supply in
                supply.claiming = false
                if batch.isEmpty { supply.ended = true } else { supply.batches.append(batch) }
            }
            supplied.signal()
            if batch.isEmpty { return }
        }
    }

    /// The next batch for the input thread, waiting for the claimer if none is ready; asks for
    /// the one after at once, so that it is claimed while this one is read. Empty at the end.
    func takeBatch() -> [URLInput.Entry] {
        while true {
            let (batch, ended, request) = supply.withLock { supply -> ([URLInput.Entry]?, Bool, Bool) in
                let batch = supply.batches.isEmpty ? nil : supply.batches.removeFirst()
                let request = !supply.ended && !supply.claiming && supply.batches.isEmpty
                if request { supply.claiming = true }
                return (batch, supply.ended && supply.batches.isEmpty, request)
            }
            if request { claimWanted.signal() }
            if let batch { return batch }
            if ended || isStopping { return [] }
            supplied.wait()
        }
    }

    /// Claims the next batch into `buffer` (on the claimer's thread, which may block here,
    /// polling while others' leases are out); leaves it empty when the queue is finished, or on
    /// a stop.
    func claimNext(into buffer: inout [URLInput.Entry]) {
        while !isStopping {
            let limit = settings.claimAhead
            let full = ledger.withLock { ledger -> Bool in
                ledger.roomWanted = ledger.awaitedCount >= limit
                return ledger.roomWanted
            }
            if full {
                // Woken by the record that makes room, or by a stop; the timeout only guards.
                _ = room.wait(timeout: .now() + 1)
                continue
            }
            let exchange = makeExchange(claiming: settings.batchSize)
            let outcome: QueueExchange.Outcome
            do throws(QueueError) {
                outcome = try exchange.send(on: database)
            } catch {
                fail(error, unsent: exchange)
                return
            }
            noteSent(exchange, outcome)
            for claim in outcome.claimed {
                if let entry = accept(claim) { buffer.append(entry) }
            }
            if !buffer.isEmpty { return }
            // Everything claimed was settled without fetching: claim again at once.
            if !outcome.claimed.isEmpty { continue }
            if !outcome.othersOutstanding && !settings.follow { return }
            _ = wake.wait(timeout: .now() + settings.pollSeconds)
        }
    }

    /// A claimed URL as the run's input, or nil when it is settled without a fetch (abandoned
    /// after too many claims, or, stored by an older uvfetch, no longer a URL).
    private func accept(_ claim: QueueExchange.Claim) -> URLInput.Entry? {
        let entry = URLInput.entry(bytes: claim.url, place: "queue id \(claim.id)")
        guard case .url(let url, let text, let bytes)? = entry else {
            let text = String(decoding: claim.url, as: UTF8.self)
            settle(claim, record: Self.unfetched(text: text, bytes: claim.url, requestURL: text, code: "malformed",
                                                 message: "not an http(s) URL", kind: "input", attempts: 0), abandoned: false)
            return nil
        }
        guard claim.attempts <= settings.maxClaims else {
            let earlier = claim.lastError.map { "; last error: \($0)" } ?? ""
            let message = "abandoned: claimed \(claim.attempts - 1) times by workers that ended (or lost the lease) before recording a result\(earlier)"
            settle(claim, record: Self.unfetched(text: text, bytes: bytes, requestURL: url.absoluteString, code: "abandoned",
                                                 message: message, kind: "queue", attempts: claim.attempts - 1), abandoned: true)
            return nil
        }
        ledger.withLock { $0.expect(claim) }
        if let validators = claim.validators { claimedValidators.add(validators, for: claim.url) }
        return entry
    }

    private func settle(_ claim: QueueExchange.Claim, record: FetchRecord, abandoned: Bool) {
        let line = inputEncoder.line(for: record).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        let result = QueueExchange.Result(id: claim.id, record: line, status: nil, succeeded: false,
                                          error: record.error.map { "\($0.code): \($0.message)" })
        ledger.withLock { $0.settle(result, abandoned: abandoned) }
    }

    /// The record of a URL that was not fetched: no status, no bytes, `code` for its error.
    static func unfetched(text: String, bytes: [UInt8]?, requestURL: String, code: String, message: String, kind: String,
                          attempts: Int) -> FetchRecord {
        FetchRecord(url: text, status: nil, bytes: 0, timings: .init(total: 0),
                    error: .init(code: code, message: message, kind: kind), attempts: attempts,
                    urlBase64: bytes.map { Data($0).base64EncodedString() }, requestURL: requestURL)
    }

    /// The statement to send now: the ready records, the extension if one is due, and the
    /// payloads to share.
    private func makeExchange(claiming limit: Int) -> QueueExchange {
        let extensionDue = settings.leaseSeconds / 3
        var exchange = ledger.withLock { ledger in
            var exchange = QueueExchange(owner: settings.owner, leaseSeconds: settings.leaseSeconds, results: ledger.takeFinished())
            exchange.claimLimit = limit
            // Chosen before the statement is sent, so that sending it again sends the same.
            exchange.claimToken = statements.add(1, ordering: .relaxed).newValue
            let now = DispatchTime.now()
            if Double(now.uptimeNanoseconds - ledger.lastExtension.uptimeNanoseconds) / 1e9 >= extensionDue {
                exchange.extend = true
                exchange.held = ledger.awaitedIDs
                ledger.lastExtension = now
            }
            return exchange
        }
        // After the records: a URL's payloads are shared before it is recorded (the writer
        // hears of them first), so they go with its record or in a statement before.
        exchange.payloads = payloads?.takeOutgoing()
        return exchange
    }

    /// What a statement that went through did: results stored, payloads learned.
    private func noteSent(_ exchange: QueueExchange, _ outcome: QueueExchange.Outcome) {
        ledger.withLock { $0.note(stored: outcome.stored, sent: exchange.results.count) }
        payloads?.learn(outcome.payloads, through: outcome.payloadSerial)
    }

    /// The keeper's loop: sends records no claim has carried for `flushSeconds`, and extends the
    /// leases when no statement has for a third of a lease.
    private func keepLeases() {
        defer { keeperDone.signal() }
        let tick = min(0.5, settings.leaseSeconds / 6, settings.flushSeconds / 2)
        while running.load(ordering: .acquiring) {
            _ = wake.wait(timeout: .now() + tick)
            guard running.load(ordering: .acquiring), failure.withLock({ $0 }) == nil else { continue }
            let due = ledger.withLock { ledger -> Bool in
                let now = DispatchTime.now().uptimeNanoseconds
                let waited = ledger.oldestFinished.map { Double(now - $0.uptimeNanoseconds) / 1e9 } ?? 0
                let sinceExtension = Double(now - ledger.lastExtension.uptimeNanoseconds) / 1e9
                return waited >= settings.flushSeconds || sinceExtension >= settings.leaseSeconds / 3
            }
            guard due else { continue }
            let exchange = makeExchange(claiming: 0)
            do throws(QueueError) {
                noteSent(exchange, try exchange.send(on: database))
            } catch {
                fail(error, unsent: exchange)
            }
        }
    }

    /// The database stayed unreachable (or refused a statement): stop claiming. At the end the
    /// worker tries once more to hand its leases back (`handBack`); if that fails too, what was
    /// not recorded goes back to the queue when its leases expire.
    private func fail(_ error: QueueError, unsent: QueueExchange) {
        failure.withLock { if $0 == nil { $0 = error } }
        ledger.withLock { $0.unrecorded += unsent.results.count }
        // For that last statement.
        payloads?.putBack(unsent.payloads?.archived ?? [])
        stop()
    }

    /// The run's input: claimed URLs, a batch at a time.
    struct ClaimedEntries: Sequence {
        let worker: QueueWorker

        func makeIterator() -> Iterator { Iterator(worker: worker) }

        struct Iterator: IteratorProtocol {
            let worker: QueueWorker
            /// The current batch, the next entry last.
            private var buffer: [URLInput.Entry] = []

            init(worker: QueueWorker) { self.worker = worker }

            mutating func next() -> URLInput.Entry? {
                if buffer.isEmpty {
                    guard !worker.isStopping else { return nil }
                    buffer = worker.takeBatch()
                    buffer.reverse()
                }
                return buffer.popLast()
            }
        }
    }
}
