/// What a dump asks the kernel for.
enum NetlinkDumpKind: Equatable, CaseIterable {
    case links
    case addresses
    case routes

    /// RTM_GET* for this kind, and the size of the family header the request carries: the full
    /// ifinfomsg/ifaddrmsg/rtmsg, zeroed, since strict-checking sockets reject a short one.
    fileprivate var request: (type: UInt16, headerSize: Int) {
        switch self {
        case .links: (Netlink.MessageType.getLink, 16)
        case .addresses: (Netlink.MessageType.getAddress, 8)
        case .routes: (Netlink.MessageType.getRoute, 12)
        }
    }
}

enum NetlinkDumpRequest {
    /// A dump request (NLM_F_REQUEST | NLM_F_DUMP) for every family (AF_UNSPEC, the zeroed first
    /// byte), with `sequence` so the answer can be told from notifications and from older dumps.
    static func encode(_ kind: NetlinkDumpKind, sequence: UInt32) -> [UInt8] {
        let (type, headerSize) = kind.request
        let length = Netlink.headerSize + headerSize
        var bytes: [UInt8] = []
        bytes.reserveCapacity(length)
        append(UInt32(length), to: &bytes)
        append(type, to: &bytes)
        append(Netlink.Flag.request | Netlink.Flag.dump, to: &bytes)
        append(sequence, to: &bytes)
        append(UInt32(0), to: &bytes)  // nlmsg_pid 0: the kernel fills in our port.
        bytes.append(contentsOf: repeatElement(0, count: headerSize))
        return bytes
    }

    /// Appends in host order, which is netlink's.
    private static func append<I: FixedWidthInteger>(_ value: I, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) }
    }
}
