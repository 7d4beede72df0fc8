/// The rtnetlink numbers the reachability machine reads and writes, as the kernel's uapi headers
/// define them (linux/netlink.h, linux/rtnetlink.h, linux/if_link.h, linux/if_addr.h, linux/if.h).
/// Spelled out here rather than imported so the decoder builds and tests the same everywhere.
enum Netlink {
    /// Every message and attribute starts on a 4-byte boundary (NLMSG_ALIGNTO, RTA_ALIGNTO).
    static let alignment = 4
    /// sizeof(struct nlmsghdr): len u32, type u16, flags u16, seq u32, pid u32.
    static let headerSize = 16
    /// sizeof(struct rtattr): len u16, type u16.
    static let attributeHeaderSize = 4

    /// Rounds a length up to the next message/attribute boundary.
    static func aligned(_ length: Int) -> Int { (length + alignment - 1) & ~(alignment - 1) }

    /// nlmsghdr.nlmsg_type values of the netlink core and of rtnetlink.
    enum MessageType {
        static let noop: UInt16 = 1
        static let error: UInt16 = 2
        static let done: UInt16 = 3
        static let overrun: UInt16 = 4
        static let newLink: UInt16 = 16
        static let delLink: UInt16 = 17
        static let getLink: UInt16 = 18
        static let newAddress: UInt16 = 20
        static let delAddress: UInt16 = 21
        static let getAddress: UInt16 = 22
        static let newRoute: UInt16 = 24
        static let delRoute: UInt16 = 25
        static let getRoute: UInt16 = 26
    }

    /// nlmsghdr.nlmsg_flags bits.
    enum Flag {
        static let request: UInt16 = 0x01
        static let multi: UInt16 = 0x02
        static let dumpInterrupted: UInt16 = 0x10
        /// NLM_F_REPLACE: on RTM_NEWROUTE, the route replaced one of the same identity.
        static let replace: UInt16 = 0x100
        /// NLM_F_ROOT | NLM_F_MATCH.
        static let dump: UInt16 = 0x300
    }

    /// Address families (sys/socket.h), as rtnetlink carries them in one byte.
    enum Family {
        static let unspecified: UInt8 = 0
        static let inet: UInt8 = 2
        static let inet6: UInt8 = 10
    }

    /// ifinfomsg.ifi_flags bits (linux/if.h).
    enum InterfaceFlag {
        static let up: UInt32 = 1 << 0
        static let loopback: UInt32 = 1 << 3
        static let running: UInt32 = 1 << 6
        static let lowerUp: UInt32 = 1 << 16
    }

    /// Link attributes (IFLA_*).
    enum LinkAttribute {
        static let name: UInt16 = 3
    }

    /// Address attributes (IFA_*) and flags (IFA_F_*).
    enum AddressAttribute {
        static let address: UInt16 = 1
        static let local: UInt16 = 2
        /// u32 extending ifa_flags; when present the header's byte is to be ignored.
        static let flags: UInt16 = 8
    }

    enum AddressFlag {
        /// Optimistic DAD (RFC 4429): usable as a source while still tentative.
        static let optimistic: UInt32 = 0x04
        static let dadFailed: UInt32 = 0x08
        static let tentative: UInt32 = 0x40
    }

    /// Route attributes (RTA_*).
    enum RouteAttribute {
        static let destination: UInt16 = 1
        static let outputInterface: UInt16 = 4
        static let gateway: UInt16 = 5
        static let priority: UInt16 = 6
        static let multipath: UInt16 = 9
        /// u32 table id: overrides rtm_table, which holds only 8 bits.
        static let table: UInt16 = 15
    }

    /// rtmsg.rtm_type values (RTN_*).
    enum RouteType {
        static let unicast: UInt8 = 1
        static let local: UInt8 = 2
        static let broadcast: UInt8 = 3
        static let anycast: UInt8 = 4
        static let multicast: UInt8 = 5
        static let blackhole: UInt8 = 6
        static let unreachable: UInt8 = 7
        static let prohibit: UInt8 = 8
        static let `throw`: UInt8 = 9
    }

    /// rtm_flags / rtnh_flags bits (RTNH_F_*).
    enum NexthopFlag {
        static let dead: UInt32 = 1
        static let linkDown: UInt32 = 16
    }

    /// The tables the kernel's default policy rules consult, in their order.
    enum Table {
        static let local: UInt32 = 255
        static let main: UInt32 = 254
        static let `default`: UInt32 = 253
    }

    /// errno values the machine reacts to (asm-generic/errno-base.h).
    static let ebusy: Int32 = 16
}
