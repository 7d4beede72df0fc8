import Foundation
import Testing
import UVFetchCore

/// `URLInput` keeps each URL's text as given, for the record, and a line that is not UTF-8
/// keeps its bytes and is requested with them percent-escaped.
@Suite(.tags(.unit)) struct URLInputTextTests {
    private func entries(_ bytes: [UInt8]) throws -> [URLInput.Entry] {
        let file = temporaryFile("text.txt")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return Array(try URLInput(arguments: [], inputPath: file.path))
    }

    @Test func theTextIsTheTrimmedLineNotTheParsedURL() throws {
        let line = "http://bücher.example/a b?q=%41"
        let entries = try entries(Array(" \t\(line)\t\r\n".utf8))
        guard case .url(let url, let text, let bytes) = entries.first else { Issue.record("\(entries)"); return }
        #expect(text == line)
        #expect(bytes == nil)
        #expect(url.absoluteString == "http://xn--bcher-kva.example/a%20b?q=%41")
    }

    @Test func bytesThatAreNotUTF8AreEscapedInTheURLAndKept() throws {
        // A lone 0xFF, an overlong "/" (C0 AF), a UTF-16 surrogate (ED A0 80) and a cut-off
        // sequence (E2 82) around a valid "é", which stays as it is.
        let line: [UInt8] = Array("http://x.example/".utf8) + [0xFF, 0xC0, 0xAF, 0x2D, 0xED, 0xA0, 0x80, 0xC3, 0xA9, 0xE2, 0x82]
        let entries = try entries([0x20] + line + [0x09, 0x0A, 0x23, 0xFF, 0x0A])
        #expect(entries.count == 1, "the comment line is skipped even when it is not UTF-8")
        guard case .url(let url, let text, let bytes) = entries.first else { Issue.record("\(entries)"); return }
        #expect(bytes == line)
        #expect(text == String(decoding: line, as: UTF8.self))
        #expect(url.absoluteString == "http://x.example/%FF%C0%AF-%ED%A0%80%C3%A9%E2%82")
    }

    @Test func aMalformedLineThatIsNotUTF8IsReportedWithU_FFFD() throws {
        let entries = try entries(Array("ftp://x/".utf8) + [0xFF, 0x0A])
        #expect(entries == [.malformed(place: "line 1", text: "ftp://x/\u{FFFD}")])
    }

    @Test func argumentsKeepTheirTextToo() throws {
        let entries = Array(try URLInput(arguments: ["http://a.example/x y"], inputPath: nil))
        #expect(entries == [.url(URL(string: "http://a.example/x%20y")!, text: "http://a.example/x y")])
    }

    /// A list saved with a UTF-8 byte order mark: the first URL is the text after it (before,
    /// it was reported as "not an http(s) URL"). Only the start of the input has one: the same
    /// bytes later in a line are its text.
    @Test func aLeadingByteOrderMarkIsSkipped() throws {
        let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
        let entries = try entries(mark + Array("http://a.example/\n".utf8) + mark + Array("http://b.example/\n".utf8))
        #expect(entries.first == .url(URL(string: "http://a.example/")!, text: "http://a.example/"))
        #expect(entries.last == .malformed(place: "line 2", text: "\u{FEFF}http://b.example/"))
        // A mark before a comment, and a mark alone on the first line: nothing to fetch there.
        #expect(try self.entries(mark + Array("# list\nhttp://c.example/\n".utf8)).count == 1)
        #expect(try self.entries(mark + [0x0A]).isEmpty)
    }

    /// Arguments given as bytes that are not UTF-8 are taken as those bytes, as a file's line is.
    @Test func argumentBytesThatAreNotUTF8AreEscapedInTheURLAndKept() throws {
        let bytes: [UInt8] = Array("http://a.example/arg".utf8) + [0xFF] + Array("z".utf8)
        let text = String(decoding: bytes, as: UTF8.self)
        let entries = Array(try URLInput(arguments: [text, "http://b.example/"], argumentBytes: [bytes, nil], inputPath: nil))
        guard case .url(let url, let kept, let keptBytes) = entries.first else { Issue.record("\(entries)"); return }
        #expect(url.absoluteString == "http://a.example/arg%FFz")
        #expect(kept == text)
        #expect(keptBytes == bytes)
        #expect(entries.last == .url(URL(string: "http://b.example/")!, text: "http://b.example/"))
    }
}
