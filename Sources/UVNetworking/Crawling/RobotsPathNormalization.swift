/// RFC 9309 §2.2.2's normalisation, applied alike to a rule's pattern and to a URL's path and
/// query, so that the two are then compared octet by octet:
///
/// - a percent-encoded unreserved character (RFC 3986 §2.3: letters, digits, "-", ".", "_", "~")
///   is decoded, and any other escape keeps its "%" with its hex digits uppercased, so "%7e",
///   "%7E" and "~" are one thing, and "%2f" and "%2F" another (a reserved character and its
///   escape are not equivalent: §2.2.2 keeps reserved ones encoded, and its table keeps
///   "/foo/bar?baz=quz" as written);
/// - an octet a URL never carries as it is gets percent-encoded: outside US-ASCII (§2.2.2),
///   controls, space, DEL and `"<>\^`{|}` (a URL encodes them, so a pattern holding them
///   could match nothing otherwise);
/// - on the URL's side "*" and "$" are encoded too: in a pattern they are special, and §2.2.3
///   says a pattern names them literally as "%2A" and "%24", which must then match them.
///   For the same reason a "$" inside a pattern (only a final one anchors) is "%24".
enum RobotsPathNormalization {
    /// Appends `input` normalised to `output`. As a pattern, "*" stays a wildcard and "$" is
    /// encoded (the caller has taken off a final anchoring "$" first).
    static func append(_ input: some Collection<UInt8>, asPattern: Bool, to output: inout [UInt8]) {
        // One loop over contiguous bytes (a native String's UTF-8, an array) rather than a
        // generic one through the collection's witnesses: this runs for every URL asked about.
        let done: Void? = input.withContiguousStorageIfAvailable { append(contiguous: $0, asPattern: asPattern, to: &output) }
        if done == nil {
            Array(input).withUnsafeBufferPointer { append(contiguous: $0, asPattern: asPattern, to: &output) }
        }
    }

    static func append(contiguous input: UnsafeBufferPointer<UInt8>, asPattern: Bool, to output: inout [UInt8]) {
        var index = 0
        while index < input.count {
            let byte = input[index]
            index += 1
            if byte == percent, let escaped = escapedOctet(in: input, at: index) {
                index += 2
                if isUnreserved(escaped) {
                    output.append(escaped)
                } else {
                    appendEscaped(escaped, to: &output)
                }
            } else if byte == asterisk {
                if asPattern { output.append(byte) } else { appendEscaped(byte, to: &output) }
            } else if byte == dollar || mustBeEncoded(byte) {
                appendEscaped(byte, to: &output)
            } else {
                output.append(byte)
            }
        }
    }

    /// The octet two hex digits at `index` spell, or nil when they are not there (a lone "%"
    /// is kept as it is, on both sides alike).
    private static func escapedOctet(in input: UnsafeBufferPointer<UInt8>, at index: Int) -> UInt8? {
        guard index + 1 < input.count, let high = hexValue(input[index]), let low = hexValue(input[index + 1]) else { return nil }
        return high << 4 | low
    }

    private static func appendEscaped(_ byte: UInt8, to output: inout [UInt8]) {
        output.append(percent)
        output.append(hexDigit(byte >> 4))
        output.append(hexDigit(byte & 0x0F))
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// RFC 3986 §2.3.
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// Octets that are in no URL unencoded (RFC 3986 §2: neither reserved nor unreserved, nor "%").
    private static func mustBeEncoded(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x00...0x20, 0x7F...0xFF,
             UInt8(ascii: "\""), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\\"),
             UInt8(ascii: "^"), UInt8(ascii: "`"), UInt8(ascii: "{"), UInt8(ascii: "|"), UInt8(ascii: "}"):
            true
        default:
            false
        }
    }

    static let percent = UInt8(ascii: "%")
    static let asterisk = UInt8(ascii: "*")
    static let dollar = UInt8(ascii: "$")

    /// An uppercase hex digit (§2.2.2 compares escapes case-insensitively; one case here).
    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
    }
}
