/// Why part of a datagram could not be decoded. Kernel-written datagrams never produce these;
/// they exist so that a corrupt or truncated one is reported rather than read out of bounds.
enum NetlinkDecodingError: Error, Equatable {
    /// Fewer bytes left than a message header (16), at this offset of the datagram.
    case truncatedHeader(offset: Int)
    /// The header's length is below a header's size or beyond the bytes left.
    case badMessageLength(offset: Int, length: UInt32, remaining: Int)
    /// The message is shorter than the fixed part its type requires (ifinfomsg, ifaddrmsg, rtmsg, the error's code).
    case truncatedPayload(type: UInt16)
    /// An attribute's length is below its header's size or beyond the bytes left.
    case badAttributeLength(type: UInt16)
    /// An attribute's value has the wrong size for its type (an address of 3 bytes, a u32 of 2).
    case badAttributeValue(type: UInt16)
}
