import Foundation
import Testing
import UVFetchCore

/// The set `--resume` skips by: a URL is its input bytes, exactly.
@Suite(.tags(.unit)) struct RecordedURLsTests {
    @Test func aURLIsTakenOnce() {
        let recorded = RecordedURLs()
        #expect(recorded.insert(text: "http://a/1", bytes: nil))
        #expect(!recorded.insert(text: "http://a/1", bytes: nil))
        #expect(recorded.insert(text: "http://a/2", bytes: nil))
        #expect(recorded.count == 2)
        #expect(recorded.contains(text: "http://a/1", bytes: nil))
        #expect(!recorded.contains(text: "http://a/3", bytes: nil))
    }

    /// The input's bytes, not what a parser makes of them: these request the same resource,
    /// but only a record of the very line skips it.
    @Test func spellingsOfOneURLAreDifferentURLs() {
        let recorded = RecordedURLs()
        recorded.insert(text: "http://a/%7Ex", bytes: nil)
        #expect(!recorded.contains(text: "http://a/~x", bytes: nil))
        #expect(!recorded.contains(text: "http://A/%7Ex", bytes: nil))
        #expect(!recorded.contains(text: "http://a/%7ex", bytes: nil))
        // Canonically equivalent Unicode is still other bytes: é precomposed and decomposed.
        recorded.insert(text: "http://a/caf\u{E9}", bytes: nil)
        #expect(!recorded.contains(text: "http://a/cafe\u{301}", bytes: nil))
    }

    /// Lines that are not UTF-8 share their text (U+FFFD in place of the bad byte) and differ
    /// in their bytes: the bytes decide.
    @Test func bytesThatAreNotUTF8AreMatchedExactly() {
        let ff: [UInt8] = Array("http://a/".utf8) + [0xFF]
        let fe: [UInt8] = Array("http://a/".utf8) + [0xFE]
        let text = String(decoding: ff, as: UTF8.self)
        #expect(text == String(decoding: fe, as: UTF8.self))
        let recorded = RecordedURLs()
        recorded.insert(text: text, bytes: ff)
        #expect(recorded.contains(text: text, bytes: ff))
        #expect(!recorded.contains(text: text, bytes: fe))
        // Nor is the replacement character's own spelling the same URL.
        #expect(!recorded.contains(text: text, bytes: nil))
    }

    /// Many keys, none lost: a stand-in for a long record file.
    @Test func aHundredThousandURLsAreAllKept() {
        let recorded = RecordedURLs()
        let inserted = (0..<100_000).count { recorded.insert(text: "http://host/item/\($0)", bytes: nil) }
        #expect(inserted == 100_000 && recorded.count == 100_000)
        #expect((0..<100_000).allSatisfy { recorded.contains(text: "http://host/item/\($0)", bytes: nil) })
        #expect(!recorded.contains(text: "http://host/item/100000", bytes: nil))
    }
}
