import Testing
@testable import UVNetworking

/// Truncated and lying datagrams: the decoder reports or skips, never crashes or reads past
/// the bytes; the machine dumps again instead of trusting what it missed.
@Suite(.tags(.loopback)) struct NetlinkHostileInputTests {
    /// Every datagram recorded, notifications and dumps of every step.
    private let recorded: [[UInt8]] = RecordedNetlink.all.flatMap(\.allDatagrams)

    @Test func everyTruncationOfEveryRecordedDatagramIsReportedOrAligned() {
        for datagram in recorded {
            let whole = NetlinkDecoder.decode(datagram)
            #expect(whole.framingError == nil)
            // Cuts that end a message: anywhere from its last byte through its padding.
            var boundaries: Set<Int> = [0]
            var offset = 0
            for _ in whole.messages {
                let end = offset + Int(NetlinkReader(datagram[offset...]).uint32(at: 0)!)
                let padded = min((end + 3) & ~3, datagram.count)
                boundaries.formUnion(end...padded)
                offset = padded
            }
            for cut in 0..<datagram.count {
                let decoded = NetlinkDecoder.decode(Array(datagram[..<cut]))
                // A cut inside a message drops it with a framing error; the messages before it survive intact.
                #expect(decoded.messages == Array(whole.messages.prefix(decoded.messages.count)))
                #expect((decoded.framingError == nil) == boundaries.contains(cut))
            }
        }
    }

    @Test func lyingMessageLengthsNeverCrash() {
        var generator = SplitMix64(seed: 17)
        for _ in 0..<2_000 {
            var datagram = recorded[Int(generator.next() % UInt64(recorded.count))]
            // Overwrite one message-length or attribute-length sized field anywhere with a random value.
            let at = Int(generator.next() % UInt64(datagram.count - 3))
            let width = generator.next() % 2 == 0 ? 2 : 4
            for i in 0..<width { datagram[at + i] = UInt8(truncatingIfNeeded: generator.next()) }
            _ = NetlinkDecoder.decode(datagram)
            var machine = ReachabilityMonitor(target: .general)
            _ = machine.handle(.started)
            _ = machine.handle(.received(datagram))
        }
    }

    @Test func aLyingHeaderEndsTheWalkButKeepsWhatCameBefore() {
        let good = NetlinkBytes.message(type: Netlink.MessageType.done, flags: Netlink.Flag.multi, sequence: 1, payload: [0, 0, 0, 0])
        var lying = NetlinkBytes.message(type: Netlink.MessageType.newLink, sequence: 0, payload: [UInt8](repeating: 0, count: 16))
        lying[0] = 200  // claims 200 bytes, 32 are there
        let decoded = NetlinkDecoder.decode(good + lying)
        #expect(decoded.messages.map(\.body) == [.done])
        #expect(decoded.framingError == .badMessageLength(offset: 20, length: 200, remaining: 32))
        #expect(NetlinkDecoder.decode(good + [1, 2, 3]).framingError == .truncatedHeader(offset: 20))
        var tooShort = lying
        tooShort[0] = 8  // below a header's size: would loop forever if trusted
        #expect(NetlinkDecoder.decode(tooShort).framingError == .badMessageLength(offset: 0, length: 8, remaining: 32))
    }

    @Test func aLyingAttributeSkipsOnlyItsMessage() {
        let name = NetlinkBytes.attribute(type: Netlink.LinkAttribute.name, value: Array("eth0".utf8) + [0])
        var lyingName = name
        lyingName[0] = 64  // beyond the message
        let header = [UInt8](repeating: 0, count: 4) + NetlinkBytes.int32(5) + NetlinkBytes.uint32(1) + NetlinkBytes.uint32(0)
        let bad = NetlinkBytes.message(type: Netlink.MessageType.newLink, sequence: 0, payload: header + lyingName)
        let good = NetlinkBytes.message(type: Netlink.MessageType.newLink, sequence: 0, payload: header + name)
        let decoded = NetlinkDecoder.decode(bad + good)
        #expect(decoded.framingError == nil)
        #expect(decoded.messages.map(\.body) == [.malformed(.badAttributeLength(type: 3)),
                                                 .newLink(NetlinkLink(index: 5, type: 0, flags: 1, name: "eth0"))])
        let short = NetlinkBytes.message(type: Netlink.MessageType.newRoute, sequence: 0, payload: [2, 0, 0])
        #expect(NetlinkDecoder.decode(short).messages.map(\.body) == [.malformed(.truncatedPayload(type: 24))])
        let badAddress = NetlinkBytes.message(type: Netlink.MessageType.newAddress, sequence: 0,
                                              payload: [2, 24, 0, 0] + NetlinkBytes.uint32(3) + NetlinkBytes.attribute(type: 2, value: [1, 2, 3]))
        #expect(NetlinkDecoder.decode(badAddress).messages.map(\.body) == [.malformed(.badAttributeValue(type: 2))])
    }

    @Test func aMalformedNotificationMakesTheMachineDumpEverythingAgain() {
        var replay = MonitorReplay(.general)
        _ = replay.startAndClassify()
        let short = NetlinkBytes.message(type: Netlink.MessageType.newRoute, sequence: 0, payload: [2, 0, 0])
        #expect(replay.handle(.received(short)) == [MonitorReplay.settle])
        #expect(replay.handle(.settleTimerFired) == [MonitorReplay.send(.links, 4), MonitorReplay.send(.addresses, 5), MonitorReplay.send(.routes, 6)])
    }
}
