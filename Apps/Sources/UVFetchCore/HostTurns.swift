import DequeModule
import HeapModule

/// URLs set aside by host until their host's turn comes, for a run that manages its hosts
/// (`--delay-per-host`, `--rate-per-host`, a robots.txt Crawl-delay, a server's Retry-After,
/// robots.txt being fetched): never while the host is held or blocked, so a waiting host never
/// takes a slot in flight to wait there, and URLs of other hosts further down the input go first.
/// The run's interval spaces the starts of a host's URLs (the session spaces them again where
/// they meet a connection, `SessionConfiguration.delayPerHost`). A host with an interval of its
/// own (a Crawl-delay, which the session does not know) has one URL out at a time, and its next
/// one is handed out that interval after the last ended (`ended`), as Yandex defines
/// Crawl-delay: spaced starts let requests that waited inside the session (for a connection, a
/// slow DNS answer) reach the server together. A value with injected times (any monotonic unit,
/// the run uses nanoseconds): no clock, no queue.
///
/// Memory stays bounded: at most `capacity` URLs wait (the caller stops adding when `isFull`),
/// plus one small record per host handed a URL within its interval, held, blocked, or with an
/// interval of its own. Hosts take turns in the order their turns came, so no host starves
/// another; within a host, URLs keep input order (a URL put back with `addFirst` goes first).
struct HostTurns<Element> {
    /// Between two URLs of one host, unless the host has its own (`setInterval`).
    let interval: UInt64
    /// The most URLs set aside.
    let capacity: Int

    /// Where a known host stands. A host is in exactly one phase; the `ready` queue and the
    /// `turns` heap may keep entries of earlier phases, which the generation tells apart.
    private enum Phase: Equatable {
        /// Its turn has come and it has a URL waiting: in `ready`.
        case ready
        /// Its next turn comes at this time: in `turns`.
        case scheduled(UInt64)
        /// Nothing is handed out until `unblock` (its robots.txt is being fetched).
        case blocked
        /// Its turn has come with nothing waiting; kept for its own interval.
        case idle
        /// A URL of it is out (a host with an interval of its own): its next turn is set when
        /// that URL ends.
        case busy
    }

    private struct Host {
        var waiting = Deque<Element>()
        var phase: Phase
        /// Changed with every phase, so that an entry made for an earlier one is ignored.
        var generation: UInt32 = 0
        /// Its own interval (a Crawl-delay), when it has one.
        var interval: UInt64?
        /// No turn before this (a Retry-After).
        var heldUntil: UInt64 = 0

        init(phase: Phase) { self.phase = phase }

        mutating func enter(_ phase: Phase) {
            self.phase = phase
            generation &+= 1
        }
    }

    /// A host's next turn: by time, then in the order the turns were given.
    private struct Turn: Comparable {
        var at: UInt64
        var serial: UInt64
        var host: String
        var generation: UInt32

        static func < (lhs: Turn, rhs: Turn) -> Bool { (lhs.at, lhs.serial) < (rhs.at, rhs.serial) }
        static func == (lhs: Turn, rhs: Turn) -> Bool { (lhs.at, lhs.serial) == (rhs.at, rhs.serial) }
    }

    private var hosts: [String: Host] = [:]
    /// Hosts whose turn has come and that have a URL waiting, in the order their turns came.
    private var ready = Deque<(host: String, generation: UInt32)>()
    /// Hosts waiting for their turn, earliest first.
    private var turns = Heap<Turn>()
    private var serial: UInt64 = 0
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

    /// Sets `element` aside for `host`, after the host's others.
    mutating func add(_ element: Element, host: String) {
        setAside(element, host: host, first: false)
    }

    /// Puts `element` back for `host`, before the host's others: a URL that must wait for its
    /// host (`hold`) and go first when the host's turn comes.
    mutating func addFirst(_ element: Element, host: String) {
        setAside(element, host: host, first: true)
    }

    private mutating func setAside(_ element: Element, host: String, first: Bool) {
        count += 1
        guard hosts[host] != nil else {
            var state = Host(phase: .ready)
            state.waiting.append(element)
            hosts[host] = state
            ready.append((host, 0))
            return
        }
        if first { hosts[host]!.waiting.prepend(element) } else { hosts[host]!.waiting.append(element) }
        if hosts[host]!.phase == .idle { makeReady(host) }
    }

