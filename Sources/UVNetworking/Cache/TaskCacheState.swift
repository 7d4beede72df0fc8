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
    /// A validated stored body, to deliver when the 304's exchange ends.
    var pendingBody: Data?

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
/// largest entry.
struct CacheFill {
    let limit: Int
    let head: ResponseHead
    /// The body is collected decoded (the head's Content-Encoding is not kept).
    let decoded: Bool
    let responseDate: Date
    var body = Data()
    /// Too large to keep: collection stopped.
    var overflowed = false

    init(limit: Int, head: ResponseHead, decoded: Bool, responseDate: Date) {
        self.limit = limit
        self.head = head
        self.decoded = decoded
        self.responseDate = responseDate
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !overflowed else { return }
        guard body.count + bytes.count <= limit else {
            overflowed = true
            body = Data()
            return
        }
        if let base = bytes.baseAddress, !bytes.isEmpty { body.append(base.assumingMemoryBound(to: UInt8.self), count: bytes.count) }
    }
}
