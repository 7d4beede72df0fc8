@testable import UVNetworking

/// One recorded step of scripts/record-netlink-fixtures.py: the notifications the kernel sent
/// after the step's commands, and the dumps taken after them, each a list of datagrams (hex).
struct RecordedStep {
    let notifications: [String]
    let links: [String]
    let addresses: [String]
    let routes: [String]

    /// The recorded answer to a dump of `kind`.
    func dump(_ kind: NetlinkDumpKind) -> [[UInt8]] {
        switch kind {
        case .links: links.map(bytes(hex:))
        case .addresses: addresses.map(bytes(hex:))
        case .routes: routes.map(bytes(hex:))
        }
    }

    /// The notification datagrams as bytes.
    var notificationDatagrams: [[UInt8]] { notifications.map(bytes(hex:)) }

    /// Every datagram of the step: notifications, then the three dumps.
    var allDatagrams: [[UInt8]] {
        notificationDatagrams + NetlinkDumpKind.allCases.flatMap(dump)
    }
}

/// "0a1b" → [0x0a, 0x1b].
func bytes(hex: String) -> [UInt8] {
    let digits = Array(hex.utf8)
    return stride(from: 0, to: digits.count - 1, by: 2).map { UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)! }
}

/// The datagram with every message's sequence number set to `sequence`: recorded dump answers
/// replayed to a machine that numbered its request differently.
func renumbered(_ datagram: [UInt8], sequence: UInt32) -> [UInt8] {
    var bytes = datagram
    var offset = 0
    while offset + 16 <= bytes.count {
        let length = Int(UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24)
        withUnsafeBytes(of: sequence.littleEndian) { for (i, byte) in $0.enumerated() { bytes[offset + 8 + i] = byte } }
        guard length >= 16 else { break }
        offset += (length + 3) & ~3
    }
    return bytes
}
