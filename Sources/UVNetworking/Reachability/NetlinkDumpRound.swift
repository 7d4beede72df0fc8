/// The dumps the machine runs one after another on one socket (the kernel answers a second dump
/// on a socket still dumping with EBUSY), and the answer of the one in flight.
struct NetlinkDumpRound {
    /// The dump in flight: its kind and sequence number.
    private(set) var kind: NetlinkDumpKind
    private(set) var sequence: UInt32
    /// The kinds still to dump after this one, in order.
    private var queue: [NetlinkDumpKind]
    /// What the dump in flight has answered so far; it replaces the table's part at NLMSG_DONE.
    var links: [NetlinkLink] = []
    var addresses: [NetlinkAddress] = []
    var routes: [NetlinkRoute] = []
    /// Some part carried NLM_F_DUMP_INTR: the kernel's tables changed while it dumped them.
    var interrupted = false

    /// Starts with the first of `kinds` (which must not be empty), numbered `sequence`.
    init(kinds: [NetlinkDumpKind], sequence: UInt32) {
        kind = kinds[0]
        queue = Array(kinds.dropFirst())
        self.sequence = sequence
    }

    /// The request for the dump in flight.
    var request: [UInt8] { NetlinkDumpRequest.encode(kind, sequence: sequence) }

    /// Whether a kind is left to dump after the one in flight.
    var hasNext: Bool { !queue.isEmpty }

    /// Moves on to the next kind (there must be one), numbered `sequence`.
    mutating func advance(sequence: UInt32) {
        kind = queue.removeFirst()
        self.sequence = sequence
        links = []
        addresses = []
        routes = []
        interrupted = false
    }
}

extension NetlinkDumpKind {
    /// Dumps in dependency order: links before the addresses on them, addresses before routes.
    static func ordered(_ kinds: Set<NetlinkDumpKind>) -> [NetlinkDumpKind] {
        allCases.filter(kinds.contains)
    }
}
