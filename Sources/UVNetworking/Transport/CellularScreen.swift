import Glibc

/// What a connector does, for an origin whose requests refuse cellular
/// (`Request.allowsCellularAccess` false), between DNS and the TCP connects: on a worker (the
/// routing table is read from netlink and interfaces are classified from sysfs, both blocking),
/// it decides for each address how to reach it without cellular (`CellularRouting`), and hands
/// the verdict back to the loop. Origins that allow cellular never get here: their connections
/// cost nothing more.
struct CellularScreen: Sendable {
    /// Where the work runs.
    let workers: WorkerPool
    /// Reads the interfaces' kinds.
    let classifier: InterfaceClassifier

    init(workers: WorkerPool, classifier: InterfaceClassifier) {
        self.workers = workers
        self.classifier = classifier
    }

    /// A screen on `workers` that reads sysfs, or the tree a test put in its place
    /// (`ReachabilityTesting.interfaceRoot`).
    init(workers: WorkerPool) {
        let root = ReachabilityTesting.interfaceRoot.withLock { $0 } ?? InterfaceClassifier.systemRoot
        self.init(workers: workers, classifier: InterfaceClassifier(root: root))
    }

    enum Outcome: Equatable {
        /// Connect to these addresses (in the resolver's order), each socket bound to its
        /// interface (nil: not bound).
        case connect([SocketAddress], interfaces: [String?])
        /// No address can be reached without cellular.
        case denied(reason: String)
    }

    /// Decides for `addresses` on a worker; `completion` runs on `loop`'s thread (never, once the
    /// loop has shut down: the loop's end ends the connection anyway).
    func screen(_ addresses: [SocketAddress], loop: EventLoop, completion: @escaping (Outcome) -> Void) {
        let callback = LoopBound(completion, loop: loop)
        let classifier = self.classifier
        workers.run {
            let outcome: Outcome
            switch NetworkTableSnapshot.read() {
            case .success(let table):
                outcome = Self.outcome(for: addresses, in: table, kind: classifier.kind(of:)) { address, interface in
                    MarkedSocket.checkBinding(family: address.isIPv6 ? AF_INET6 : AF_INET, to: interface)
                }
            case .failure(let error):
                outcome = .denied(reason: "the routing table could not be read (\(error))")
            }
            _ = loop.execute { callback.value(outcome) }
        }
    }

    /// The outcome for `addresses` given the routing table, how interfaces are classified and
    /// whether a socket may be bound to one (`canBind`: 0 or a negative errno). Each interface
    /// is classified once. An address whose route is not cellular is kept even where binding is
    /// not allowed (unbound, as without the rule); one that needs another interface is kept only
    /// bound to it.
    static func outcome(for addresses: [SocketAddress], in table: NetworkTable, kind: (String) -> NetworkInterfaceKind,
                        canBind: (SocketAddress, String) -> Int32) -> Outcome {
        var kinds: [String: NetworkInterfaceKind] = [:]
        func classify(_ name: String) -> NetworkInterfaceKind {
            if let known = kinds[name] { return known }
            let found = kind(name)
            kinds[name] = found
            return found
        }
        var kept: [SocketAddress] = [], interfaces: [String?] = [], reasons: [String] = []
        for address in addresses {
            switch CellularRouting.decide(for: IPAddressBytes(address), in: table, kind: classify) {
            case .unbound:
                kept.append(address)
                interfaces.append(nil)
            case .pin(let interface):
                kept.append(address)
                interfaces.append(canBind(address, interface) == 0 ? interface : nil)
            case .reroute(let interface):
                let status = canBind(address, interface)
                if status == 0 {
                    kept.append(address)
                    interfaces.append(interface)
                } else {
                    reasons.append("\(address.ipAddress): its route is cellular, and a socket cannot be bound to \(interface): \(UVError.describe(status))")
                }
            case .denied(let reason):
                reasons.append("\(address.ipAddress): \(reason)")
            }
        }
        if kept.isEmpty { return .denied(reason: reasons.joined(separator: "; ")) }
        return .connect(kept, interfaces: interfaces)
    }
}
