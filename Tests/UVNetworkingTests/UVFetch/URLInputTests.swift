import Foundation
import Testing
import UVFetchCore

/// `URLInput`: arguments and file lines, skipping blanks and comments, numbering bad lines.
@Suite struct URLInputTests {
    private func write(_ text: String) throws -> URL {
        let file = temporaryFile("urls.txt")
        try Data(text.utf8).write(to: file)
        return file
    }

    @Test func skipsBlankLinesAndCommentsAndNumbersMalformedLines() throws {
        let file = try write("# list\nhttp://a.example/1\n\n   \nftp://b.example/x\n  # indented comment\nhttps://c.example/2\r\nnot a url\n")
        defer { try? FileManager.default.removeItem(at: file) }
        let entries = Array(try URLInput(arguments: ["http://arg.example/"], inputPath: file.path))
        #expect(entries == [
            .url(URL(string: "http://arg.example/")!),
            .url(URL(string: "http://a.example/1")!),
            .malformed(place: "line 5", text: "ftp://b.example/x"),
            .url(URL(string: "https://c.example/2")!),
            .malformed(place: "line 8", text: "not a url"),
        ])
    }

    @Test func relativeAndHostlessURLsAreMalformed() {
        #expect(URLInput.entry(for: "/just/a/path", place: "line 1") == .malformed(place: "line 1", text: "/just/a/path"))
        #expect(URLInput.entry(for: "http://", place: "line 2") == .malformed(place: "line 2", text: "http://"))
        #expect(URLInput.entry(for: "HTTPS://x.example", place: "line 3") == .url(URL(string: "HTTPS://x.example")!))
    }

    @Test func repeatReadsArgumentsAndFileAgain() throws {
        let file = try write("http://f.example/\n")
        defer { try? FileManager.default.removeItem(at: file) }
        let entries = Array(try URLInput(arguments: ["http://a.example/"], inputPath: file.path, repeatCount: 3))
        #expect(entries.count == 6)
        #expect(entries[4] == .url(URL(string: "http://a.example/")!))
    }

    @Test func lastLineWithoutNewlineIsRead() throws {
        let file = try write("http://a.example/\nhttp://b.example/")
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(Array(try URLInput(arguments: [], inputPath: file.path)).count == 2)
    }

    @Test func unreadableFileAndRepeatedStdinAreErrors() {
        #expect(throws: FetchInputError.self) { try URLInput(arguments: [], inputPath: "/nonexistent/urls.txt") }
        #expect(throws: FetchInputError.stdinRepeated) { try URLInput(arguments: [], inputPath: "-", repeatCount: 2) }
    }

    @Test func countsTheEntriesAPassYields() throws {
        let file = try write("# list\nhttp://a.example/1\n\n \t\nnot a url\n  # indented\nhttps://c.example/2")
        defer { try? FileManager.default.removeItem(at: file) }
        let input = try URLInput(arguments: ["http://arg.example/", "", "bad"], inputPath: file.path, repeatCount: 2)
        #expect(input.countEntries() == Array(input).count)
        #expect(input.countEntries() == 10)
        // Standard input can be read only once: it is not counted ahead.
        #expect(try URLInput(arguments: ["http://a.example/"], inputPath: "-").countEntries() == nil)
    }

    @Test func aLongListIsStreamed() throws {
        // 200,000 lines: the iterator must hand them out one at a time without trouble.
        let file = temporaryFile("many.txt")
        defer { try? FileManager.default.removeItem(at: file) }
        let line = Data("http://many.example/x\n".utf8)
        var data = Data(capacity: line.count * 200_000)
        for _ in 0..<200_000 { data.append(line) }
        try data.write(to: file)
        var count = 0
        for entry in try URLInput(arguments: [], inputPath: file.path) {
            if case .url = entry { count += 1 }
        }
        #expect(count == 200_000)
    }
}
