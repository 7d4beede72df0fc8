import Foundation
import HTTPTypes

/// The cache's step before a task reaches its loop: the lookup (the store may be on disk, and
/// a loop thread does no I/O), coalescing with another task's fetch of the same URL, and the
/// conditional request a validation sends. The loop's side is Engine/TaskRunner+Cache.swift.
extension SessionManager {
    /// Looks `task`'s request up on a worker, then sends the resume the lookup held. A pool
    /// that was shut down does the lookup here: the loop then ends the task as it ends any.
    func lookUp(_ task: SessionTask, _ state: TaskCacheState) {
        if !workers.submit({ [self] in self.runLookup(task, state, coalescing: true) }) {
            runLookup(task, state, coalescing: true)
        }
    }

    /// The lookup. `coalescing`: a miss may wait for another task's fetch of the same key
    /// (false once such a fetch ended without storing: its waiters then go to the origin
    /// together rather than one after another).
    private func runLookup(_ task: SessionTask, _ state: TaskCacheState, coalescing: Bool) {
        let cache = state.cache
        let request = state.request ?? CacheRequest(task.sentRequest, sessionFields: configuration.defaultRequestFields)
        state.request = request
        let again: @Sendable (Bool) -> Void = { [self] stored in
            // Off the thread that ended the lead (a loop thread, or a worker storing).
            if !self.workers.submit({ self.runLookup(task, state, coalescing: stored) }) {
                self.runLookup(task, state, coalescing: stored)
            }
        }
        // A response for the key (or the request's variant of it) being fetched or stored now is
        // what the lookup should find (a task that completed a moment ago may still be storing
        // it): wait for it.
        let coalescingKey = cache.coalescingKey(for: request)
        if coalescing, request.looksUp,
           cache.waitForLead(request.key, again) || (coalescingKey != request.key && cache.waitForLead(coalescingKey, again)) {
            return
        }
        var plan = cache.plan(for: request)
        if coalescing, case .fetch(store: true, lookedUp: true) = plan,
           request.policy == .useProtocolCachePolicy || request.policy == .returnCacheDataElseLoad {
            let lead = cache.lead(coalescingKey, orWait: again)
            // Another task fetches it: this one is looked up again when that one ends.
            guard let lead else { return }
            state.lead = lead
        }
        // What goes out in the task's own request's place: the stored validators, and the
        // fields the Fetch standard adds for its modes.
        var added = Self.fetchModeFields(for: request)
        if case .validate(let stored) = plan { added += CacheReuse.conditionalFields(for: stored.fields) }
        if !added.isEmpty, plan.reachesOrigin {
            if let prepared = preparation(of: task, adding: added) {
                state.sentInstead = prepared
            } else if case .validate = plan {
                plan = .fetch(store: true, lookedUp: true)
            }
        }
        state.plan = plan
        state.ready()
        send(.resume, for: task)
    }

    /// The fields the Fetch standard's HTTP-network-or-cache fetch adds for a cache mode,
    /// unless the request has its own: "no-cache" (`reloadRevalidatingCacheData`) asks
    /// `Cache-Control: max-age=0`; "reload" and "no-store" (`reloadIgnoringLocalCacheData`,
    /// `reloadWithoutCaching`) ask `Pragma: no-cache` and `Cache-Control: no-cache`, so that
    /// caches on the way do not answer either.
    static func fetchModeFields(for request: CacheRequest) -> [(name: String, value: String)] {
        let hasCacheControl = request.fields[.cacheControl] != nil
        switch request.policy {
        case .reloadRevalidatingCacheData:
            return hasCacheControl ? [] : [("Cache-Control", "max-age=0")]
        case .reloadIgnoringLocalCacheData, .reloadWithoutCaching:
            var fields: [(name: String, value: String)] = []
            if request.fields[HTTPField.Name("Pragma")!] == nil { fields.append(("Pragma", "no-cache")) }
            if !hasCacheControl { fields.append(("Cache-Control", "no-cache")) }
            return fields
        case .useProtocolCachePolicy, .returnCacheDataElseLoad, .returnCacheDataDontLoad:
            return []
        }
    }

    /// `task`'s request with `fields` set, prepared; nil when it cannot be (the task's own
    /// request could not be either, and fails on its loop).
    private func preparation(of task: SessionTask, adding fields: [(name: String, value: String)]) -> PreparedRequest? {
        guard task.preparedRequest != nil else { return nil }
        var request = task.sentRequest
        for field in fields { request.setValue(field.value, forHTTPHeaderField: field.name) }
        return try? PreparedRequestCache.make(request, for: self)
    }
}
