/// The sans-I/O reachability machine: the netlink shell feeds it datagrams, timer firings,
/// interface kinds and DNS answers, and performs the actions it returns, in order.
///
/// It keeps a `NetworkTable` from dumps and notifications and reports the target's status once
/// per transition. Notifications arm a settle timer so that a flap of intermediate states gives
/// one report (a few times at most before a decision, so a network that never goes quiet is
/// still read within `maxSettleArms` settle times); after a link or address change it dumps
/// addresses and routes again before
/// deciding, because the kernel removes IPv4 routes silently (no RTM_DELROUTE) when a link goes
/// down or the address their nexthop needed goes away.
struct ReachabilityMonitor {
    /// What the manager watches.
    enum Target: Sendable, Equatable {
        /// Any default route (IPv4 or IPv6): AFNetworking's general manager.
        case general
        /// One address (the port is ignored).
        case address(SocketAddress)
        /// A host name, resolved through the library's DNS (`Action.resolve`).
        case host(String)
    }

    /// What the shell tells the machine.
    enum Event {
        /// The netlink socket is open and subscribed: time for the first dumps.
        case started
        /// One datagram read from the socket (it may hold several netlink messages).
        case received([UInt8])
        /// The kernel dropped messages (recv failed with ENOBUFS): the table must be dumped again.
        case receiveOverrun
        /// The settle timer the machine asked for fired.
        case settleTimerFired
        /// The answer to `Action.classify`.
        case interfaceClassified(index: Int32, name: String, kind: NetworkInterfaceKind)
        /// The answer to `Action.resolve`: the host's addresses (empty: none).
        case resolved([SocketAddress])
        /// `Action.resolve` failed (no such name, timeout, no server).
        case resolutionFailed
    }

    /// What the machine asks the shell to do, in order.
    enum Action: Equatable {
        /// Send this datagram to the kernel (a dump request).
        case send([UInt8])
        /// Arm the settle timer (replacing an armed one).
        case armSettleTimer(milliseconds: UInt64)
        /// Read the interface's kind from sysfs, off the loop, and answer `interfaceClassified`.
        case classify(index: Int32, name: String)
        /// Resolve the host off the loop's critical path and answer `resolved` or `resolutionFailed`.
        case resolve(host: String)
        /// The status changed: tell the user (once per transition).
        case report(NetworkReachabilityStatus)
    }

    /// How long the network must stay quiet after a notification before the machine decides:
    /// long enough to gather one change's burst of messages, well inside the one-second bound.
    static let settleMilliseconds: UInt64 = 100

    /// How many times the settle timer is armed before a decision: a network that never goes
    /// quiet (a flapping link, a chatty router) still gets one within this many settle times
    /// of its first change.
    static let maxSettleArms = 5

    /// How many dump rounds may follow one another before a decision: notifications arriving
    /// during every round would otherwise keep asking for one more forever. The table is kept
    /// current by the notifications themselves; the rounds only catch silent route removals.
    static let maxRoundsBeforeDecision = 3

    /// A host's last DNS answer.
    enum Resolution: Equatable {
        case none
        case addresses([IPAddressBytes])
        case failed
    }

    let target: Target
    /// Links, addresses and routes as last known.
    var table = NetworkTable()
    /// Interface kinds from `interfaceClassified`, by index.
    var kinds: [Int32: NetworkInterfaceKind] = [:]
    /// The last status reported (`.unknown` before the first reading).
    var reported: NetworkReachabilityStatus = .unknown
    /// The dumps in flight, nil when none is.
    var round: NetlinkDumpRound?
    /// What must be dumped again before the next decision.
    var pendingDumps: Set<NetlinkDumpKind> = []
    /// Kinds dumped completely at least once: no decision before all three are.
    var dumped: Set<NetlinkDumpKind> = []
    var settleTimerArmed = false
    var lastSequence: UInt32 = 0
    var started = false
    var resolution = Resolution.none
    var resolving = false
    /// A notification changed the table since the last settled decision.
    var networkChanged = false
    /// Settle timers armed for changes, and dump rounds started, since the last settled decision.
    var settleArms = 0
    var roundsSinceDecision = 0

    init(target: Target) {
        self.target = target
    }

    mutating func handle(_ event: Event) -> [Action] {
        var actions: [Action] = []
        switch event {
        case .started:
            guard !started else { break }
            started = true
            if case .host(let name) = target {
                resolving = true
                actions.append(.resolve(host: name))
            }
            startRound(NetlinkDumpKind.allCases, into: &actions)
        case .received(let datagram):
            receive(NetlinkDecoder.decode(datagram), into: &actions)
        case .receiveOverrun:
            // Notifications were lost: only a full dump tells what changed.
            dumpEverythingAgain(into: &actions)
        case .settleTimerFired:
            settleTimerArmed = false
            if round == nil { settled(into: &actions) }
        case .interfaceClassified(let index, let name, let kind):
            // A late answer for a link gone since, or read under a name the link no longer
            // has (renamed while sysfs was read: the new name's answer is on its way), is dropped.
            guard table.links[index]?.name == name else { break }
            kinds[index] = kind
            if isQuiet { evaluate(into: &actions) }
        case .resolved(let addresses):
            resolving = false
            resolution = .addresses(addresses.map(IPAddressBytes.init))
            if isQuiet { evaluate(into: &actions) }
        case .resolutionFailed:
            resolving = false
            resolution = .failed
            if isQuiet { evaluate(into: &actions) }
        }
        return actions
    }

    /// No dump in flight and no change waiting to settle: the table can be trusted.
    var isQuiet: Bool { round == nil && !settleTimerArmed }

    mutating func armSettleTimer(into actions: inout [Action]) {
        settleTimerArmed = true
        actions.append(.armSettleTimer(milliseconds: Self.settleMilliseconds))
    }

    /// The network has been quiet for the settle time, or a round ended with nothing pending:
    /// dump what the changes require, or decide.
    mutating func settled(into actions: inout [Action]) {
        if !pendingDumps.isEmpty, roundsSinceDecision < Self.maxRoundsBeforeDecision {
            roundsSinceDecision += 1
            startRound(NetlinkDumpKind.ordered(pendingDumps), into: &actions)
            return
        }
        settleArms = 0
        roundsSinceDecision = 0
        evaluate(into: &actions)
        if networkChanged {
            networkChanged = false
            reresolveIfNeeded(into: &actions)
        }
        // Decided on the table as notifications left it; the dumps still owed follow, and
        // their end decides again.
        if !pendingDumps.isEmpty {
            startRound(NetlinkDumpKind.ordered(pendingDumps), into: &actions)
        }
    }

    /// A change restarts the quiet period, but only `maxSettleArms` times before a decision;
    /// after that the timer already armed, or the round in flight, leads to one.
    mutating func settleAfterChange(into actions: inout [Action]) {
        guard settleArms < Self.maxSettleArms else { return }
        settleArms += 1
        armSettleTimer(into: &actions)
    }

    /// A host whose last answer failed or was empty is asked again after the network changed,
    /// since the change may be what it was waiting for (one question in flight at most).
    mutating func reresolveIfNeeded(into actions: inout [Action]) {
        guard case .host(let name) = target, !resolving else { return }
        switch resolution {
        case .failed, .addresses([]):
            resolving = true
            actions.append(.resolve(host: name))
        case .none, .addresses:
            break
        }
    }
}
