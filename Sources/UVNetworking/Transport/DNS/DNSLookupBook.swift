/// What a resolver knows of the names it was asked for: answers it may reuse (addresses, and
/// "no such name" for a short while) and look-ups in flight with the callers waiting on each, so
/// that a burst of connections to one host makes one query. Sans-I/O: the resolver's shell asks it
/// what to do and performs it; tests drive it with plain values.
struct DNSLookupBook<Waiter> {
    typealias Answer = Result<[SocketAddress], TransportError>

    /// A name as asked: the port is part of each address handed back.
    struct Key: Hashable {
        var host: String
        var port: Int
    }

    /// How long answers are kept, in loop milliseconds.
    struct Policy {
        /// The longest any answer is kept (`dnsCacheTTL`); 0 keeps nothing.
        var maximumMilliseconds: UInt64
        /// How long "no such name" and "no address" are kept, bounded by `maximumMilliseconds`.
        /// The answer's SOA minimum would say, but c-ares's getaddrinfo does not hand it over.
        var negativeMilliseconds: UInt64 = 5_000
    }

    /// What the shell does with a look-up.
    enum Decision: Equatable {
        /// The answer is known: hand it to the caller now.
        case answered
        /// A query for this name is in flight: the caller waits for it.
        case joined
        /// Start a query under this number (it names the query in `finished` and `timedOut`).
        case startQuery(UInt64)
    }

    private struct Entry {
        var answer: Answer
        var expires: UInt64
    }

    private struct Flight {
        var query: UInt64
        var waiters: [Waiter]
    }

    let policy: Policy
    private var cache: [Key: Entry] = [:]
    private var flights: [Key: Flight] = [:]
    private var nextQuery: UInt64 = 1
    /// When the cache grows to this many entries, expired ones are swept out: a crawler's names
    /// are each asked for a few times and never again, and must not pile up.
    private var sweepAt = 1024

    init(policy: Policy) { self.policy = policy }

    /// Look-ups in flight (for tests and the shell's idle check).
    var flightCount: Int { flights.count }
    /// Answers kept, expired or not (for tests).
    var cachedCount: Int { cache.count }

    /// A caller asks for `key` at loop time `now`. `.answered` comes with the answer; otherwise
    /// the waiter is kept until the query ends.
    mutating func lookUp(_ key: Key, waiter: Waiter, now: UInt64) -> (Decision, Answer?) {
        if let entry = cache[key] {
            if entry.expires > now { return (.answered, entry.answer) }
            cache[key] = nil
        }
        if flights[key] != nil {
            flights[key]!.waiters.append(waiter)
            return (.joined, nil)
        }
        let query = nextQuery
        nextQuery += 1
        flights[key] = Flight(query: query, waiters: [waiter])
        return (.startQuery(query), nil)
    }

    /// Query `query` for `key` ended with `answer`; `ttlSeconds` is the smallest TTL of the
    /// records (nil when the answer did not say). Returns the waiters to hand the answer to: none
    /// when the look-up timed out before (a late answer is still kept for the next caller).
    mutating func finished(_ key: Key, query: UInt64, answer: Answer, ttlSeconds: Int?, now: UInt64) -> [Waiter] {
        if let lifetime = cacheLifetime(of: answer, ttlSeconds: ttlSeconds), lifetime > 0 {
            store(key, Entry(answer: answer, expires: LoopDuration.deadline(now, plus: lifetime)), now: now)
        }
        guard let flight = flights[key], flight.query == query else { return [] }
        flights[key] = nil
        return flight.waiters
    }

    /// Query `query` for `key` took longer than the look-up timeout: its waiters fail, nothing
    /// is cached, and the next caller starts a new query.
    mutating func timedOut(_ key: Key, query: UInt64) -> [Waiter] {
        guard let flight = flights[key], flight.query == query else { return [] }
        flights[key] = nil
        return flight.waiters
    }

    /// Ends everything: the waiters of every flight, to be failed.
    mutating func removeAll() -> [Waiter] {
        let waiters = flights.values.flatMap(\.waiters)
        flights.removeAll()
        cache.removeAll()
        return waiters
    }

    /// How long `answer` may be reused, in milliseconds; nil: not at all. Addresses live as long
    /// as their records say, up to the configured maximum; "no such name" and "no address" a
    /// short while; failures that may pass at once (timeouts, SERVFAIL, refused) not at all.
    func cacheLifetime(of answer: Answer, ttlSeconds: Int?) -> UInt64? {
        switch answer {
        case .success:
            guard let ttlSeconds else { return policy.maximumMilliseconds }
            return min(UInt64(max(ttlSeconds, 0)) * 1000, policy.maximumMilliseconds)
        case .failure(.nameNotFound), .failure(.noAddresses):
            return min(policy.negativeMilliseconds, policy.maximumMilliseconds)
        case .failure:
            return nil
        }
    }

    private mutating func store(_ key: Key, _ entry: Entry, now: UInt64) {
        cache[key] = entry
        guard cache.count >= sweepAt else { return }
        cache = cache.filter { $0.value.expires > now }
        sweepAt = max(1024, cache.count * 2)
    }
}
