import Foundation
import Testing
import UVFetchCore

/// `--out-dir`: names from URLs, never replacing a file, and bodies kept only for successes.
@Suite(.tags(.nginx)) struct OutputDirectoryTests {
    private func name(_ text: String) -> String { OutputDirectory.fileName(for: URL(string: text)!) }

    @Test func namesComeFromTheLastPathSegment() {
        #expect(name("http://h.example/a/b/report.pdf") == "report.pdf")
        #expect(name("http://h.example/a/b/report.pdf?page=2#top") == "report.pdf")
        #expect(name("http://h.example/files/caf%C3%A9%20menu.txt") == "café menu.txt")
    }

    @Test func directoriesAndEmptyPathsAreIndexHTML() {
        #expect(name("http://h.example") == "index.html")
        #expect(name("http://h.example/") == "index.html")
        #expect(name("http://h.example/docs/") == "index.html")
    }

    @Test func namesThatCouldEscapeOrHideAreNeutralised() {
        // Decoded %2F must not make a path, nor control bytes reach the file system.
        #expect(name("http://h.example/a%2F..%2Fetc%2Fpasswd") == "passwd")
        #expect(name("http://h.example/bell%07%0Aname") == "bell__name")
        #expect(name("http://h.example/x/..") == "_")
        #expect(!name("http://h.example/" + String(repeating: "é", count: 200)).isEmpty)
        #expect(name("http://h.example/" + String(repeating: "é", count: 200)).utf8.count <= 240)
    }

    @Test func takenNamesGetTheNextSuffixAndNothingIsReplaced() throws {
        let directory = try OutputDirectory(path: temporaryFile("out").path)
        defer { try? FileManager.default.removeItem(at: directory.url) }
        let existing = directory.url.appendingPathComponent("data.json")
        try Data("already here".utf8).write(to: existing)
        var kept: [String] = []
        for index in 0..<3 {
            let body = temporaryFile("body")
            try Data("body \(index)".utf8).write(to: body)
            kept.append(try directory.keep(body, for: URL(string: "http://h.example/v\(index)/data.json")!).lastPathComponent)
        }
        #expect(kept == ["data.json.1", "data.json.2", "data.json.3"])
        #expect(try String(contentsOf: existing, encoding: .utf8) == "already here")
        #expect(try String(contentsOf: directory.url.appendingPathComponent("data.json.3"), encoding: .utf8) == "body 2")
    }

    @Test func aSymlinkIsATakenNameEvenWhenDangling() throws {
        let directory = try OutputDirectory(path: temporaryFile("out").path)
        defer { try? FileManager.default.removeItem(at: directory.url) }
        let link = directory.url.appendingPathComponent("page").path
        #expect(symlink("missing/target", link) == 0)
        let body = temporaryFile("body")
        try Data("body".utf8).write(to: body)
        let kept = try directory.keep(body, for: URL(string: "http://h.example/page")!)
        #expect(kept.lastPathComponent == "page.1")
        #expect(try String(contentsOf: kept, encoding: .utf8) == "body")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "missing/target")
        #expect(!FileManager.default.fileExists(atPath: body.path), "the temporary name is gone")
    }

    /// Whether the tests' temporary directory and /dev/shm are on different file systems, where
    /// a hard link from one to the other fails with EXDEV.
    private static let sharedMemoryIsAnotherFileSystem: Bool = {
        var temporary = stat(), shared = stat()
        return stat(FileManager.default.temporaryDirectory.path, &temporary) == 0 && stat("/dev/shm", &shared) == 0
            && access("/dev/shm", W_OK) == 0 && temporary.st_dev != shared.st_dev
    }()

    @Test(.enabled(if: sharedMemoryIsAnotherFileSystem))
    func fromAnotherFileSystemTheBodyIsCopiedUnderAFreeName() throws {
        let directory = try OutputDirectory(path: "/dev/shm/uvfetch-out-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory.url) }
        try Data("already here".utf8).write(to: directory.url.appendingPathComponent("data.json"))
        #expect(symlink("nowhere", directory.url.appendingPathComponent("data.json.1").path) == 0)
        let body = temporaryFile("body")
        let bytes = Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 * 7) })
        try bytes.write(to: body)
        let kept = try directory.keep(body, for: URL(string: "http://h.example/data.json")!)
        #expect(kept.lastPathComponent == "data.json.2")
        #expect(try Data(contentsOf: kept) == bytes)
        #expect(try String(contentsOf: directory.url.appendingPathComponent("data.json"), encoding: .utf8) == "already here")
        #expect(!FileManager.default.fileExists(atPath: body.path), "the temporary file is removed")
    }

    @Test func keptFilesAreReadableLikeAnyNewFile() throws {
        let directory = try OutputDirectory(path: temporaryFile("out").path)
        defer { try? FileManager.default.removeItem(at: directory.url) }
        let body = temporaryFile("body")
        try Data("x".utf8).write(to: body)
        chmod(body.path, 0o600)  // as a download's temporary file is
        let kept = try directory.keep(body, for: URL(string: "http://h.example/x")!)
        let mode = try #require(FileManager.default.attributesOfItem(atPath: kept.path)[.posixPermissions] as? Int)
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let umaskLine = try #require(status.split(separator: "\n").first { $0.hasPrefix("Umask:") })
        let umask = try #require(Int(umaskLine.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8))
        #expect(mode == 0o666 & ~umask)
    }

    @Test func aPathThatCannotBeADirectoryIsUnwritable() throws {
        let file = temporaryFile("plain")
        try Data().write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(throws: FetchInputError.unwritable(path: file.path)) { try OutputDirectory(path: file.path) }
        #expect(throws: FetchInputError.unwritable(path: file.path + "/sub")) { try OutputDirectory(path: file.path + "/sub") }
    }

    @Test func successfulBodiesAreKeptAndFailuresAreNot() throws {
        let base = try TestServers.nginx().baseURL
        let directory = try OutputDirectory(path: temporaryFile("out").path)
        defer { try? FileManager.default.removeItem(at: directory.url) }
        let urls = ["\(base)/hello", "\(base)/hello?again", "\(base)/large", "\(base)/missing", "\(base)/"]
        let (outcome, records, _) = try runFetch(urls, outputDirectory: directory)
        #expect(outcome.statistics.succeeded == 4)
        #expect(outcome.statistics.failed == 1)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        #expect(names == ["hello", "hello.1", "index.html", "large"])
        #expect(try Data(contentsOf: directory.url.appendingPathComponent("large")) == Data(NginxServer.largeBody(count: NginxServer.largeSize)))
        #expect(try String(contentsOf: directory.url.appendingPathComponent("hello.1"), encoding: .utf8) == NginxServer.helloBody)
        for record in records {
            let url = try #require(record["url"] as? String)
            if url.hasSuffix("/missing") {
                #expect(record["file"] is NSNull)
                #expect(record["status"] as? Int == 404)
                #expect((record["error"] as? [String: Any])?["kind"] as? String == "validation")
            } else {
                let file = try #require(record["file"] as? String)
                #expect(file.hasPrefix(directory.url.path))
                #expect(record["bytes"] as? Int == (url.hasSuffix("/large") ? NginxServer.largeSize : NginxServer.helloBody.utf8.count))
            }
        }
    }
}
