import Dispatch
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
    /// A cache for the whole process, as URLCache.shared: 16 MiB in memory, no disk.
    public static let shared = HTTPCache(memoryCapacity: 16 << 20)

    /// The most bytes kept in memory.
    public var memoryCapacity: Int { memory.capacity }
    /// The most bytes of bodies kept on disk (0 without a directory).
    public var diskCapacity: Int { disk?.capacity ?? 0 }
    /// The largest response kept (its body and fields); a larger one is fetched and delivered
    /// as usual, and not kept.
    public let maximumEntrySize: Int
    /// Bytes kept in memory now.
    public var currentMemoryUsage: Int { memory.currentCost }
    /// Bytes of bodies on disk now, those other processes sharing the directory stored
    /// included. Reads the index: not for a loop thread.
    public var currentDiskUsage: Int { disk?.currentCost ?? 0 }
    /// Where the disk store is; nil for a cache in memory only.
    public var directory: URL? { disk?.directory }

    let memory: MemoryCacheStore
    let disk: DiskCacheStore?
    /// Stores and removals handed to workers and not done yet (`flush()`).
    let pendingWrites = DispatchGroup()
    /// Keys whose disk entries are being removed (`invalidate`): lookups skip the disk for
    /// them meanwhile, so that what was invalidated is not read back.
    private let removing = Mutex([String: Int]())
    /// The responses being fetched by a request that missed, by coalescing key, and who waits
    /// for them.
    private let fetches = Mutex([String: [@Sendable (_ stored: Bool) -> Void]]())
    /// The Vary names of the response last stored or read for each key that has some (at most
    /// `varyMemoryLimit` keys): concurrent misses coalesce per variant by them.
    private let varyNames = Mutex([String: [String]]())

    /// A cache in memory of `memoryCapacity` bytes that keeps responses up to
    /// `maximumEntrySize` bytes each (by default a tenth of the capacity, at most 8 MiB).
    public init(memoryCapacity: Int, maximumEntrySize: Int? = nil) {
        let largest = max(0, maximumEntrySize ?? min(8 << 20, memoryCapacity / 10))
        self.maximumEntrySize = largest
        memory = MemoryCacheStore(capacity: memoryCapacity, maximumEntryCost: largest)
        disk = nil
    }

    /// A cache in memory and on disk, in `directory` (created if missing): an SQLite index and
    /// one file per body, kept across runs, shared safely with other processes that open the
    /// same directory (see docs/caching.md). Responses up to `maximumEntrySize` bytes (by
    /// default a tenth of the disk capacity, at most 64 MiB) are kept on disk, the smaller
    /// ones (up to a tenth of `memoryCapacity`) in memory too.
    ///
    /// Throws `NetworkingError.Code.cannotCreateFile` when the directory cannot be made or
    /// written, or its index cannot be opened; an index found damaged is replaced by an empty
    /// one instead.
    public init(memoryCapacity: Int, diskCapacity: Int, directory: URL, maximumEntrySize: Int? = nil) throws(NetworkingError) {
        let largest = max(0, maximumEntrySize ?? min(64 << 20, diskCapacity / 10))
        self.maximumEntrySize = largest
        memory = MemoryCacheStore(capacity: memoryCapacity, maximumEntryCost: min(largest, memoryCapacity / 10))
        disk = try DiskCacheStore(directory: directory, capacity: diskCapacity, maximumEntryCost: largest)
    }

    // MARK: URLCache's face

    /// The response kept for `request` (its URL, and its fields for the response's Vary),
    /// fresh or not; nil when none is.
    public func cachedResponse(for request: Request) -> CachedResponse? {
        entry(for: CacheKey.key(for: request.url), requestFields: request.httpFields)?.materialized().map(CachedResponse.init)
    }

    /// Keeps `cached` as the response to `request`, replacing what was kept for the same URL
    /// and Vary selection; ignored when it is larger than `maximumEntrySize`. No RFC 9111
    /// rule is applied: what the caller stores is kept.
    public func storeCachedResponse(_ cached: CachedResponse, for request: Request) {
        store(cached.entry(for: request.url, requestFields: request.httpFields))
    }

    /// Drops what is kept for `request`'s URL (every Vary selection).
    public func removeCachedResponse(for request: Request) {
        remove(CacheKey.key(for: request.url))
    }

    /// Waits until every response the cache was handed (by the sessions using it) is stored,
    /// and every invalidation done, on disk too: what a program calls before it exits, so that
    /// the responses of its last requests are there for the next run. A task completes before
    /// its response is stored (storing runs on a worker meanwhile).
    public func flush() {
        pendingWrites.wait()
    }

    /// Drops everything, on disk too (other processes' entries included).
    public func removeAllCachedResponses() {
        memory.removeAll()
        disk?.removeAll()
    }

    // MARK: For the session

    /// What to do for `request` now: looked up, and decided (`CachePlan`).
    func plan(for request: CacheRequest, now: Date = Date()) -> CachePlan {
        let stored = request.looksUp ? entry(for: request.key, requestFields: request.fields) : nil
        // A large body stays in its file, served or validated: a 304 plays it from there, and
        // only the row's fields change (`refresh`).
        return CachePlan.make(method: request.method, fields: request.fields, policy: request.policy, control: request.control,
                              stored: stored, now: now)
    }

    /// The variant of `key` for `requestFields`: from memory, else from disk (then kept in
    /// memory too, when small enough).
    private func entry(for key: String, requestFields: HTTPFields) -> CacheEntry? {
        if let entry = memory.entry(for: key, requestFields: requestFields) { return entry }
        guard let disk, removing.withLock({ $0[key] == nil }), let entry = disk.entry(for: key, requestFields: requestFields) else { return nil }
        if entry.bodyFile == nil { memory.store(entry) }
        // Maybe stored by another process: its Vary names are news to this one's coalescing.
        noteVary(of: entry)
        return entry
    }

    /// Keeps `entry` in memory and on disk; false when neither kept it.
    @discardableResult
    func store(_ entry: CacheEntry) -> Bool {
        noteVary(of: entry)
        let inMemory = memory.store(entry)
        guard let disk else { return inMemory }
        return disk.store(entry) || inMemory
    }

    /// Keeps what a 304 made of a stored entry: a body in a file stays in it, the row taking the
    /// new fields (`DiskCacheStore.refresh`); a body in memory is stored anew.
    @discardableResult
    func refresh(_ entry: CacheEntry) -> Bool {
        guard entry.bodyFile != nil else { return store(entry) }
        noteVary(of: entry)
        return disk?.refresh(entry) ?? false
    }

    /// A HEAD's 200 to `request` (RFC 9111 §4.3.5): the stored GET response the HEAD could
    /// have been answered with takes the HEAD's fields, as from a 304, when they confirm it
    /// (same validators, same length); when they do not, it is dropped (from memory, every
    /// variant of the URL; on disk, that one). Blocks: workers only.
    func freshen(byHEAD head: HTTPFields, for request: CacheRequest, requestTime: Date, responseTime: Date) {
        if let stored = memory.entry(for: request.key, requestFields: request.fields) {
            if CacheStorePolicy.headConfirms(head, stored: stored.fields) {
                memory.store(stored.revalidated(by: head, requestTime: requestTime, responseTime: responseTime))
            } else {
                memory.remove(request.key)
            }
        }
        disk?.freshen(request.key, requestFields: request.fields, byHEAD: head, requestTime: requestTime, responseTime: responseTime)
    }

    private func remove(_ key: String) {
        memory.remove(key)
        disk?.remove(key)
    }

    /// Drops what is kept for `urls` (an unsafe request's success, §4.4): from memory at once,
    /// so that the next lookup cannot find it, and from disk on a worker of `workers`.
    func invalidate(_ urls: [URL], workers: WorkerPool) {
        let keys = urls.map(CacheKey.key(for:))
        for key in keys { memory.remove(key) }
        guard let disk else { return }
        removing.withLock { for key in keys { $0[key, default: 0] += 1 } }
        pendingWrites.enter()
        let job: @Sendable () -> Void = { [self] in
            defer { pendingWrites.leave() }
            for key in keys { disk.remove(key) }
            removing.withLock { removing in
                for key in keys {
                    removing[key]! -= 1
                    if removing[key] == 0 { removing[key] = nil }
                }
            }
        }
        if !workers.submit(job) { job() }
    }

    // MARK: Coalescing

    /// The key concurrent misses of `request` coalesce on: its URL's, and once a response of
    /// that URL was stored with Vary, also the request's selection of those names. Requests
    /// for different variants (`Vary: Authorization` and a token per user) then fetch side by
    /// side instead of waiting for each other's response, which would not answer them.
    func coalescingKey(for request: CacheRequest) -> String {
        guard let names = varyNames.withLock({ $0[request.key] }) else { return request.key }
        return Self.coalescingKey(request.key, selection: CacheVary.selected(names, from: request.fields))
    }

    /// The coalescing key of a request that `entry` answers.
    static func coalescingKey(of entry: CacheEntry) -> String {
        entry.varyNames.isEmpty ? entry.key : coalescingKey(entry.key, selection: entry.varyValues)
    }

    private static func coalescingKey(_ key: String, selection: [String: String?]) -> String {
        key + "\n" + DiskCacheStore.encodeVariant(selection)
    }

    /// Keys whose Vary names are remembered at most; past it they are forgotten together (a
    /// forgotten key coalesces per URL until its next store).
    static let varyMemoryLimit = 4096

    /// Remembers the Vary names of a response stored or read for its key (none: forgets them).
    func noteVary(of entry: CacheEntry) {
        varyNames.withLock { names in
            guard !entry.varyNames.isEmpty else {
                names[entry.key] = nil
                return
            }
            if names.count >= Self.varyMemoryLimit, names[entry.key] == nil { names.removeAll() }
            names[entry.key] = entry.varyNames
        }
    }

    /// Makes the caller the one fetch for `key` when none runs (returns a lead to end when its
    /// response is stored, or not), or adds `waiter` to the running one's (returns nil): it is
    /// called, on the thread that ends the lead, with whether the response was stored.
    func lead(_ key: String, orWait waiter: @escaping @Sendable (_ stored: Bool) -> Void) -> CacheFetchLead? {
        claim(key, orWait: waiter)
    }

    /// Makes a store of a response for `key` a lead that lookups wait for, so that a request
    /// made once the storing task completed finds the response; nil when a fetch for `key`
    /// runs already (its waiters look up again when it ends).
    func leadStore(_ key: String) -> CacheFetchLead? {
        claim(key, orWait: nil)
    }

    /// Queues `waiter` behind the fetch or store of `key` under way, if one is (true); false
    /// when none is. A lookup that would find an older response waits for the one coming.
    func waitForLead(_ key: String, _ waiter: @escaping @Sendable (_ stored: Bool) -> Void) -> Bool {
        fetches.withLock { fetches -> Bool in
            guard fetches[key] != nil else { return false }
            fetches[key]!.append(waiter)
            return true
        }
    }

    /// The lead for `key` when nobody holds it; else nil, with `waiter` (if any) queued.
    private func claim(_ key: String, orWait waiter: (@Sendable (_ stored: Bool) -> Void)?) -> CacheFetchLead? {
        let leads = fetches.withLock { fetches -> Bool in
            guard fetches[key] == nil else {
                if let waiter { fetches[key]!.append(waiter) }
                return false
            }
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
    /// Whether the cache is consulted for it (`CachePlan.looksUp`), decided once.
    let looksUp: Bool

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
        looksUp = CachePlan.looksUp(method: method, fields: fields, policy: policy, control: control)
    }
}
