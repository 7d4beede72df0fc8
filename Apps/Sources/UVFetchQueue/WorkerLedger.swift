import Dispatch
import Foundation
import UVFetchCore

/// What a worker holds between the database and the run: which claimed URL each expected
/// record belongs to, the records not yet sent, and when its leases were last extended.
/// Touched from the input thread, the completion queue (records) and the lease keeper, so a
/// value kept under one lock, each step short.
struct WorkerLedger {
    /// Claimed URLs whose record has not come yet, by the input's bytes (which `FetchRecord`
    /// gives back: `urlBase64`, or `url`'s UTF-8), each with its row's id; several when this
    /// worker claimed a URL again after its own lease expired.
    private var awaited: [[UInt8]: [Int64]] = [:]
    /// Records ready to send, and since when the oldest waits.
    private(set) var finished: [QueueExchange.Result] = []
    private(set) var oldestFinished: DispatchTime?
    /// When the worker's leases were last extended (or granted).
    var lastExtension = DispatchTime.now()
    /// URLs claimed, and claimed ones abandoned after too many claims.
    private(set) var claimed = 0
    private(set) var abandoned = 0
    /// Results stored, and results the database refused because the lease had been lost.
    private(set) var stored = 0
    private(set) var superseded = 0
    /// Records lost to a database that stayed unreachable.
    var unrecorded = 0

    /// URLs claimed whose record has not come.
    private(set) var awaitedCount = 0
    /// The rows of `awaited`: the leases the worker knows it holds and will fetch, which are
    /// the ones it extends.
    var awaitedIDs: [Int64] { awaited.values.flatMap { $0 } }
    /// The input thread waits for `awaitedCount` to drop: the next record wakes it.
    var roomWanted = false

    /// Notes a claimed URL that will be fetched.
    mutating func expect(_ claim: QueueExchange.Claim) {
        claimed += 1
        awaitedCount += 1
        awaited[claim.url, default: []].append(claim.id)
    }

    /// Notes a claimed URL that will not be fetched, with its result already made.
    mutating func settle(_ result: QueueExchange.Result, abandoned isAbandoned: Bool) {
        claimed += 1
        if isAbandoned { abandoned += 1 }
        add(result)
    }

    /// The record of a fetched URL: ready to send. False if no claimed URL awaits it.
    mutating func receive(_ record: FetchRecord, line: String) -> Bool {
        let key = record.urlBase64.flatMap { Data(base64Encoded: $0) }.map { Array($0) } ?? Array(record.url.utf8)
        guard var ids = awaited[key], !ids.isEmpty else { return false }
        let id = ids.removeFirst()
        awaitedCount -= 1
        awaited[key] = ids.isEmpty ? nil : ids
        add(QueueExchange.Result(id: id, record: line, status: record.status, succeeded: record.succeeded,
                                 error: record.error.map { "\($0.code): \($0.message)" },
                                 validators: QueueExchange.validators(of: record)))
        return true
    }

    private mutating func add(_ result: QueueExchange.Result) {
        if finished.isEmpty { oldestFinished = .now() }
        finished.append(result)
    }

    /// A statement carried `sent` records and stored `stored` of them: the rest had lost their
    /// lease to another worker.
    mutating func note(stored: Int, sent: Int) {
        self.stored += stored
        superseded += sent - stored
    }

    /// Takes every ready record, to send.
    mutating func takeFinished() -> [QueueExchange.Result] {
        oldestFinished = nil
        defer { finished = [] }
        return finished
    }
}
