@testable import UVNetworking

/// Drives a `ReachabilityMonitor` with recorded kernel bytes: every dump request it sends is
/// answered from a recorded step, as the kernel answered it, renumbered to the request.
struct MonitorReplay {
    typealias Action = ReachabilityMonitor.Action
    var machine: ReachabilityMonitor
    /// Where dump requests are answered from.
    var answers: RecordedStep

    init(_ target: ReachabilityMonitor.Target, answers: RecordedStep = RecordedNetlink.initial) {
        machine = ReachabilityMonitor(target: target)
        self.answers = answers
    }

    /// Handles `event`, answers the dump requests it leads to, and returns every action in order.
    mutating func handle(_ event: ReachabilityMonitor.Event) -> [Action] {
        var actions = machine.handle(event)
        var answered = 0
        while answered < actions.count {
            defer { answered += 1 }
            guard case .send(let request) = actions[answered] else { continue }
            for datagram in answers.dump(Self.kind(of: request)) {
                actions += machine.handle(.received(renumbered(datagram, sequence: Self.sequence(of: request))))
            }
        }
        return actions
    }

    /// Feeds the step's notifications (the machine sees a live network change), then makes the
    /// step the source of later dump answers.
    mutating func change(to step: RecordedStep) -> [Action] {
        answers = step
        return step.notificationDatagrams.flatMap { handle(.received($0)) }
    }

    /// Starts the machine on the initial recording and answers classification (veth1 and veth0
    /// are Ethernet); returns every action.
    mutating func startAndClassify() -> [Action] {
        var actions = handle(.started)
        for case .classify(let index, let name) in actions {
            actions += handle(.interfaceClassified(index: index, name: name, kind: .ethernet))
        }
        return actions
    }

    static func kind(of request: [UInt8]) -> NetlinkDumpKind {
        switch request[4] {
        case 18: .links
        case 22: .addresses
        default: .routes
        }
    }

    static func sequence(of request: [UInt8]) -> UInt32 {
        UInt32(request[8]) | UInt32(request[9]) << 8 | UInt32(request[10]) << 16 | UInt32(request[11]) << 24
    }

    /// The dump requests the machine would send, for expected action lists.
    static func send(_ kind: NetlinkDumpKind, _ sequence: UInt32) -> Action {
        .send(NetlinkDumpRequest.encode(kind, sequence: sequence))
    }

    static let settle = Action.armSettleTimer(milliseconds: 100)
}
