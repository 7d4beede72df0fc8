/// Writes JSON text into memory reserved for it, each value exactly as Foundation's `JSONEncoder`
/// writes it with `.withoutEscapingSlashes`, so that `RecordEncoder`'s lines stay byte-identical
/// to the ones it wrote before it was written by hand (and to every `--jsonl` file `--resume`
/// reads back). Straight stores through a pointer: the caller reserved room for the worst case
/// (`maximumLength`), so nothing is checked or grown per value.
struct JSONBytes {
    /// Where the next byte goes.
    private(set) var next: UnsafeMutablePointer<UInt8>

    init(at start: UnsafeMutablePointer<UInt8>) { next = start }

    /// The most bytes `string` can take: each byte escaped as `\u00xx`, and the quotes.
    static func maximumLength(of string: String) -> Int { 6 * string.utf8.count + 2 }

    /// The most bytes a number takes: 20 for an Int (Int.min), 24 for a Double's shortest form
    /// (`-2.2250738585072014e-308`).
    static let maximumNumberLength = 24

    /// Writes fixed text (keys, punctuation, null).
    mutating func text(_ text: StaticString) {
        next.update(from: text.utf8Start, count: text.utf8CodeUnitCount)
        next += text.utf8CodeUnitCount
    }

    mutating func byte(_ byte: UInt8) {
        next.pointee = byte
        next += 1
    }

    /// Writes `string` quoted, escaped as JSONEncoder escapes it: `"` and `\` with a backslash,
    /// the control characters it has short forms for as `\b \f \n \r \t`, the other bytes below
    /// 0x20 as `\u00xx` (lowercase hex); everything else, `/` and non-ASCII included, as is.
    mutating func string(_ string: String) {
        byte(UInt8(ascii: "\""))
        var string = string
        // A native string's UTF-8 is read in place; runs that need no escape are copied whole.
        string.withUTF8 { utf8 in
            var plain = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                copy(UnsafeBufferPointer(rebasing: utf8[plain..<index]))
                escape(byte)
                plain = index + 1
            }
            copy(UnsafeBufferPointer(rebasing: utf8[plain...]))
        }
        byte(UInt8(ascii: "\""))
    }

    private mutating func copy(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        next.update(from: base, count: bytes.count)
        next += bytes.count
    }

    private mutating func escape(_ byte: UInt8) {
        self.byte(UInt8(ascii: "\\"))
        switch byte {
        case 0x08: self.byte(UInt8(ascii: "b"))
        case 0x0C: self.byte(UInt8(ascii: "f"))
        case 0x0A: self.byte(UInt8(ascii: "n"))
        case 0x0D: self.byte(UInt8(ascii: "r"))
        case 0x09: self.byte(UInt8(ascii: "t"))
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): self.byte(byte)
        default:
            let hex: StaticString = "0123456789abcdef"
            text("u00")
            self.byte(hex.utf8Start[Int(byte >> 4)])
            self.byte(hex.utf8Start[Int(byte & 0xF)])
        }
    }

    /// Writes `value` in decimal, as its `description` reads.
    mutating func number(_ value: Int) {
        // Digits counted first, then written from the last.
        var rest = value.magnitude  // unsigned: Int.min has no magnitude as an Int
        var digits = 1
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        if value < 0 { byte(UInt8(ascii: "-")) }
        rest = value.magnitude
        for place in stride(from: digits - 1, through: 0, by: -1) {
            next[place] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
        }
        next += digits
    }

    /// Writes a finite `value` as JSONEncoder writes a Double: its `description` (the shortest
    /// digits that read back as the same value) without a trailing `.0`.
    /// - Precondition: `value.isFinite` (JSONEncoder refuses the others; so does `RecordEncoder`).
    mutating func number(_ value: Double) {
        precondition(value.isFinite, "JSON has no \(value)")
        // The digits go straight here: `description` would be a String, a heap one for most
        // timings (longer than 15 bytes).
        var sink = ASCIISink(next: next)
        value.write(to: &sink)
        if sink.next - next >= 2 && sink.next[-2] == UInt8(ascii: ".") && sink.next[-1] == UInt8(ascii: "0") {
            sink.next -= 2
        }
        next = sink.next
    }
}

/// A text stream into reserved memory, for `Double.write(to:)`, which hands a stream its digits
/// as ASCII bytes (`_writeASCII`) where `description` would make a String of them.
private struct ASCIISink: TextOutputStream {
    var next: UnsafeMutablePointer<UInt8>

    mutating func write(_ string: String) {
        for byte in string.utf8 {
            next.pointee = byte
            next += 1
        }
    }

    // The standard library's hook for ASCII text, defaulting to a String made of it and passed
    // to `write`: taken here, the digits are copied without one.
    mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) {
        guard let base = buffer.baseAddress else { return }
        next.update(from: base, count: buffer.count)
        next += buffer.count
    }
}
