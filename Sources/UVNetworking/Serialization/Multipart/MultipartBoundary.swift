import UVHTTP1

/// The boundary rules of RFC 2046 §5.1.1 and AFNetworking's random boundary.
enum MultipartBoundary {
    /// "Boundary+" and two random 32-bit values as 16 uppercase hex digits, AFNetworking's format
    /// ("Boundary+%08X%08X"). 64 random bits make a collision with the content negligible, which
    /// is why the body is never scanned for the boundary (AFNetworking does not either).
    static func random() -> String {
        "Boundary+" + hex8(UInt32.random(in: .min ... .max)) + hex8(UInt32.random(in: .min ... .max))
    }

    private static func hex8(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// RFC 2046: 1 to 70 bchars, not ending in a space.
    static func isValid(_ boundary: String) -> Bool {
        let bytes = Array(boundary.utf8)
        guard (1...70).contains(bytes.count), bytes.last != UInt8(ascii: " ") else { return false }
        return bytes.allSatisfy { isBoundaryByte($0) }
    }

    private static func isBoundaryByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "'()+_,-./:=? ".utf8.contains(byte)
        }
    }

    /// The boundary as a Content-Type parameter value: bare when it is a token, quoted otherwise
    /// (bchars such as space, "(", "/", ":" or "=" are not token characters).
    static func parameterValue(_ boundary: String) -> String {
        boundary.utf8.allSatisfy(RequestEncoder.isTokenByte) ? boundary : "\"\(boundary)\""
    }
}
