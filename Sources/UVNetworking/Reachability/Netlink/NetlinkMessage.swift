/// A network interface as RTM_NEWLINK/RTM_DELLINK describe it (ifinfomsg + IFLA_IFNAME).
struct NetlinkLink: Equatable {
    /// ifi_index: the kernel's interface index.
    var index: Int32
    /// ifi_type: ARPHRD_* (1 Ethernet, 772 loopback).
    var type: UInt16
    /// ifi_flags: IFF_* bits.
    var flags: UInt32
    /// IFLA_IFNAME, "" when absent.
    var name: String

    var isUp: Bool { flags & Netlink.InterfaceFlag.up != 0 }
    /// The driver reports carrier (IFF_LOWER_UP).
    var hasCarrier: Bool { flags & Netlink.InterfaceFlag.lowerUp != 0 }
    var isLoopback: Bool { flags & Netlink.InterfaceFlag.loopback != 0 }
}

/// An interface address as RTM_NEWADDR/RTM_DELADDR describe it (ifaddrmsg + IFA_*).
struct NetlinkAddress: Equatable, Hashable {
    var family: UInt8
    var prefixLength: UInt8
    /// IFA_FLAGS when present (it supersedes the header's 8 bits), else ifa_flags.
    var flags: UInt32
    var index: Int32
    /// IFA_LOCAL when present (on point-to-point links IFA_ADDRESS is the peer), else IFA_ADDRESS.
    var address: [UInt8]

    /// Tentative (duplicate address detection still running) and DAD-failed addresses cannot
    /// be used as a source, so they do not make an interface usable; an optimistic one (RFC
    /// 4429) can while tentative, as the kernel's source selection allows.
    var isUsable: Bool {
        guard flags & Netlink.AddressFlag.dadFailed == 0 else { return false }
        return flags & Netlink.AddressFlag.tentative == 0 || flags & Netlink.AddressFlag.optimistic != 0
    }
}

/// One way out of a route: an interface, a gateway, and the RTNH_F_* flags that say it is dead.
struct NetlinkNexthop: Equatable, Hashable {
    var interfaceIndex: Int32
    var gateway: [UInt8]?
    var flags: UInt32

    /// RTNH_F_DEAD (its interface went down) or RTNH_F_LINKDOWN (no carrier) make it unusable.
    var isAlive: Bool { flags & (Netlink.NexthopFlag.dead | Netlink.NexthopFlag.linkDown) == 0 }
}

/// A route as RTM_NEWROUTE/RTM_DELROUTE describe it (rtmsg + RTA_*).
struct NetlinkRoute: Equatable, Hashable {
    var family: UInt8
    var destinationLength: UInt8
    /// RTA_DST; empty for a default route (dst_len 0).
    var destination: [UInt8]
    /// RTA_TABLE when present (it holds ids above 255), else rtm_table.
    var table: UInt32
    /// rtm_type: RTN_*.
    var type: UInt8
    /// RTA_PRIORITY (the metric), 0 when absent.
    var priority: UInt32
    /// RTA_OIF/RTA_GATEWAY with rtm_flags as one nexthop, or RTA_MULTIPATH's nexthops.
    var nexthops: [NetlinkNexthop]
    /// rtm_tos: part of an IPv4 route's identity (0 for IPv6).
    var tos: UInt8 = 0
}

/// One decoded netlink message, with the header fields the machine needs.
struct NetlinkMessage: Equatable {
    enum Body: Equatable {
        case newLink(NetlinkLink)
        case delLink(NetlinkLink)
        case newAddress(NetlinkAddress)
        case delAddress(NetlinkAddress)
        case newRoute(NetlinkRoute)
        case delRoute(NetlinkRoute)
        /// NLMSG_DONE: the end of a dump.
        case done
        /// NLMSG_ERROR: a negative errno, or 0 for an acknowledgement; also an NLMSG_DONE that
        /// ended a dump with a negative errno.
        case error(code: Int32)
        /// A message the machine ignores (NLMSG_NOOP, other rtnetlink families), kept by type.
        case other(type: UInt16)
        /// A message whose header was sound but whose body was not: skipped, the error says why.
        case malformed(NetlinkDecodingError)
    }

    var type: UInt16
    var flags: UInt16
    var sequence: UInt32
    var body: Body

    /// Part of a dump's answer (NLM_F_MULTI), not a notification.
    var isDumpPart: Bool { flags & Netlink.Flag.multi != 0 }
    /// The kernel's tables changed while it dumped them (NLM_F_DUMP_INTR): the dump is unreliable.
    var isDumpInterrupted: Bool { flags & Netlink.Flag.dumpInterrupted != 0 }
}
