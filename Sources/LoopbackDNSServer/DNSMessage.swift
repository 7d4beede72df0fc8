/// The little of RFC 1035's message format the scripted server needs: read one question, write
/// an answer of A and AAAA records, or an error code.
enum DNSMessage {
    /// Record types the server answers (others get no records).
    static let typeA: UInt16 = 1
    static let typeAAAA: UInt16 = 28

    /// A query's one question.
    struct Question {
        var id: UInt16
        /// The query's flags (RD is echoed).
        var flags: UInt16
        /// The name, lowercased, without the final dot.
        var name: String
        var type: UInt16
        var qclass: UInt16
        /// The question's bytes as sent (name, type, class), echoed in the answer.
        var wire: ArraySlice<UInt8>
    }

    /// The question of a query, nil for anything else (answers, truncated or compressed names).
    static func parseQuery(_ bytes: [UInt8]) -> Question? {
        guard bytes.count >= 12 else { return nil }
        let id = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
        let flags = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
        let questions = UInt16(bytes[4]) << 8 | UInt16(bytes[5])
        guard flags & 0x8000 == 0, questions >= 1 else { return nil }
        var index = 12
        var labels: [String] = []
        while true {
            guard index < bytes.count else { return nil }
            let length = Int(bytes[index])
            index += 1
            if length == 0 { break }
            guard length < 64, index + length <= bytes.count else { return nil }
            labels.append(String(decoding: bytes[index..<index + length], as: UTF8.self))
            index += length
        }
        guard index + 4 <= bytes.count else { return nil }
        let type = UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
        let qclass = UInt16(bytes[index + 2]) << 8 | UInt16(bytes[index + 3])
        return Question(id: id, flags: flags, name: labels.joined(separator: ".").lowercased(), type: type, qclass: qclass,
                        wire: bytes[12..<index + 4])
    }

    /// The response to `question`: `rcode` (0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN) and one record per
    /// address (4 bytes for A, 16 for AAAA), each with `ttl`. `truncated` sets TC (RFC 1035 §4.1.1:
    /// the answer did not fit, ask again over TCP).
    static func response(to question: Question, rcode: UInt8, addresses: [[UInt8]], ttl: UInt32, truncated: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(12 + question.wire.count + addresses.count * 28)
        let flags: UInt16 = 0x8000 | 0x0400 | (truncated ? 0x0200 : 0) | (question.flags & 0x0100) | 0x0080 | UInt16(rcode & 0x0F)
        append16(&out, question.id)
        append16(&out, flags)
        append16(&out, 1)
        append16(&out, UInt16(addresses.count))
        append16(&out, 0)
        append16(&out, 0)
        out.append(contentsOf: question.wire)
        for address in addresses {
            append16(&out, 0xC00C)  // the question's name
            append16(&out, question.type)
            append16(&out, 1)
            append16(&out, UInt16(ttl >> 16))
            append16(&out, UInt16(ttl & 0xFFFF))
            append16(&out, UInt16(address.count))
            out.append(contentsOf: address)
        }
        return out
    }

    private static func append16(_ out: inout [UInt8], _ value: UInt16) {
        out.append(UInt8(value >> 8))
        out.append(UInt8(value & 0xFF))
    }
}
