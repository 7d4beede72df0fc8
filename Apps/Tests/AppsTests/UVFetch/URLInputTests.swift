import Foundation
import Glibc
import Testing
import UVFetchCore

/// `URLInput`: arguments and file lines, skipping blanks and comments, numbering bad lines.
@Suite(.tags(.unit)) struct URLInputTests {
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

    @Test func unreadableFileAndDirectoryAreErrors() throws {
        #expect(throws: FetchInputError.self) { try URLInput(arguments: [], inputPath: "/nonexistent/urls.txt") }
        let directory = try TestServers.makeTemporaryDirectory(prefix: "urlinput")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(throws: FetchInputError.unreadable(path: directory, reason: "Is a directory")) {
            try URLInput(arguments: [], inputPath: directory)
        }
    }

    /// A pipe holding `text`, closed for writing, named as `<(cmd)` names one: /dev/fd/N.
    private func pipeHolding(_ text: String) throws -> (path: String, descriptor: Int32) {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let bytes = Array(text.utf8)
        try #require(Glibc.write(ends[1], bytes, bytes.count) == bytes.count)
        close(ends[1])
        return ("/dev/fd/\(ends[0])", ends[0])
    }

    @Test func aPipeIsReadOnceAndNeverCountedAhead() throws {
        let (path, descriptor) = try pipeHolding("http://a.example/1\nhttp://a.example/2\n")
        defer { close(descriptor) }
        let input = try URLInput(arguments: [], inputPath: path)
        // Counting would have to read the pipe, taking the lines from the pass.
        #expect(input.countEntries() == nil)
        #expect(Array(input).count == 2)
    }

    @Test func repeatNeedsARegularFile() throws {
        let (path, descriptor) = try pipeHolding("http://a.example/\n")
        defer { close(descriptor) }
        #expect(throws: FetchInputError.notRepeatable(name: path)) { try URLInput(arguments: [], inputPath: path, repeatCount: 2) }
        let file = try write("http://a.example/\n")
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(Array(try URLInput(arguments: [], inputPath: file.path, repeatCount: 2)).count == 2)
    }

    @Test func theCountReadsTheFileThatWasOpened() throws {
        // The path replaced after the open: passes and count both read what was opened.
        let file = try write("http://a.example/1\nhttp://a.example/2\n")
        defer { try? FileManager.default.removeItem(at: file) }
        let input = try URLInput(arguments: [], inputPath: file.path)
        try FileManager.default.removeItem(at: file)
        try Data("http://b.example/\n".utf8).write(to: file)
        #expect(input.countEntries() == 2)
        #expect(Array(input).count == 2)
    }

    @Test func countsTheEntriesAPassYields() throws {
        let file = try write("# list\nhttp://a.example/1\n\n \t\nnot a url\n  # indented\nhttps://c.example/2")
        defer { try? FileManager.default.removeItem(at: file) }
        let input = try URLInput(arguments: ["http://arg.example/", "", "bad"], inputPath: file.path, repeatCount: 2)
        #expect(input.countEntries() == Array(input).count)
        #expect(input.countEntries() == 10)
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
