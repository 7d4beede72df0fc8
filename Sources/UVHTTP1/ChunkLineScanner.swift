// Finds the line ends of a chunked body's framing just ahead of llhttp, so that a bare LF can
// end a chunk-size line or follow chunk data (RFC 9112 §2.2). llhttp 8.1 refuses both and has
// no lenient flag for it; 9.x's lenient_optional_cr_before_lf would do, but feeding llhttp the
// missing CR works with both (checked against 9.3), so the decoder needs no version switch.
//
// Only the framing lines are looked at: the data of each chunk is skipped by its size, so body
// bytes are never examined, let alone changed. The size is read the way llhttp reads it (hex
// digits at the start of the line); where the two could disagree, llhttp refuses the line first
// (a line without digits, an overflowing size, a CR without LF, data longer than its size), and
// the scanner simply stops.

/// Walks the framing lines of one chunked body; the decoder feeds llhttp a CR before each LF
/// it reports.
package struct ChunkLineScanner {
    /// Not in a chunked body, or past its last chunk's size line.
    package static let inactive = ChunkLineScanner(isActive: false)
    /// At the first chunk-size line of a body.
    package static let start = ChunkLineScanner(isActive: true)

    private enum Position {
        /// In a chunk-size line (size digits, then extensions).
        case sizeLine
        /// In chunk data, `remaining` bytes to go.
        case data
        /// Right after chunk data, where its CRLF (or bare LF) goes.
        case dataEnd
    }

    /// False before the body, after the last chunk's size line, and once the framing went wrong
    /// (llhttp reports that).
    package private(set) var isActive: Bool
    private var position = Position.sizeLine
    /// The size being read, then the data bytes left of the chunk.
    private var remaining: UInt64 = 0
    /// Still reading the size's hex digits.
    private var inSizeDigits = true
    private var sawCR = false

    private init(isActive: Bool) {
        self.isActive = isActive
    }

    /// Scans from `start` until the bytes run out or a line ends in a bare LF. Returns that
    /// LF's index (the scanner is then past it), or nil.
    package mutating func scan(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        var index = start
        let end = bytes.count
        while isActive && index < end {
            if position == .data {
                let skipped = Int(min(UInt64(end - index), remaining))
                index += skipped
                remaining -= UInt64(skipped)
                if remaining == 0 { position = .dataEnd }
                continue
            }
            let byte = bytes[index]
            if position == .sizeLine && inSizeDigits && !sawCR {
                if let digit = hexDigitValue(byte) {
                    // llhttp refuses a size past 64 bits at this digit.
                    guard remaining >> 60 == 0 else { isActive = false; return nil }
                    remaining = remaining << 4 | UInt64(digit)
                    index += 1
                    continue
                }
                inSizeDigits = false
            }
            if byte == DecoderASCII.lf {
                let missingCR = !sawCR
                lineEnded()
                if missingCR { return index }
            } else if sawCR || (position == .dataEnd && byte != DecoderASCII.cr) {
                // A CR without LF, or data longer than its size: llhttp refuses this byte.
                isActive = false
                return nil
            } else if byte == DecoderASCII.cr {
                sawCR = true
            }
            index += 1
        }
        return nil
    }

    /// A framing line just ended.
    private mutating func lineEnded() {
        sawCR = false
        switch position {
        case .sizeLine:
            // Size 0 is the last chunk: the trailer section follows (the field scanner's).
            if remaining == 0 { isActive = false } else { position = .data }
        case .dataEnd:
            position = .sizeLine
            inSizeDigits = true
        case .data:
            break
        }
    }
}
