import Foundation
import HTTPTypes
import Synchronization

/// A private HTTP cache (RFC 9111), like URLCache: GET responses kept within a byte capacity
/// and used again as their freshness, their validators and `Request.cachePolicy` allow. Give
/// one to a session (`SessionConfiguration.cache`); several sessions may share it.
///
/// What it keeps, and why (docs/caching.md has the whole list):
/// - It is a private cache: responses to requests with Authorization, and `private` ones, are
///   kept (RFC 9111 §3.5 binds only shared caches).
/// - A response needs a reason to be kept: max-age, Expires, public, private, or a status that
///   is cacheable by default (200, 203, 204, 206 excepted, 300, 301, 308, 404, 405, 410, 414,
///   501), which then gets a heuristic lifetime of 10% of its Last-Modified age.
/// - Never kept: no-store (on the request or the response), Vary: *, partial (206) and 304
///   responses, any response to a Range request, bodies larger than `maximumEntrySize`.
/// - A successful unsafe request (POST, PUT, DELETE, ...) drops what is kept for its URL and
///   for the same-origin URLs its Location and Content-Location name (§4.4).
///
/// Concurrent requests that miss for one URL share one request to the origin: the others
/// wait for its response and are answered from it when it could be stored (a response that
/// could not be lets them all go to the origin at once).
///
/// Thread-safe. Its work (lookups, stores) runs on the session's worker threads, never on a
/// loop thread.
public final class HTTPCache: Sendable {
    /// A cache for the whole process, as URLCache.shared: 16 MiB in memory.
    public static let shared = HTTPCache(memoryCapacity: 16 << 20)

    /// The most bytes kept in memory.
    public var memoryCapacity: Int { memory.capacity }
    /// The largest response kept (its body and fields).
    public var maximumEntrySize: Int { memory.maximumEntryCost }
    /// Bytes kept in memory now.
    public var currentMemoryUsage: Int { memory.currentCost }

    let memory: MemoryCacheStore
    /// The responses being fetched by a request that missed, by key, and who waits for them.
    private let fetches = Mutex([String: [@Sendable (_ stored: Bool) -> Void]]())

    /// A cache of `memoryCapacity` bytes that keeps responses up to `maximumEntrySize` bytes
    /// each (by default a tenth of the capacity, at most 8 MiB).
    public init(memoryCapacity: Int, maximumEntrySize: Int? = nil) {
        memory = MemoryCacheStore(capacity: memoryCapacity, maximumEntryCost: maximumEntrySize ?? min(8 << 20, memoryCapacity / 10))
    }

    // MARK: URLCache's face

    /// The response kept for `request` (its URL, and its fields for the response's Vary),
    /// fresh or not; nil when none is.
    public func cachedResponse(for request: Request) -> CachedResponse? {
        memory.entry(for: CacheKey.key(for: request.url), requestFields: request.httpFields).map(CachedResponse.init)
    }

    /// Keeps `cached` as the response to `request`, replacing what was kept for the same URL
    /// and Vary selection; ignored when it is larger than `maximumEntrySize`. No RFC 9111
    /// rule is applied: what the caller stores is kept.
    public func storeCachedResponse(_ cached: CachedResponse, for request: Request) {
        memory.store(cached.entry(for: request.url, requestFields: request.httpFields))
    }

    /// Drops what is kept for `request`'s URL (every Vary selection).
    public func removeCachedResponse(for request: Request) {
        memory.remove(CacheKey.key(for: request.url))
    }

    /// Drops everything.
    public func removeAllCachedResponses() {
        memory.removeAll()
    }

    // MARK: For the session

    /// What to do for `request` now: looked up, and decided (`CachePlan`).
    func plan(for request: CacheRequest, now: Date = Date()) -> CachePlan {
        let stored = request.looksUp ? memory.entry(for: request.key, requestFields: request.fields) : nil
        return CachePlan.make(method: request.method, fields: request.fields, policy: request.policy, control: request.control,
                              stored: stored, now: now)
    }

    /// Keeps `entry` (a response the RFC lets a private cache store); false when too large.
    @discardableResult
    func store(_ entry: CacheEntry) -> Bool { memory.store(entry) }

    /// Drops what is kept for `urls` (an unsafe request's success, §4.4).
    func invalidate(_ urls: [URL]) {
        for url in urls { memory.remove(CacheKey.key(for: url)) }
    }

    // MARK: Coalescing

    /// Makes the caller the one fetch for `key` when none runs (returns a lead to end when its
    /// response is stored, or not), or adds `waiter` to the running one's (returns nil): it is
    /// called, on the thread that ends the lead, with whether the response was stored.
    func lead(_ key: String, orWait waiter: @escaping @Sendable (_ stored: Bool) -> Void) -> CacheFetchLead? {
        let leads = fetches.withLock { fetches -> Bool in
            if fetches[key] != nil {
                fetches[key]!.append(waiter)
                return false
            }
            fetches[key] = []
            return true
        }
        return leads ? CacheFetchLead(cache: self, key: key) : nil
    }

    /// Makes a store of a response for `key` a lead that lookups wait for, so that a request
    /// made once the storing task completed finds the response; nil when a fetch for `key`
    /// runs already (its waiters look up again when it ends).
    func leadStore(_ key: String) -> CacheFetchLead? {
        let leads = fetches.withLock { fetches -> Bool in
            guard fetches[key] == nil else { return false }
            fetches[key] = []
            return true
        }
        return leads ? CacheFetchLead(cache: self, key: key) : nil
    }

    /// The fetch for `key` ended; its waiters are told.
    fileprivate func fetchEnded(_ key: String, stored: Bool) {
        let waiters = fetches.withLock { $0.removeValue(forKey: key) } ?? []
        for waiter in waiters { waiter(stored) }
    }

    /// How many requests wait for another's fetch (tests).
    var waitingCount: Int { fetches.withLock { $0.values.reduce(0) { $0 + $1.count } } }
}

/// The one request to the origin for a key that others wait for (`HTTPCache.lead`): ended
/// once, by its task when its response was stored or not, or when dropped, so that no waiter
/// waits forever whatever happens to the task.
final class CacheFetchLead: Sendable {
    private let cache: HTTPCache
    let key: String
    private let ended = Atomic(false)

    fileprivate init(cache: HTTPCache, key: String) {
        self.cache = cache
        self.key = key
    }

    /// The fetch is over; `stored`: its response is in the cache now.
    func end(stored: Bool) {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
        cache.fetchEnded(key, stored: stored)
    }

    deinit { end(stored: false) }
}

/// A request as the cache reads it: its key, method, policy, Cache-Control, and every field
/// it goes out with that a Vary may name (the request's own, then the session's defaults).
struct CacheRequest: Sendable {
    let url: URL
    let key: String
    let method: HTTPRequest.Method
    let fields: HTTPFields
    let policy: Request.CachePolicy
    let control: CacheControl

    init(_ request: Request, sessionFields: [(name: String, value: String)]) {
        var fields = request.httpFields
        for field in sessionFields {
            guard let name = HTTPField.Name(field.name), fields[name] == nil else { continue }
            fields.append(HTTPField(name: name, value: field.value))
        }
        self.url = request.url
        self.key = CacheKey.key(for: request.url)
        self.method = request.method
        self.fields = fields
        self.policy = request.cachePolicy
        self.control = CacheControl(fields)
    }

    /// Whether the cache is consulted for it (`CachePlan.looksUp`).
    var looksUp: Bool { CachePlan.looksUp(method: method, fields: fields, policy: policy, control: control) }
}
