/// Counts the entries in the bytes of an input list without splitting it into lines or parsing
/// URLs: a line is an entry when, once its line terminator (`\n` or `\r\n`) is gone and spaces
/// and tabs are trimmed, something is left that does not start with `#`, as
/// `URLInput.entry(for:place:)` judges it.
///
/// Fed any slices of the bytes in order (a line may span two reads), then `finish()` for a last
/// line without a newline.
struct EntryCounter {
    private enum Line {
        /// Only spaces and tabs so far.
        case blank
        /// Blank, then a `\r`: the line's terminator if `\n` follows, else its first content.
        case blankThenReturn
        /// Decided; waiting for the line's end.
        case decided
    }

    /// Entries counted so far.
    private(set) var count = 0
    private var line = Line.blank
    /// Bytes of a leading UTF-8 byte order mark matched so far; -1 once past the input's start.
    /// The mark is skipped, as `LineReader` skips it.
    private var byteOrderMark = 0
    private static let byteOrderMarkBytes: [UInt8] = [0xEF, 0xBB, 0xBF]

    mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        for byte in bytes {
            if byteOrderMark >= 0 {
                if byte == Self.byteOrderMarkBytes[byteOrderMark] {
                    byteOrderMark += 1
                    if byteOrderMark == 3 { byteOrderMark = -1 }
                    continue
                }
                // Not a mark after all: what was held back is content.
                if byteOrderMark > 0 { take(0xEF) }
                byteOrderMark = -1
            }
            take(byte)
        }
    }

    /// Takes one byte of the input past any byte order mark.
    private mutating func take(_ byte: UInt8) {
        switch (line, byte) {
        case (_, UInt8(ascii: "\n")):
            line = .blank
        case (.decided, _), (.blank, UInt8(ascii: " ")), (.blank, UInt8(ascii: "\t")):
            return
        case (.blank, UInt8(ascii: "\r")):
            line = .blankThenReturn
        case (.blank, UInt8(ascii: "#")):
            line = .decided
        case (.blank, _), (.blankThenReturn, _):
            // Content: a URL or a malformed line, an entry either way.
            count += 1
            line = .decided
        }
    }

    /// Ends the input: a last line without a newline is judged as it stands. Returns the count.
    mutating func finish() -> Int {
        // The start of a mark and nothing after it: content, as the reader sees it.
        if byteOrderMark > 0 { take(0xEF) }
        byteOrderMark = -1
        line = .blank
        return count
    }
}
