import DequeModule

/// URLs set aside by host until their host's turn comes, for a run paced per host
/// (`--delay-per-host`, `--rate-per-host`): a host's URL is handed out only `interval` after the
/// previous one of that host was, so a paced host never takes a slot in flight to wait there,
/// and URLs of other hosts further down the input go first. A value with injected times (any
/// monotonic unit, the run uses nanoseconds): no clock, no queue.
///
/// Memory stays bounded: at most `capacity` URLs wait (the caller stops adding when `isFull`),
/// plus one small record per host handed a URL within the last `interval`, which it must
/// remember to keep the spacing. Hosts take turns in the order their turns came, so no host
/// starves another; within a host, URLs keep input order.
struct HostTurns<Element> {
    /// Between two URLs of one host.
    let interval: UInt64
    /// The most URLs set aside.
    let capacity: Int

    private struct Host {
        var waiting = Deque<Element>()
        /// In `ready`, rather than in `turns`.
        var isReady = false
    }

    private var hosts: [String: Host] = [:]
    /// Hosts whose turn has come and that have a URL waiting, in the order their turns came.
    private var ready = Deque<String>()
    /// Hosts handed a URL, with when their next turn comes: in order of that time, since URLs
    /// are handed out as time goes on and every host waits the same interval. A host is in
    /// `ready` or here, exactly once, as long as it is known.
    private var turns = Deque<(at: UInt64, host: String)>()
    /// URLs set aside.
    private(set) var count = 0

    init(interval: UInt64, capacity: Int) {
        self.interval = interval
        self.capacity = max(1, capacity)
    }

    var isFull: Bool { count >= capacity }
    var isEmpty: Bool { count == 0 }
    /// Hosts remembered (for tests of the memory bound).
    var hostCount: Int { hosts.count }

    /// Sets `element` aside for `host`.
    mutating func add(_ element: Element, host: String) {
        count += 1
        if hosts[host] != nil {
            hosts[host]!.waiting.append(element)
            return
        }
        var state = Host()
        state.waiting.append(element)
        state.isReady = true
        hosts[host] = state
        ready.append(host)
    }

    /// The next URL whose host's turn has come by `now` (times never go back), or nil.
    mutating func next(at now: UInt64) -> Element? {
        promote(at: now)
        guard let host = ready.popFirst() else { return nil }
        let element = hosts[host]!.waiting.removeFirst()
        hosts[host]!.isReady = false
        count -= 1
        turns.append((now &+ interval, host))
        return element
    }

    /// When a call of `next` may find a URL: the earliest next turn (possibly of a host that
    /// has none waiting by then, which costs one call for nothing); nil when nothing waits.
    /// Meaningful after `next` returned nil.
    var nextTurn: UInt64? {
        guard count > 0 else { return nil }
        return ready.isEmpty ? turns.first?.at : 0
    }

    /// Drops every URL set aside (a stopped run); hosts' turns are kept.
    mutating func removeAll() {
        for host in ready { hosts.removeValue(forKey: host) }
        ready.removeAll()
        for key in hosts.keys { hosts[key]!.waiting.removeAll() }
        count = 0
    }

    /// Hosts whose turn came by `now` get ready if they have a URL, or are forgotten: nothing
    /// then remains to keep a distance from.
    private mutating func promote(at now: UInt64) {
        while let first = turns.first, first.at <= now {
            turns.removeFirst()
            if hosts[first.host]!.waiting.isEmpty {
                hosts.removeValue(forKey: first.host)
            } else {
                hosts[first.host]!.isReady = true
                ready.append(first.host)
            }
        }
    }
}
