import Glibc

/// CONTRACT PLACEHOLDER (issue #17): the sans-I/O machine the netlink shell drives. The
/// reach-core branch replaces this file with the real machine, keeping these names.
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
        case interfaceClassified(index: Int32, kind: NetworkInterfaceKind)
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

    init(target: Target) {
        self.target = target
    }

    let target: Target

    mutating func handle(_ event: Event) -> [Action] {
        preconditionFailure("contract placeholder: replaced by the reach-core branch")
    }
}
