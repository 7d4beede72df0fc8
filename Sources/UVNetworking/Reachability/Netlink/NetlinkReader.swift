/// Bounds-checked reads of a netlink byte buffer in the host's byte order (netlink's own).
///
/// Every read says where it reads and returns nil when the bytes are not there, so a lying
/// length can only produce a decoding error, never a read outside the buffer.
struct NetlinkReader {
    let bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    /// Number of bytes readable.
    var count: Int { bytes.count }

    func uint8(at offset: Int) -> UInt8? {
        guard offset >= 0, offset < bytes.count else { return nil }
        return bytes[bytes.startIndex + offset]
    }

    func uint16(at offset: Int) -> UInt16? {
        guard let raw = slice(at: offset, count: 2) else { return nil }
        return UInt16(littleEndianOrHost: raw)
    }

    func uint32(at offset: Int) -> UInt32? {
        guard let raw = slice(at: offset, count: 4) else { return nil }
        return UInt32(littleEndianOrHost: raw)
    }

    func int32(at offset: Int) -> Int32? {
        uint32(at: offset).map { Int32(bitPattern: $0) }
    }

    /// The `count` bytes at `offset`, or nil when any of them is missing.
    func slice(at offset: Int, count: Int) -> ArraySlice<UInt8>? {
        guard offset >= 0, count >= 0, offset <= bytes.count, count <= bytes.count - offset else { return nil }
        let start = bytes.startIndex + offset
        return bytes[start..<start + count]
    }
}

extension FixedWidthInteger {
    /// Assembles an integer from exactly `MemoryLayout<Self>.size` bytes in host order.
    fileprivate init(littleEndianOrHost raw: ArraySlice<UInt8>) {
        var value = Self.zero
        for (shift, byte) in raw.enumerated() { value |= Self(byte) << (shift * 8) }
        // Assembled as little-endian; netlink speaks the host's order.
        self = Self(littleEndian: value)
    }
}
