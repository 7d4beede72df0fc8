import Testing
@testable import UVNetworking

/// The rtnetlink decoder on datagrams recorded from the kernel (scripts/record-netlink-fixtures.py).
@Suite(.tags(.unit)) struct NetlinkDecoderTests {
    private let initial = RecordedNetlink.initial

    private func messages(_ datagrams: [[UInt8]]) -> [NetlinkMessage] {
        datagrams.flatMap { datagram -> [NetlinkMessage] in
            let decoded = NetlinkDecoder.decode(datagram)
            #expect(decoded.framingError == nil)
            return decoded.messages
        }
    }

    @Test func linkDumpGivesEveryLinkThenDone() {
        let decoded = messages(initial.dump(.links))
        let links = decoded.compactMap { if case .newLink(let link) = $0.body { link } else { nil } }
        #expect(links.map(\.name) == ["lo", "veth1", "veth0"])
        #expect(links.map(\.index) == [1, 2, 3])
        #expect(links[0].isLoopback && links[0].isUp && links[0].hasCarrier)
        #expect(links[0].type == 772)  // ARPHRD_LOOPBACK
        #expect(links[2].type == 1)  // ARPHRD_ETHER
        #expect(links[2].flags == 0x11043)  // UP | BROADCAST | RUNNING | MULTICAST | LOWER_UP
        #expect(!links[2].isLoopback)
        #expect(decoded.allSatisfy { $0.isDumpPart && $0.sequence == 1 && !$0.isDumpInterrupted })
        #expect(decoded.last?.body == .done)
    }

    @Test func addressDumpPrefersLocalAndReadsTheLongFlags() {
        let addresses = messages(initial.dump(.addresses)).compactMap { if case .newAddress(let a) = $0.body { a } else { nil } }
        let v4 = addresses.filter { $0.family == Netlink.Family.inet }
        #expect(v4.map(\.address) == [[127, 0, 0, 1], [192, 0, 2, 1]])
        #expect(v4.map(\.prefixLength) == [8, 24])
        #expect(v4.map(\.index) == [1, 3])
        let v6 = addresses.filter { $0.family == Netlink.Family.inet6 }
        #expect(v6.count == 4)
        let documentation = v6.first { $0.address.starts(with: [0x20, 0x01, 0x0d, 0xb8]) }
        #expect(documentation?.prefixLength == 64)
        #expect(documentation?.isUsable == true)
        // The link-local addresses were still in duplicate address detection when dumped.
        let tentative = v6.filter { $0.address.starts(with: [0xfe, 0x80]) }
        #expect(tentative.count == 2)
        #expect(tentative.allSatisfy { !$0.isUsable && $0.flags & Netlink.AddressFlag.tentative != 0 })
    }

    @Test func routeDumpReadsTablesTypesNexthopsAndMetrics() {
        let routes = messages(initial.dump(.routes)).compactMap { if case .newRoute(let r) = $0.body { r } else { nil } }
        let v4Defaults = routes.filter { $0.family == Netlink.Family.inet && $0.destinationLength == 0 }
        // RTA_TABLE overrides rtm_table, which says 252 (RT_TABLE_COMPAT) for table 1000.
        #expect(Set(v4Defaults.map(\.table)) == [1000, Netlink.Table.main])
        let main = v4Defaults.first { $0.table == Netlink.Table.main }
        #expect(main?.nexthops == [NetlinkNexthop(interfaceIndex: 3, gateway: [192, 0, 2, 254], flags: 0)])
        #expect(main?.destination == [])
        let blackhole = routes.first { $0.destination == [198, 51, 100, 0] }
        #expect(blackhole?.type == Netlink.RouteType.blackhole)
        #expect(blackhole?.destinationLength == 24)
        let multipath = routes.first { $0.destination == [198, 51, 100, 128] }
        #expect(multipath?.nexthops == [NetlinkNexthop(interfaceIndex: 3, gateway: [192, 0, 2, 253], flags: 0),
                                        NetlinkNexthop(interfaceIndex: 3, gateway: [192, 0, 2, 252], flags: 0)])
        let local = routes.filter { $0.table == Netlink.Table.local && $0.type == Netlink.RouteType.local }
        #expect(local.contains { $0.destination == [127, 0, 0, 1] && $0.nexthops.first?.interfaceIndex == 1 })
        let v6Default = routes.first { $0.family == Netlink.Family.inet6 && $0.destinationLength == 0 }
        #expect(v6Default?.priority == 1024)
        #expect(v6Default?.nexthops.first?.gateway == [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [0xfe])
    }

    @Test func carrierLossMarksRoutesLinkDown() {
        let routes = messages(RecordedNetlink.carrierLost.dump(.routes)).compactMap { if case .newRoute(let r) = $0.body { r } else { nil } }
        let main = routes.first { $0.family == Netlink.Family.inet && $0.destinationLength == 0 && $0.table == Netlink.Table.main }
        #expect(main?.nexthops.first?.flags == Netlink.NexthopFlag.linkDown)
        #expect(main?.nexthops.first?.isAlive == false)
    }

    @Test func notificationsAreNotDumpParts() {
        let decoded = messages(RecordedNetlink.linkDown.notificationDatagrams)
        #expect(decoded.allSatisfy { !$0.isDumpPart })
        #expect(decoded.first?.body == .newLink(NetlinkLink(index: 3, type: 1, flags: 0x1002, name: "veth0")))
        #expect(decoded.contains { if case .delAddress = $0.body { true } else { false } })
        // The kernel announces IPv6 route removals; IPv4's flushed routes go unannounced.
        let removed = decoded.compactMap { if case .delRoute(let r) = $0.body { r } else { nil } }
        #expect(!removed.isEmpty && removed.allSatisfy { $0.family == Netlink.Family.inet6 })
    }

    @Test func errorCarriesTheNegativeErrnoAndTheSequence() {
        let datagram = NetlinkBytes.message(type: Netlink.MessageType.error, sequence: 7,
                                            payload: NetlinkBytes.int32(-Netlink.ebusy) + [UInt8](repeating: 0, count: 16))
        let decoded = NetlinkDecoder.decode(datagram)
        #expect(decoded.messages == [NetlinkMessage(type: 2, flags: 0, sequence: 7, body: .error(code: -16))])
    }

    /// A dump the kernel could not finish ends with NLMSG_DONE carrying a negative errno: that is
    /// a refusal, not a complete answer. A plain NLMSG_DONE (0 or no payload) is the end.
    @Test func doneWithAnErrnoIsAnError() {
        let failed = NetlinkBytes.message(type: Netlink.MessageType.done, flags: Netlink.Flag.multi, sequence: 3,
                                          payload: NetlinkBytes.int32(-90))
        let clean = NetlinkBytes.message(type: Netlink.MessageType.done, flags: Netlink.Flag.multi, sequence: 3, payload: NetlinkBytes.int32(0))
        let bare = NetlinkBytes.message(type: Netlink.MessageType.done, flags: Netlink.Flag.multi, sequence: 3, payload: [])
        #expect(NetlinkDecoder.decode(failed + clean + bare).messages.map(\.body) == [.error(code: -90), .done, .done])
    }

    @Test func dumpInterruptedFlagIsRead() {
        var datagram = initial.dump(.links)[0]
        datagram[6] |= UInt8(Netlink.Flag.dumpInterrupted)
        #expect(NetlinkDecoder.decode(datagram).messages.first?.isDumpInterrupted == true)
    }

    @Test func unknownTypesAndFamiliesAreOther() {
        let noop = NetlinkBytes.message(type: Netlink.MessageType.noop, sequence: 0, payload: [])
        // A bridge-port link message (AF_BRIDGE): its RTM_DELLINK does not mean the link is gone.
        let bridge = NetlinkBytes.message(type: Netlink.MessageType.delLink, sequence: 0, payload: [7] + [UInt8](repeating: 0, count: 15))
        let decoded = NetlinkDecoder.decode(noop + bridge)
        #expect(decoded.messages.map(\.body) == [.other(type: 1), .other(type: 17)])
    }

    @Test func dumpRequestsAskForEveryFamily() {
        let links = NetlinkDumpRequest.encode(.links, sequence: 1)
        #expect(links == [32, 0, 0, 0, 18, 0, 0x01, 0x03, 1, 0, 0, 0, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 16))
        let addresses = NetlinkDumpRequest.encode(.addresses, sequence: 0x0102_0304)
        #expect(addresses == [24, 0, 0, 0, 22, 0, 0x01, 0x03, 4, 3, 2, 1, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 8))
        let routes = NetlinkDumpRequest.encode(.routes, sequence: 2)
        #expect(routes == [28, 0, 0, 0, 26, 0, 0x01, 0x03, 2, 0, 0, 0, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 12))
    }
}

/// Hand-made netlink messages, for what the kernel cannot be made to send.
enum NetlinkBytes {
    static func int32(_ value: Int32) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
    static func uint16(_ value: UInt16) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
    static func uint32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }

    /// A message with a correct length, padded to alignment.
    static func message(type: UInt16, flags: UInt16 = 0, sequence: UInt32, payload: [UInt8]) -> [UInt8] {
        let length = 16 + payload.count
        var bytes = uint32(UInt32(length)) + uint16(type) + uint16(flags) + uint32(sequence) + uint32(0) + payload
        bytes += [UInt8](repeating: 0, count: (4 - length % 4) % 4)
        return bytes
    }

    /// An attribute with a correct length, padded to alignment.
    static func attribute(type: UInt16, value: [UInt8]) -> [UInt8] {
        let length = 4 + value.count
        return uint16(UInt16(length)) + uint16(type) + value + [UInt8](repeating: 0, count: (4 - length % 4) % 4)
    }
}
