import Foundation
import HTTPTypes
import UVHTTP1

/// The runner's side of the session's cache (Cache/): playing a stored response, sending a
/// validation and turning its 304 into the stored response, collecting a response for the
/// store, and the invalidations of unsafe requests. The lookup ran before the task reached
/// the loop (Session/SessionManager+Cache.swift); what it decided is in the task's
/// `TaskCacheState`. Tasks of a session without a cache pass each hook with one nil check.
extension TaskRunner {
    /// How the task's first start goes, as its lookup decided.
    enum CacheStart {
        /// To the origin (maybe with the stored validators).
        case network
        /// From the store: the exchange plays it.
        case served(StoredExchange)
        /// Only the cache may answer, and it cannot.
        case unavailable(NetworkingError)
    }

    func cacheStart(_ state: TaskCacheState) -> CacheStart {
        state.requestDate = Date()
        switch state.plan {
        case .serve(let entry):
            // Once: a retry or a redirect's next request goes to the network.
            state.plan = .fetch(store: false, lookedUp: false)
            state.answeredFromStore = true
            state.keepsOffNetwork = task.originalRequest.cachePolicy == .returnCacheDataDontLoad
                || state.request?.control.onlyIfCached == true
            state.record(.hit)
            return .served(StoredExchange(entry: entry, now: state.requestDate, loop: loop, workers: task.manager.workers))
        case .gatewayTimeout:
            state.plan = .fetch(store: false, lookedUp: false)
            state.answeredFromStore = true
            state.keepsOffNetwork = true
            state.record(.miss)
            let entry = CacheEntry(key: "", status: 504, reason: "Gateway Timeout", fields: [.contentLength: "0"], body: Data(),
                                   requestTime: state.requestDate, responseTime: state.requestDate, varyNames: [], varyValues: [:])
            return .served(StoredExchange(entry: entry, now: state.requestDate, loop: loop))
        case .unavailable:
            state.record(.miss)
            let why = task.originalRequest.cachePolicy == .returnCacheDataDontLoad
                ? "the request's cache policy is returnCacheDataDontLoad" : "the request says Cache-Control: only-if-cached"
            return .unavailable(NetworkingError(.resourceUnavailable, "no stored response may answer the request, and \(why)"))
        case .validate:
            state.record(.miss)
            if let prepared = state.sentInstead { sendInstead(prepared) }
            return .network
        case .fetch(_, let lookedUp):
            state.record(lookedUp ? .miss : .bypass)
            if let prepared = state.sentInstead { sendInstead(prepared) }
            return .network
        }
    }

    /// The session's retrier sends again a request the cache answered: the origin answers
    /// this time (the stored response would be the same), and its response may replace the
    /// stored one.
    func cacheRetryLoads(_ state: TaskCacheState) {
        state.requestDate = Date()
        state.plan = .fetch(store: true, lookedUp: true)
        state.record(.miss)
    }

    /// Whether the retrier may be asked about the attempt that just ended: not when the cache
    /// answered a request that may not reach the origin.
    var cacheAllowsRetry: Bool {
        guard let state = task.cacheState else { return true }
        return !(state.answeredFromStore && state.keepsOffNetwork)
    }

    /// A response head arrived (before redirects and the retrier see it). Returns true when
    /// the cache made it something else: a 304 to a validation became the stored response.
    func cacheReceivedHead(_ head: ResponseHead, _ state: TaskCacheState) -> Bool {
        let method = currentRequest.method
        if method != .get && method != .head {
            let fields = head.httpFields
            let urls = CacheStorePolicy.invalidatedURLs(method: method, status: head.status, target: currentRequest.url, fields: fields)
            if !urls.isEmpty { state.cache.invalidate(urls, workers: task.manager.workers) }
            return false
        }
        guard head.status == 304, case .validate(let stored) = state.plan else { return false }
        let responseDate = Date()
        let entry = stored.revalidated(by: head.httpFields, requestTime: state.requestDate, responseTime: responseDate)
        state.plan = .fetch(store: false, lookedUp: false)
        state.record(.revalidated)
        if entry.bodyLength > 0 { state.validatedBody = entry }
        storeRevalidated(entry, state)
        let merged = StoredExchange.head(of: entry, now: responseDate)
        self.head = merged
        acceptFinalHead(merged, bodyLength: Int64(entry.bodyLength))
        return true
    }

