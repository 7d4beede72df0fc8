import Testing
@testable import UVNetworking

/// When the machine dumps again: lost notifications, interrupted dumps, a refused dump, and
/// the classification of new and renamed links.
@Suite(.tags(.unit)) struct ReachabilityMonitorDumpTests {
    typealias R = MonitorReplay
    private let initial = RecordedNetlink.initial

    @Test func anOverrunDumpsEverythingAgain() {
        var replay = R(.general)
        _ = replay.startAndClassify()
        #expect(replay.handle(.receiveOverrun) == [R.send(.links, 4), R.send(.addresses, 5), R.send(.routes, 6)])
    }

    @Test func anOverrunDuringADumpDumpsEverythingAgainAfterIt() {
        var replay = R(.general)
        #expect(replay.machine.handle(.started) == [R.send(.links, 1)])
        #expect(replay.machine.handle(.receiveOverrun) == [])  // one dump at a time per socket
        #expect(replay.handle(.received(renumbered(initial.links[0].hexBytes, sequence: 1))) == [])
        #expect(replay.handle(.received(renumbered(initial.links[1].hexBytes, sequence: 1))) ==
            [.classify(index: 2, name: "veth1"), .classify(index: 3, name: "veth0"), R.send(.addresses, 2), R.send(.routes, 3),
             R.send(.links, 4), R.send(.addresses, 5), R.send(.routes, 6)])
    }

    @Test func anInterruptedDumpIsDoneAgain() {
        var replay = R(.general)
        _ = replay.machine.handle(.started)
        var interrupted = renumbered(initial.links[0].hexBytes, sequence: 1)
        interrupted[6] |= UInt8(Netlink.Flag.dumpInterrupted)
        _ = replay.handle(.received(interrupted))
        let actions = replay.handle(.received(renumbered(initial.links[1].hexBytes, sequence: 1)))
        #expect(actions == [.classify(index: 2, name: "veth1"), .classify(index: 3, name: "veth0"), R.send(.addresses, 2),
                            R.send(.routes, 3), R.send(.links, 4), R.send(.addresses, 5), R.send(.routes, 6)])
        #expect(replay.handle(.interfaceClassified(index: 3, name: "veth0", kind: .ethernet)) == [.report(.reachable(.ethernet))])
    }

    @Test func aRefusedDumpIsRetriedAfterTheSettleTime() {
        var replay = R(.general)
        _ = replay.machine.handle(.started)
        let busy = NetlinkBytes.message(type: Netlink.MessageType.error, sequence: 1,
                                        payload: NetlinkBytes.int32(-Netlink.ebusy) + R.send(.links, 1).request[0..<16])
        #expect(replay.handle(.received(busy)) == [R.settle])
        // The old dump's tail, should it come, is ignored.
        #expect(replay.handle(.received(renumbered(initial.links[1].hexBytes, sequence: 1))) == [])
        #expect(replay.handle(.settleTimerFired) == [R.send(.links, 2), .classify(index: 2, name: "veth1"), .classify(index: 3, name: "veth0"),
                                                     R.send(.addresses, 3), R.send(.routes, 4)])
    }

    /// NLMSG_DONE with a negative errno: the dump stopped short; its answer must not replace the
    /// table, and it is retried like a refused dump.
    @Test func aDumpEndingInAnErrorIsRetried() {
        var replay = R(.general)
        _ = replay.machine.handle(.started)
        _ = replay.machine.handle(.received(renumbered(initial.links[0].hexBytes, sequence: 1)))
        let failed = NetlinkBytes.message(type: Netlink.MessageType.done, flags: Netlink.Flag.multi, sequence: 1,
                                          payload: NetlinkBytes.int32(-90))
        #expect(replay.machine.handle(.received(failed)) == [R.settle])
        #expect(replay.machine.table.links.isEmpty)
        #expect(replay.handle(.settleTimerFired).first == R.send(.links, 2))
    }

    @Test func aNotificationDuringADumpDumpsThatKindAgain() {
        var replay = R(.general)
        _ = replay.machine.handle(.started)
        // veth0 goes down while its up state is being dumped: the dump must not have the last word.
        #expect(replay.handle(.received(RecordedNetlink.linkDown.notifications[0].hexBytes)) == [.classify(index: 3, name: "veth0"), R.settle])
        _ = replay.handle(.received(renumbered(initial.links[0].hexBytes, sequence: 1)))
        #expect(replay.handle(.received(renumbered(initial.links[1].hexBytes, sequence: 1))) ==
            [.classify(index: 2, name: "veth1"), R.send(.addresses, 2), R.send(.routes, 3)])
        replay.answers = RecordedNetlink.linkDown
        #expect(replay.handle(.settleTimerFired) == [R.send(.links, 4), R.send(.addresses, 5), R.send(.routes, 6), .report(.notReachable)])
        #expect(replay.machine.table.links[3]?.isUp == false)
    }

    @Test func newAndRenamedLinksAreClassifiedAndGoneLinksForgotten() {
        var replay = R(.general)
        _ = replay.startAndClassify()
        let renamed = Self.newLink(index: 3, name: "wan0", flags: 0x11043)
        #expect(replay.handle(.received(renamed)) == [.classify(index: 3, name: "wan0"), R.settle])
        #expect(replay.handle(.received(renamed)) == [])  // nothing new: nothing to ask, nothing to settle
        #expect(replay.handle(.received(Self.newLink(index: 9, name: "wlan0", flags: 0x1003))) == [.classify(index: 9, name: "wlan0"), R.settle])
        var gone = Self.newLink(index: 9, name: "wlan0", flags: 0)
        gone[4] = UInt8(Netlink.MessageType.delLink)
        _ = replay.handle(.received(gone))
        #expect(replay.machine.table.links[9] == nil)
        // A late answer for a link gone since is dropped.
        #expect(replay.handle(.interfaceClassified(index: 9, name: "wlan0", kind: .wifi)) == [])
        #expect(replay.machine.kinds[9] == nil)
    }

    /// A link renamed while sysfs was read for its old name: the workers may answer the new
    /// name first, and the old name's late answer must not overwrite it.
    @Test func aClassificationForANameTheLinkNoLongerHasIsDropped() {
        var replay = R(.general)
        _ = replay.handle(.started)  // asks for veth1 and veth0, answered below out of order
        _ = replay.handle(.received(Self.newLink(index: 3, name: "wlan1", flags: 0x11043)))
        _ = replay.handle(.interfaceClassified(index: 3, name: "wlan1", kind: .wifi))
        _ = replay.handle(.interfaceClassified(index: 3, name: "veth0", kind: .ethernet))
        #expect(replay.machine.kinds[3] == .wifi)
    }

    /// An RTM_NEWLINK notification for `index`.
    /// Router advertisements refresh addresses and routes, wireless events repeat links: a
    /// notification that says what the table already holds changes nothing, so it neither
    /// arms the timer nor asks for dumps.
    @Test func notificationsRepeatingTheTableChangeNothing() {
        var replay = R(.general)
        _ = replay.startAndClassify()
        for datagram in RecordedNetlink.initial.links + RecordedNetlink.initial.addresses + RecordedNetlink.initial.routes {
            #expect(replay.handle(.received(Self.asNotifications(datagram.hexBytes))) == [])
        }
        #expect(replay.machine.pendingDumps.isEmpty)
    }

    /// A recorded dump answer as the kernel would multicast it: NLM_F_MULTI cleared, sequence 0.
    static func asNotifications(_ datagram: [UInt8]) -> [UInt8] {
        var bytes = renumbered(datagram, sequence: 0)
        var offset = 0
        while offset + 16 <= bytes.count {
            let length = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
            bytes[offset + 6] &= ~UInt8(Netlink.Flag.multi)
            offset += (length + 3) & ~3
        }
        return bytes
    }

    static func newLink(index: Int32, name: String, flags: UInt32) -> [UInt8] {
        let header = [0, 0] + NetlinkBytes.uint16(1) + NetlinkBytes.int32(index) + NetlinkBytes.uint32(flags) + NetlinkBytes.uint32(0)
        return NetlinkBytes.message(type: Netlink.MessageType.newLink, sequence: 0,
                                    payload: header + NetlinkBytes.attribute(type: Netlink.LinkAttribute.name, value: Array(name.utf8) + [0]))
    }
}

extension String {
    /// The hex fixture as bytes.
    var hexBytes: [UInt8] { UVNetworkingTests.bytes(hex: self) }
}

extension ReachabilityMonitor.Action {
    /// The datagram of a `.send`.
    var request: [UInt8] {
        if case .send(let bytes) = self { bytes } else { [] }
    }
}
