import Synchronization

/// The last request a session prepared and what it became, so that a task made from an equal
/// request reuses the checked and encoded bytes instead of parsing the URL and encoding the
/// head again: batch fetchers, pollers and load generators send one `Request` value over and
/// over.
///
/// An entry is reused only when nothing that went into it can have changed:
/// - the request is equal (`Request ==`: URL, method, fields in order, body, timeouts, cookie
///   handling), so a change to the request, to the request serializer's default headers (which
///   are copied into the request) or to a URL's credentials misses;
/// - the session's own fields (`SessionManager.defaultRequestFields`) and proxies are fixed
///   when the session is made, and the cache is the session's;
/// - cookies are read per send: when the store was asked, it is asked again, and a different
///   Cookie field (one appeared, changed or expired) misses;
/// - for https, the host's security binding is looked up per send, and a new one (a policy
///   changed) misses.
///
/// Only requests whose body, if any, went whole into the bytes are kept, and only up to
/// `largestEntry` bytes, so the session never holds a large body or a stream's factory.
final class PreparedRequestCache: Sendable {
    /// A request and what it was prepared into.
    private final class Entry: Sendable {
        let request: Request
        let prepared: PreparedRequest

        init(request: Request, prepared: PreparedRequest) {
            self.request = request
            self.prepared = prepared
        }

        /// Whether `other` equals the kept request; a method, so the kept request is compared
        /// in place rather than copied out of the entry first.
        func matches(_ other: Request) -> Bool { request == other }

        /// `PreparedRequestCache.holds` for the kept preparation, read in place (no retain of it
        /// for the call).
        func holds(for manager: SessionManager) -> Bool { PreparedRequestCache.holds(prepared, for: manager) }
    }

    /// The largest encoding kept (head and in-memory body).
    static let largestEntry = 16 * 1024

    private let last = Mutex<Entry?>(nil)

    /// The prepared form of `request` for `manager`: the last one when it still holds, else a
    /// new one (then kept as the last).
    func prepare(_ request: Request, for manager: SessionManager) throws(NetworkingError) -> PreparedRequest {
        // The lock covers only the load: the comparison runs outside it.
        if let entry = last.withLock({ $0 }), entry.matches(request), entry.holds(for: manager) {
            return entry.prepared
        }
        let prepared = try Self.make(request, for: manager)
        if Self.isSmall(prepared) {
            let entry = Entry(request: request, prepared: prepared)
            last.withLock { $0 = entry }
        }
        return prepared
    }

    /// The prepared form of `request` sent with `trace`'s fields (a tracer's `traceparent`):
    /// `prepare(request)`, reused as above, with the fields written in where the request's own
    /// end. Each task's fields differ, so preparing the request with them would never find an
    /// equal one and would check and encode the whole head again. When the fields cannot simply
    /// be added (`PreparedRequest.adding`), or the caller's `tracestate` is to go, the request
    /// as sent (`TaskTrace.request(from:)`) is prepared afresh and not kept.
    func prepare(_ request: Request, tracedBy trace: TaskTrace, for manager: SessionManager) throws(NetworkingError) -> PreparedRequest {
        let base = try prepare(request, for: manager)
        if request.value(forHTTPHeaderField: TaskTrace.tracestate) == nil,
           let prepared = PreparedRequest.adding(trace.fields, to: base, of: request, defaults: manager.defaultFields(for: request)) {
            return prepared
        }
        return try Self.make(trace.request(from: request), for: manager)
    }

    /// A new preparation of `request` with the session's fields, cookies, proxies and policies.
    static func make(_ request: Request, for manager: SessionManager) throws(NetworkingError) -> PreparedRequest {
        try PreparedRequest(request, defaults: manager.defaultFields(for: request), cookies: manager.cookieStore,
                            proxies: manager.proxies) { (host) throws(NetworkingError) in
            try manager.securityBinding(forHost: host)
        }
    }

    /// Whether `prepared` is small enough to be kept after its task: its body, if any, went
    /// whole into its bytes, which are at most `largestEntry`.
    static func isSmall(_ prepared: PreparedRequest) -> Bool {
        prepared.streamedBody == nil && prepared.bytes.count <= largestEntry
    }

    /// Whether the per-send inputs of `prepared` are unchanged: the Cookie field the store
    /// gives, and for https the host's security binding.
    private static func holds(_ prepared: PreparedRequest, for manager: SessionManager) -> Bool {
        if prepared.asksCookieStore, let cookies = manager.cookieStore {
            guard cookies.cookieHeaderValue(for: prepared.target) == prepared.cookie else { return false }
        }
        if let security = prepared.security {
            guard let current = try? manager.securityBinding(forHost: prepared.target.host), current === security else { return false }
        }
        return true
    }
}
