import Testing
@testable import UVFetchCore

/// `EntryCounter` counts what `URLInput` would yield, however the bytes are cut.
@Suite(.tags(.unit)) struct EntryCounterTests {
    private func count(_ text: String, cutEvery step: Int) -> Int {
        var counter = EntryCounter()
        let bytes = Array(text.utf8)
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + step)
            bytes[start..<end].withUnsafeBytes { counter.feed($0) }
            start = end
        }
        return counter.finish()
    }

    /// What the passes yield for `text`: the lines `URLInput.entry` does not skip.
    private func entries(_ text: String) -> Int {
        // Split on the bytes: to String, "\r\n" is one Character, not a "\r" then a "\n".
        var lines = Array(text.utf8).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if text.utf8.last == UInt8(ascii: "\n") { lines.removeLast() }
        return lines.count { line in
            let content = line.last == UInt8(ascii: "\r") ? line.dropLast() : line
            return URLInput.entry(for: String(decoding: content, as: UTF8.self), place: "") != nil
        }
    }

    @Test(arguments: [
        "", "\n", "http://a/\n", "http://a/", "# c\n  # c\n\t\n \r\n", " x\n", "\r\n\r\n", "\r\r\n", " \r x\n",
        "\r#\n", "#\r\nhttp://a/\r\n", "not a url\nhttp://b/\n\n", " \r",
    ])
    func countsWhatThePassesYield(text: String) {
        for step in [1, 2, 3, 64] {
            #expect(count(text, cutEvery: step) == entries(text), "\(text.debugDescription) cut every \(step)")
        }
    }

    /// A leading byte order mark is skipped, as `LineReader` skips it: before a comment or a
    /// blank line it makes no entry; the same bytes later, or a mark cut short, are content.
    @Test func aLeadingByteOrderMarkIsNotAnEntry() {
        let mark = "\u{FEFF}"
        for (text, expected) in [(mark + "# c\nhttp://a/\n", 1), (mark + "\n", 0), (mark, 0), (mark + "http://a/\n" + mark + "\n", 2),
                                 ("\u{FE}\n", 1)] {
            for step in [1, 2, 64] {
                #expect(count(text, cutEvery: step) == expected, "\(text.debugDescription) cut every \(step)")
            }
        }
        // The first two bytes of a mark and nothing else: one line of content.
        var counter = EntryCounter()
        [UInt8]([0xEF, 0xBB]).withUnsafeBytes { counter.feed($0) }
        #expect(counter.finish() == 1)
    }
}
