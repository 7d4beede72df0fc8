/// The machine's netlink side: dump rounds, their answers, and notifications.
extension ReachabilityMonitor {
    /// Sends the first of `kinds`' dump requests; the others follow, each on the previous one's
    /// NLMSG_DONE.
    mutating func startRound(_ kinds: [NetlinkDumpKind], into actions: inout [Action]) {
        pendingDumps.subtract(kinds)
        let next = nextSequence()
        let round = NetlinkDumpRound(kinds: kinds, sequence: next)
        self.round = round
        actions.append(.send(round.request))
    }

    /// Everything is dumped again: now when no dump is in flight and no change is settling,
    /// else when those end (one dump at a time per socket).
    mutating func dumpEverythingAgain(into actions: inout [Action]) {
        pendingDumps = Set(NetlinkDumpKind.allCases)
        if isQuiet { startRound(NetlinkDumpKind.allCases, into: &actions) }
    }

    /// A fresh sequence number, so a dump's answer is told from older dumps' and notifications.
    mutating func nextSequence() -> UInt32 {
        // 0 is what kernel-made notifications carry; never use it for a dump.
        lastSequence = lastSequence == UInt32.max ? 1 : lastSequence + 1
        return lastSequence
    }

    mutating func receive(_ datagram: NetlinkDatagram, into actions: inout [Action]) {
        var changed = false
        for message in datagram.messages {
            if let round, message.sequence == round.sequence,
               message.isDumpPart || message.type == Netlink.MessageType.error || message.type == Netlink.MessageType.done {
                answer(message, into: &actions)
            } else if message.isDumpPart || message.type == Netlink.MessageType.done {
                continue  // The tail of a dump abandoned after an error: stale.
            } else {
                changed = notify(message, into: &actions) || changed
            }
        }
        if datagram.framingError != nil {
            // The rest of the datagram is lost, and with it whatever it said.
            pendingDumps = Set(NetlinkDumpKind.allCases)
            changed = true
        }
        if changed {
            // Once per datagram: a burst restarts the quiet period instead of deciding mid-way.
            networkChanged = true
            settleAfterChange(into: &actions)
        }
    }

    /// A part of the dump in flight, its end, or its refusal.
    private mutating func answer(_ message: NetlinkMessage, into actions: inout [Action]) {
        guard var round else { return }
        if message.isDumpInterrupted { round.interrupted = true }
        switch message.body {
        case .newLink(let link): round.links.append(link)
        case .newAddress(let address): round.addresses.append(address)
        case .newRoute(let route): round.routes.append(route)
        case .done:
            self.round = round
            finishDump(into: &actions)
            return
        case .error:
            // EBUSY (another dump still running on the socket) or anything else: the round is
            // lost. Retry everything once the settle time has passed, not at once, so a busy
            // socket is not hammered.
            self.round = nil
            pendingDumps = Set(NetlinkDumpKind.allCases)
            armSettleTimer(into: &actions)
            return
        case .malformed:
            round.interrupted = true
        case .delLink, .delAddress, .delRoute, .other:
            break
        }
        self.round = round
    }

    /// NLMSG_DONE: the dump's answer replaces what the table held of its kind.
    private mutating func finishDump(into actions: inout [Action]) {
        guard var round else { return }
        switch round.kind {
        case .links:
            let old = table.links
            table.links = Dictionary(round.links.map { ($0.index, $0) }, uniquingKeysWith: { $1 })
            kinds = kinds.filter { table.links[$0.key] != nil }
            for link in round.links.sorted(by: { $0.index < $1.index }) {
                classifyIfNeeded(link, previous: old[link.index], into: &actions)
            }
            table.addresses = table.addresses.filter { table.links[$0.value.index] != nil }
        case .addresses:
            table.addresses = [:]
            round.addresses.forEach { table.insert($0) }
        case .routes:
            table.routes = [:]
            round.routes.forEach { table.insert($0) }
        }
        if round.interrupted {
            pendingDumps = Set(NetlinkDumpKind.allCases)
        } else {
            dumped.insert(round.kind)
        }
        if round.hasNext {
            round.advance(sequence: nextSequence())
            self.round = round
            actions.append(.send(round.request))
            return
        }
        self.round = nil
        if !settleTimerArmed { settled(into: &actions) }
    }

    /// A notification: the table changes at once; the decision waits for the settle timer and,
    /// after a link or address change, for fresh address and route dumps (the kernel drops
    /// routes without telling when a link goes down or an address goes away).
    /// True when the table changed or must be dumped again.
    private mutating func notify(_ message: NetlinkMessage, into actions: inout [Action]) -> Bool {
        // Router advertisements refresh addresses and routes, wireless events repeat links: what
        // the table already holds changes nothing. (With a dump in flight it still counts, since
        // that dump may answer with an older state; and a replace may have displaced another
        // route of the same identity.)
        if round == nil, message.flags & Netlink.Flag.replace == 0, table.holds(message.body) { return false }
        switch message.body {
        case .newLink(let link):
            let previous = table.links[link.index]
            table.insert(link)
            classifyIfNeeded(link, previous: previous, into: &actions)
            pendingDumps.formUnion([.addresses, .routes])
        case .delLink(let link):
            table.remove(link)
            kinds[link.index] = nil
            pendingDumps.formUnion([.addresses, .routes])
        case .newAddress(let address):
            table.insert(address)
            pendingDumps.formUnion([.addresses, .routes])
        case .delAddress(let address):
            table.remove(address)
            pendingDumps.formUnion([.addresses, .routes])
        case .newRoute(let route) where message.flags & Netlink.Flag.replace != 0:
            // IPv4 replaces the first of several routes sharing the identity; which one that
            // is only a dump tells.
            if !table.replace(route) { pendingDumps.insert(.routes) }
        case .newRoute(let route):
            table.insert(route)
        case .delRoute(let route):
            // A deletion naming no route held (another nexthop of a multipath route, a route
            // missed) leaves the table unsure: dump routes.
            if !table.remove(route) { pendingDumps.insert(.routes) }
        case .malformed:
            pendingDumps = Set(NetlinkDumpKind.allCases)
        case .error, .done, .other:
            return false  // Not ours, or nothing reachability depends on.
        }
        if let round {
            // The dump in flight may already have passed what changed, and its answer would
            // then overwrite the change: dump that kind again after it.
            pendingDumps.insert(round.kind)
        }
        return true
    }

    /// A link seen for the first time or renamed is classified (its kind comes from sysfs, by
    /// name). Loopback needs no asking: its kind is always `.other`.
    private mutating func classifyIfNeeded(_ link: NetlinkLink, previous: NetlinkLink?, into actions: inout [Action]) {
        guard !link.isLoopback, previous == nil || previous?.name != link.name else { return }
        actions.append(.classify(index: link.index, name: link.name))
    }
}
