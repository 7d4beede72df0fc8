import Synchronization
import UVFetchCore

/// `uvfetch worker --warc --warc-dedup`: the payloads the fleet archived, shared through the
/// queue's `uvfetch_payloads` (schema version 4), as its WARC writer's `PayloadIndex`.
///
/// Digests are known only once a response is in, and the writer asks on the completion queue,
/// which must never wait for the database: so the index is kept in memory and brought up to
/// date by the worker's own statements. At the start the worker loads every row
/// (`QueueDatabase.loadPayloads(into:)`); then each statement (`QueueExchange.Payloads`) carries
/// the originals this worker archived since the one before, and brings back the rows other
/// workers added after the last one seen. Hence the limits: a payload another worker archived
/// less than a statement ago, or that two workers archive at the same time, is an original in
/// both files (the table keeps the first row); a revisit never refers to a record its writer
/// was not told of.
public final class FleetPayloads: PayloadIndex {
    private struct State {
        /// Other workers' originals by digest, and this worker's from before this process.
        var known: [String: ArchivedPayload] = [:]
        /// This worker's originals not yet sent.
        var outgoing: [ArchivedPayload] = []
        /// The highest `uvfetch_payloads.serial` seen.
        var lastSerial: Int64 = 0
    }

    private let state = Mutex(State())

    /// An empty index.
    public init() {}

    /// Payloads known from the queue.
    public var count: Int { state.withLock { $0.known.count } }

    public func original(ofPayload digest: String) -> ArchivedPayload? {
        state.withLock { $0.known[digest] }
    }

    public func archived(_ payloads: [ArchivedPayload]) {
        state.withLock { $0.outgoing.append(contentsOf: payloads) }
    }

    /// The highest `uvfetch_payloads.serial` seen.
    var lastSerial: Int64 { state.withLock { $0.lastSerial } }

    /// What the next statement carries: the originals not yet sent (taken), and the serial after
    /// which it asks for rows.
    func takeOutgoing() -> QueueExchange.Payloads {
        state.withLock { state in
            defer { state.outgoing = [] }
            return QueueExchange.Payloads(archived: state.outgoing, after: state.lastSerial)
        }
    }

    /// Originals a statement that failed did not send: the next one carries them.
    func putBack(_ payloads: [ArchivedPayload]) {
        guard !payloads.isEmpty else { return }
        state.withLock { $0.outgoing.insert(contentsOf: payloads, at: 0) }
    }

    /// Rows read from the queue, the highest serial among them (and among those left out as
    /// this worker's own) being `serial`. A digest already known keeps its original.
    func learn(_ payloads: [ArchivedPayload], through serial: Int64?) {
        state.withLock { state in
            for payload in payloads where state.known[payload.digest] == nil { state.known[payload.digest] = payload }
            if let serial { state.lastSerial = max(state.lastSerial, serial) }
        }
    }
}
