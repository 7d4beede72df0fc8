import Foundation
import Synchronization
import UVHTTP1

/// How the cache took part in a task (`SessionTask.cacheOutcome`).
public enum CacheOutcome: UInt8, Sendable, Hashable, CustomStringConvertible {
    /// The cache was not consulted: a method other than GET, a Range or conditional request
    /// of the caller's, a policy or request that keeps it out (reload, no-store). A success
    /// may still have been stored (reload) or have dropped stored responses (unsafe methods).
    case bypass = 1
    /// Nothing usable was stored: the origin answered (or, under only-if-cached, nobody did).
    case miss
    /// A stored response answered without the origin; also a request that waited for another
    /// request's fetch of the same URL and was answered from what it stored.
    case hit
    /// A stored response answered after the origin confirmed it (304 Not Modified).
    case revalidated

    /// "bypass", "miss", "hit", "revalidated": uvfetch's names.
    public var description: String {
        switch self {
        case .bypass: return "bypass"
        case .miss: return "miss"
        case .hit: return "hit"
        case .revalidated: return "revalidated"
        }
    }
}

/// One task's part in its session's cache: the lookup made before it reaches its loop (on a
/// worker), what the lookup decided, and what the run does with it (on the loop). A task of a
/// session without a cache has none.
///
/// Threads: `phase` orders the lookup's writes (`plan`, `lead`, `sentInstead`) before the
/// loop's reads (the loop job that starts the task is queued after `phase` became `ready`);
/// the fields after them are the loop's alone.
final class TaskCacheState: @unchecked Sendable {
    let cache: HTTPCache
    private let phase = Atomic<UInt8>(Phase.notLookedUp.rawValue)
    private let outcomeValue = Atomic<UInt8>(0)

    private enum Phase: UInt8 { case notLookedUp, lookingUp, ready }

    // Written by the lookup, then read on the loop.
    var request: CacheRequest?
    var plan = CachePlan.fetch(store: false, lookedUp: false)
    /// This task's fetch is the one others wait for.
    var lead: CacheFetchLead?
    /// What goes out in place of the task's own request: with the stored response's
    /// validators (`.validate`), and the fields of the Fetch standard's cache modes.
    var sentInstead: PreparedRequest?

    // The loop's.
    /// When the request went out (`CacheEntry.requestTime`).
    var requestDate = Date.distantPast
    /// The response's body collected for the store, while it may still be kept.
    var fill: CacheFill?
    /// A validated stored entry whose body follows when the 304's exchange ends.
    var validatedBody: CacheEntry?
    /// A stored response (or only-if-cached's 504) answered the task: an attempt its retrier
    /// asks for after that one is no new start.
    var answeredFromStore = false
    /// The request may not reach the origin (returnCacheDataDontLoad, only-if-cached): the
    /// retrier is not asked about what the cache answered.
    var keepsOffNetwork = false

    init(cache: HTTPCache) { self.cache = cache }

    /// What a `resume()` that started the task does.
    enum Start { case lookUp, wait, proceed }

    /// `resume()` started the task: the first one looks up (and sends the resume itself when
    /// done), one during the lookup leaves that to it, one after it goes to the loop.
    func start() -> Start {
        let (exchanged, original) = phase.compareExchange(expected: Phase.notLookedUp.rawValue, desired: Phase.lookingUp.rawValue,
                                                          ordering: .acquiringAndReleasing)
        if exchanged { return .lookUp }
        return original == Phase.lookingUp.rawValue ? .wait : .proceed
    }

    /// The lookup decided: the loop may start the task.
    func ready() { phase.store(Phase.ready.rawValue, ordering: .releasing) }

    var outcome: CacheOutcome? { CacheOutcome(rawValue: outcomeValue.load(ordering: .relaxed)) }
    func record(_ outcome: CacheOutcome) { outcomeValue.store(outcome.rawValue, ordering: .relaxed) }
}

/// A response being collected for the store: its head, and its body up to the cache's
/// largest entry; past `spillThreshold`, with a disk store, the body goes to a file as it
/// arrives (written on workers, never held whole in memory). Loop thread only.
final class CacheFill {
    let limit: Int
    let head: ResponseHead
    /// The body is collected decoded (the head's Content-Encoding is not kept).
    let decoded: Bool
    let responseDate: Date
    /// The body while it is small (all of it, unless `spool` took over).
    private(set) var body = Data()
    /// Bytes collected, and their CRC-32 (what the disk store checks on every read).
    private(set) var count = 0
    private(set) var crc: Int64 = 0
    /// Too large to keep, or its file could not be written: collection stopped.
    private(set) var overflowed = false
    /// The body's file once it passed `spillThreshold` (with a disk store).
    private(set) var spool: (name: String, writer: DownloadFileWriter)?
    /// The spool's writer asked the loop to stop reading until it drains.
    var behind = false

    /// Bodies up to this size are collected in memory.
    static let spillThreshold = 1 << 20

    init(limit: Int, head: ResponseHead, decoded: Bool, responseDate: Date) {
        self.limit = limit
        self.head = head
        self.decoded = decoded
        self.responseDate = responseDate
    }

    /// Takes `bytes` (valid only during the call); returns true when the loop should stop
    /// reading until `drained` (run on a worker) says the file caught up. `disk`: where a large
    /// body spills to; nil keeps everything in memory.
    func append(_ bytes: UnsafeRawBufferPointer, disk: DiskCacheStore?, workers: WorkerPool,
                drained: @escaping @Sendable () -> Void) -> Bool {
        guard !overflowed else { return false }
        guard count + bytes.count <= limit else {
            abandon()
            return false
        }
        crc = DiskCacheStore.crc(crc, bytes)
        count += bytes.count
        if spool == nil, let disk, count > Self.spillThreshold {
            let file = disk.newBodyFile()
            // A failed write stops collection (the task goes on); its notice reads as drained
            // so that a loop paused for the file reads again.
            let writer = DownloadFileWriter(path: file.path, workers: workers, onDrained: drained, onFailed: { _ in drained() })
            writer.start(.fromBeginning)
            if !body.isEmpty { _ = writer.push([UInt8](body)) }
            body = Data()
            spool = (file.name, writer)
        }
        if let spool {
            if spool.writer.push(Array(bytes)) { behind = true }
            return behind
        }
        if let base = bytes.baseAddress, !bytes.isEmpty { body.append(base.assumingMemoryBound(to: UInt8.self), count: bytes.count) }
        return false
    }

    /// Stops collecting: what was taken is dropped, a spool's file removed.
    func abandon() {
        overflowed = true
        body = Data()
        behind = false
        spool?.writer.close(.discard) { _ in }
        spool = nil
    }
}