    /// The next URL whose host's turn has come by `now` (times never go back), or nil.
    mutating func next(at now: UInt64) -> Element? {
        promote(at: now)
        while let (host, generation) = ready.popFirst() {
            guard var state = hosts[host], state.phase == .ready, state.generation == generation else { continue }
            let element = state.waiting.removeFirst()
            count -= 1
            if let own = state.interval, own > 0 {
                state.enter(.busy)
                hosts[host] = state
            } else {
                let at = max(now &+ (state.interval ?? interval), state.heldUntil)
                state.enter(.scheduled(at))
                hosts[host] = state
                schedule(host, at: at, generation: state.generation)
            }
            return element
        }
        return nil
    }

    /// When a call of `next` may find a URL: the earliest next turn (possibly of a host that
    /// has none waiting by then, or of a phase since left, each of which costs one call for
    /// nothing); nil when nothing waits, or only behind blocked hosts (`unblock` is then the
    /// caller's cue). Meaningful after `next` returned nil.
    var nextTurn: UInt64? {
        guard count > 0 else { return nil }
        return ready.isEmpty ? turns.min?.at : 0
    }

    /// No URL of `host` is handed out before `until` (a Retry-After), nor its interval after
    /// the last one. A host not known yet is remembered until then.
    mutating func hold(_ host: String, until: UInt64) {
        var state = hosts[host] ?? Host(phase: .idle)
        state.heldUntil = max(state.heldUntil, until)
        switch state.phase {
        case .blocked, .busy:
            // Its next turn is set by `unblock` or `ended`, which keep to the hold.
            break
        case .scheduled(let at) where at >= until:
            break
        case .ready, .idle, .scheduled:
            state.enter(.scheduled(until))
            schedule(host, at: until, generation: state.generation)
        }
        hosts[host] = state
    }

    /// No URL of `host` is handed out until `unblock`.
    mutating func block(_ host: String) {
        var state = hosts[host] ?? Host(phase: .idle)
        state.enter(.blocked)
        hosts[host] = state
    }

    /// Lets `host` go on from `now` (or once a hold ends). Nothing for a host not blocked.
    mutating func unblock(_ host: String, at now: UInt64) {
        guard var state = hosts[host], state.phase == .blocked else { return }
        let at = max(now, state.heldUntil)
        state.enter(.scheduled(at))
        hosts[host] = state
        schedule(host, at: at, generation: state.generation)
    }

    /// The URL `next` handed out for `host` has ended, all its tries (on the queue): a host with
    /// an interval of its own gets its next turn that interval from `now` when `spaced` (the
    /// URL was requested), at `now` when not (robots.txt disallowed it), or once a hold ends.
    /// Nothing for a host without a URL out.
    mutating func ended(_ host: String, at now: UInt64, spaced: Bool = true) {
        guard var state = hosts[host], state.phase == .busy else { return }
        let at = max(spaced ? now &+ (state.interval ?? 0) : now, state.heldUntil)
        state.enter(.scheduled(at))
        hosts[host] = state
        schedule(host, at: at, generation: state.generation)
    }

    /// Spaces `host`'s URLs by `interval` instead of the run's (a Crawl-delay); kept as long as
    /// the run is.
    mutating func setInterval(_ interval: UInt64, for host: String) {
        var state = hosts[host] ?? Host(phase: .idle)
        state.interval = interval
        hosts[host] = state
    }

    /// Drops every URL set aside (a stopped run); hosts' turns are kept.
    mutating func removeAll() {
        for (host, state) in hosts {
            if state.phase == .ready && state.interval == nil && state.heldUntil == 0 {
                hosts.removeValue(forKey: host)
            } else {
                hosts[host]!.waiting.removeAll()
                if state.phase == .ready { hosts[host]!.enter(.idle) }
            }
        }
        ready.removeAll()
        count = 0
    }

    private mutating func makeReady(_ host: String) {
        hosts[host]!.enter(.ready)
        ready.append((host, hosts[host]!.generation))
    }

    private mutating func schedule(_ host: String, at: UInt64, generation: UInt32) {
        serial &+= 1
        turns.insert(Turn(at: at, serial: serial, host: host, generation: generation))
    }

    /// Hosts whose turn came by `now` get ready if they have a URL, or are forgotten (kept idle
    /// if they have an interval of their own): nothing then remains to keep a distance from.
    private mutating func promote(at now: UInt64) {
        while let first = turns.min, first.at <= now {
            turns.removeMin()
            guard let state = hosts[first.host], state.phase == .scheduled(first.at), state.generation == first.generation else {
                continue
            }
            if !state.waiting.isEmpty {
                makeReady(first.host)
            } else if state.interval != nil {
                hosts[first.host]!.enter(.idle)
            } else {
                hosts.removeValue(forKey: first.host)
            }
        }
    }
}