    /// The task's final response head was accepted: collect its body for the store when the
    /// lookup allowed storing and RFC 9111 §3 lets a private cache keep it.
    func cacheAcceptedHead(_ head: ResponseHead, _ state: TaskCacheState) {
        state.fill?.abandon()
        state.fill = nil
        if currentRequest.method == .head { cacheHEADAnswered(head, state) }
        let storable: Bool
        switch state.plan {
        case .fetch(let store, _): storable = store
        case .validate: storable = true
        case .serve, .unavailable, .gatewayTimeout: storable = false
        }
        // After a redirect the response is another URL's: not kept under this one.
        guard storable, visited.isEmpty, let request = state.request else {
            state.lead?.end(stored: false)
            return
        }
        let fields = head.httpFields
        guard CacheStorePolicy.mayStore(method: request.method, status: head.status, fields: fields,
                                        response: CacheControl(fields), request: request.control) else {
            state.lead?.end(stored: false)
            return
        }
        state.fill = CacheFill(limit: state.cache.maximumEntrySize, head: head, decoded: contentDecoder != nil, responseDate: Date())
    }

    /// A HEAD's final response: a 200 from the origin to the URL the task asked for updates
    /// the stored GET response it describes, or drops it when it says the representation
    /// changed (RFC 9111 §4.3.5), on a worker. Not when the request or the response forbids
    /// storing, nor for a HEAD the cache answered itself.
    private func cacheHEADAnswered(_ head: ResponseHead, _ state: TaskCacheState) {
        guard head.status == 200, visited.isEmpty, let connection, connection.connectionID >= 0, let request = state.request,
              request.policy != .reloadWithoutCaching, !request.control.noStore else { return }
        let cache = state.cache
        let requestTime = state.requestDate
        let responseTime = Date()
        cache.pendingWrites.enter()
        // The head's fields are made on the worker, as for delivery: not a loop thread's work.
        let submitted = task.manager.workers.submit {
            let fields = head.httpFields
            if !CacheControl(fields).noStore {
                cache.freshen(byHEAD: fields, for: request, requestTime: requestTime, responseTime: responseTime)
            }
            cache.pendingWrites.leave()
        }
        if !submitted { cache.pendingWrites.leave() }
    }

    /// Decoded body bytes of the task's response, as the sink got them. Returns true when the
    /// file a large body goes to is behind, and reading should wait for it (as for a
    /// download's file).
    func cacheReceivedBody(_ bytes: UnsafeRawBufferPointer, _ state: TaskCacheState) -> Bool {
        guard let fill = state.fill else { return false }
        let runner = LoopBound(self, loop: loop)
        let loop = self.loop
        return fill.append(bytes, disk: state.cache.disk, workers: task.manager.workers) {
            _ = loop.execute { runner.value.cacheSpoolDrained() }
        }
    }

    /// The file of a body being collected caught up (or failed): read again, unless the sink
    /// is behind too.
    private func cacheSpoolDrained() {
        guard task.loopRunner === self, let fill = task.cacheState?.fill else { return }
        fill.behind = fill.spool?.writer.wantsPause ?? false
        consumerDrained()
    }

    /// Whether reading waits for the file of a body being collected.
    var cacheIsBehind: Bool { task.cacheState?.fill?.behind ?? false }

    /// The exchange ended. When it was a 304's, the stored body it was turned into plays now,
    /// from memory or chunk by chunk from its file, paused and resumed like a connection's
    /// reads: true, the response goes on.
    @inline(never)
    func cacheExchangeFinished() -> Bool {
        guard let state = task.cacheState, let entry = state.validatedBody else { return false }
        state.validatedBody = nil
        let stored = StoredExchange(bodyOf: entry, loop: loop, workers: task.manager.workers)
        continueResponse(on: stored)
        stored.playBody(for: self, paused: !machine.mayRead)
        return true
    }

    /// The task ends: a complete response collected is stored (on a worker); a fetch others
    /// wait for ends now when nothing will be stored.
    func cacheTaskEnded(_ error: NetworkingError?, _ state: TaskCacheState) {
        state.validatedBody = nil
        guard error == nil, let fill = state.fill, !fill.overflowed, let request = state.request else {
            state.fill?.abandon()
            state.fill = nil
            state.lead?.end(stored: false)
            return
        }
        state.fill = nil
        let fields = fill.head.httpFields
        let names = CacheVary.names(in: fields)
        let entry = CacheEntry(key: request.key, status: fill.head.status, reason: fill.head.reason,
                               fields: CacheStorePolicy.storedFields(fields, bodyLength: fill.count, decoded: fill.decoded),
                               body: fill.body, requestTime: state.requestDate, responseTime: fill.responseDate,
                               varyNames: names, varyValues: CacheVary.selected(names, from: request.fields))
        if let spool = fill.spool {
            storeSpooled(entry, spool: spool, size: fill.count, crc: fill.crc, state)
        } else {
            store(entry, state)
        }
    }

