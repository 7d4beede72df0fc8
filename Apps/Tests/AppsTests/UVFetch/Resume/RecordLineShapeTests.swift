import Foundation
import Testing
@testable import UVFetchCore

/// `--resume`'s fast path reads the URL off the end of a record line: for every line it takes,
/// the key is the one a full decoding gives, and it leaves any line it cannot read exactly to
/// that decoding.
@Suite(.tags(.unit)) struct RecordLineShapeTests {
    private func key(of line: String) -> RecordedURLKey? {
        var line = line
        if line.hasSuffix("\n") { line.removeLast() }
        return Array(line.utf8).withUnsafeBytes { RecordLineShape.urlKey(of: $0) }
    }

    @Test(arguments: [
        "http://a/1", "http://a/caf\u{E9}?q=\u{1F600}", "http://a/x,\"url\":\"http://b/", "http://a/back\\slash",
        "http://a/tab\there", "http://a/\u{1}", "http://a/\"urlBase64\":null}", "",
    ])
    func aLineUVFetchWroteGivesItsURLsKey(url: String) {
        let line = ResumableRecordsTests.line(url)
        let escaped = url.contains("\"") || url.contains("\\") || url.unicodeScalars.contains { $0.value < 0x20 }
        if escaped {
            // Read by JSONDecoder instead.
            #expect(key(of: line) == nil, "\(line)")
        } else {
            #expect(key(of: line) == RecordedURLKey(text: url), "\(line)")
        }
    }

    @Test func urlBase64IsDecoded() {
        let bytes: [UInt8] = Array("http://a/".utf8) + [0xFF, 0xFE]
        let line = ResumableRecordsTests.line(String(decoding: bytes, as: UTF8.self), bytes: bytes)
        #expect(key(of: line) == RecordedURLKey(bytes: bytes))
    }

    @Test(arguments: [
        // Torn: a prefix of a record never ends as a whole one does.
        String(ResumableRecordsTests.line("http://a/1").dropLast(2)),
        String(ResumableRecordsTests.line("http://a/1").prefix(60)),
        // Another shape: not written by uvfetch, or not a record.
        #"{"url":"http://a/1","urlBase64":null}"#,
        #"{"attempts":1,"url":"http://a/1","urlBase64":null"#,
        #"{"attempts":1,"url":"http://a/1","urlBase64":"%%"}"#,
        #"{"attempts":1,"url":"http://a/1","urlBase64":7}"#,
        #"{"attempts":1,"url":"http://a/1"}"#,
        #"{"attempts":1,"url":7,"urlBase64":null}"#,
    ])
    func otherLinesAreLeftToTheDecoder(line: String) {
        #expect(key(of: line) == nil)
    }

    @Test func bytesThatAreNotUTF8AreLeftToTheDecoder() {
        let line = Array(#"{"attempts":1,"url":"http://a/"#.utf8) + [0xFF] + Array(#"","urlBase64":null}"#.utf8)
        #expect(line.withUnsafeBytes { RecordLineShape.urlKey(of: $0) } == nil)
    }
}
