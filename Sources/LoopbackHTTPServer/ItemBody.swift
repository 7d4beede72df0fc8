/// The bodies of `/items/N`: "item N" on a line, then text of a length that varies with N, so a
/// client sees bodies of different sizes and a test can check every byte.
enum ItemBody {
    /// Filler text after the first line, shared by every body; its prefix is the filler.
    static let filler: StaticString = "the quick brown fox jumps over the lazy dog\nthe quick brown fox jumps over the lazy dog\nthe quick brown fox jumps over the lazy dog\nthe quick brown fox jumps over the lazy dog\nthe quick brown fox jumps over the lazy dog\nthe quick brown fox jumps over the lazy dog\nthe quick brown fox jumps over the lazy dog\nthe quick brown fox jumps over the lazy dog\nthe quick brown fox jumps over the lazy dog\n"

    /// Filler bytes for item `item`: 128 to 383.
    @inline(__always)
    static func fillerLength(_ item: Int) -> Int {
        128 + item % 256
    }

    /// The body's length for `item` (not negative): "item ", the digits, "\n", the filler.
    static func length(_ item: Int) -> Int {
        6 + OutputBuffer.decimalDigits(item) + fillerLength(item)
    }

    /// Appends the body for `item` (not negative).
    static func write(_ item: Int, into output: OutputBuffer) {
        output.append("item ")
        output.append(decimal: item)
        output.append("\n")
        output.append(UnsafeRawBufferPointer(start: filler.utf8Start, count: fillerLength(item)))
    }
}

extension LoopbackHTTPServer {
    /// The body `/items/N` answers with for `item` = N: "item N\n" followed by 128 to 383 bytes
    /// of filler text, depending on N. For tests and for checking a demo's byte count.
    /// - Precondition: `item` is not negative.
    public static func itemBody(_ item: Int) -> [UInt8] {
        precondition(item >= 0, "items are numbered from 0")
        let output = OutputBuffer(capacity: itemBodyLength(item))
        ItemBody.write(item, into: output)
        return Array(output.bytes)
    }

    /// The length of `itemBody(item)`, without building it.
    /// - Precondition: `item` is not negative.
    public static func itemBodyLength(_ item: Int) -> Int {
        precondition(item >= 0, "items are numbered from 0")
        return ItemBody.length(item)
    }
}