    /// Closes a large body's file, then indexes it with `entry` (on a worker): a body that
    /// never held whole in memory, unless the session's `dataTaskWillCacheResponse` wants to
    /// see it.
    private func storeSpooled(_ entry: CacheEntry, spool: (name: String, writer: DownloadFileWriter), size: Int, crc: Int64,
                              _ state: TaskCacheState) {
        let pending = pendingStore(of: entry, state)
        spool.writer.close(.complete) { closed in
            guard let disk = pending.cache.disk, closed.error == nil, closed.size == Int64(size) else {
                unlink(spool.writer.path)
                return pending.end(stored: false)
            }
            guard pending.isReviewed else {
                pending.cache.noteVary(of: entry)
                return pending.end(stored: disk.store(entry, bodyFile: spool.name, size: size, crc: crc))
            }
            // The hook takes the body whole: read back, and stored anew as it comes out.
            var whole = entry
            whole.body = FileManager.default.contents(atPath: spool.writer.path) ?? Data()
            unlink(spool.writer.path)
            let kept = whole.body.count == size ? pending.reviewed(whole) : nil
            pending.end(stored: kept.map { pending.cache.store($0) } ?? false)
        }
    }

    /// Stores `entry` on a worker, after the session's `dataTaskWillCacheResponse` had its say,
    /// then ends the task's lead.
    private func store(_ entry: CacheEntry, _ state: TaskCacheState) {
        let pending = pendingStore(of: entry, state)
        let submitted = task.manager.workers.submit {
            pending.end(stored: pending.reviewed(entry).map { pending.cache.store($0) } ?? false)
        }
        if !submitted { pending.end(stored: false) }
    }

    /// Stores what a 304 made of a stored entry (on a worker): a body in a file stays there and
    /// its row takes the new fields (`HTTPCache.refresh`), unless the session's
    /// `dataTaskWillCacheResponse` wants to see the body, which it takes whole.
    private func storeRevalidated(_ entry: CacheEntry, _ state: TaskCacheState) {
        guard entry.bodyFile != nil else { return store(entry, state) }
        let pending = pendingStore(of: entry, state)
        let submitted = task.manager.workers.submit {
            guard pending.isReviewed else { return pending.end(stored: pending.cache.refresh(entry)) }
            let kept = entry.materialized().flatMap { pending.reviewed($0) }
            pending.end(stored: kept.map { pending.cache.store($0) } ?? false)
        }
        if !submitted { pending.end(stored: false) }
    }

    /// A store about to leave the loop: it takes the task's lead (or makes one, so that lookups
    /// of the entry's coalescing key wait until the response is in, `HTTPCache.leadStore`) and
    /// counts in the cache's pending writes until `end`.
    private func pendingStore(of entry: CacheEntry, _ state: TaskCacheState) -> PendingStore {
        let lead = state.lead ?? state.cache.leadStore(HTTPCache.coalescingKey(of: entry))
        state.lead = nil
        state.cache.pendingWrites.enter()
        return PendingStore(cache: state.cache, lead: lead, dataTask: task as? DataTask, hooks: task.manager.hooks,
                            url: currentRequest.url, requestFields: state.request?.fields ?? HTTPFields())
    }
}

/// What storing a task's response needs off the loop: the cache, the lead others wait on, and
/// the session's `dataTaskWillCacheResponse` with what it is given.
private struct PendingStore: Sendable {
    let cache: HTTPCache
    let lead: CacheFetchLead?
    let dataTask: DataTask?
    let hooks: SessionHooks
    let url: URL
    let requestFields: HTTPFields

    /// Whether the session's hook sees what is stored (data tasks only, as in AFNetworking).
    var isReviewed: Bool { dataTask != nil && hooks.read { $0.dataTaskWillCacheResponse } != nil }

    /// `entry` as the hook leaves it (nil: vetoed); `entry` itself without one.
    func reviewed(_ entry: CacheEntry) -> CacheEntry? {
        guard let dataTask, let hook = hooks.read({ $0.dataTaskWillCacheResponse }) else { return entry }
        return hook(dataTask, CachedResponse(entry)).map { $0.entry(for: url, requestFields: requestFields) }
    }

    /// The store is over: waiters look up again, and `HTTPCache.flush()` stops waiting for it.
    func end(stored: Bool) {
        lead?.end(stored: stored)
        cache.pendingWrites.leave()
    }
}
