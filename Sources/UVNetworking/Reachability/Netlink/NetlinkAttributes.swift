/// One rtattr: its type (without the nested/byte-order bits) and its value's bytes.
struct NetlinkAttribute {
    let type: UInt16
    let value: ArraySlice<UInt8>

    /// The value as a u32 in host order, when it is exactly four bytes.
    var uint32: UInt32? {
        value.count == 4 ? NetlinkReader(value).uint32(at: 0) : nil
    }
}

enum NetlinkAttributes {
    /// NLA_F_NESTED and NLA_F_NET_BYTEORDER ride in the type's top bits.
    private static let typeMask: UInt16 = 0x3FFF

    /// Splits `bytes` into attributes. An attribute whose length is below its header or beyond
    /// what is left makes the whole list an error: nothing after it can be found, and a partial
    /// list could drop the one attribute (RTA_TABLE, RTA_OIF) that changes the message's meaning.
    static func parse(_ bytes: ArraySlice<UInt8>) throws(NetlinkDecodingError) -> [NetlinkAttribute] {
        let reader = NetlinkReader(bytes)
        var attributes: [NetlinkAttribute] = []
        var offset = 0
        // Fewer than four bytes left is trailing padding: the kernel aligns, never splits a header.
        while reader.count - offset >= Netlink.attributeHeaderSize {
            let length = Int(reader.uint16(at: offset)!)
            let type = reader.uint16(at: offset + 2)! & typeMask
            guard length >= Netlink.attributeHeaderSize, length <= reader.count - offset else {
                throw .badAttributeLength(type: type)
            }
            let value = reader.slice(at: offset + Netlink.attributeHeaderSize, count: length - Netlink.attributeHeaderSize)!
            attributes.append(NetlinkAttribute(type: type, value: value))
            offset += min(Netlink.aligned(length), reader.count - offset)
        }
        return attributes
    }
}
