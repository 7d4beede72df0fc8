import Foundation
import Testing

/// uvfetch against servers nobody here wrote (Debian's apache2, h2o and lighttpd, compressing
/// text: Support/ForeignServers.swift): records keep the validators each server sent, `--since`
/// and the user's own conditional field get 304s that count as successes, and a user's Range
/// gets the file's bytes.
@Suite(.tags(.childProcess), .serialized) struct FetchForeignServersTests {
    /// The records of a `--jsonl` output, in order.
    private static func records(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// The ETag each server gives the text for uvfetch's Accept-Encoding: Apache and lighttpd
    /// tag the coded representation apart from the file, h2o does not.
    private static func expectedETagSuffix(_ kind: ForeignServerKind) -> String? {
        switch kind {
        case .apache: "-gzip\""
        case .h2o: nil
        case .lighttpd: "-zstd\""
        }
    }

    @Test(arguments: ForeignServerKind.allCases) func sinceGets304sFromTheServersOwnValidators(_ kind: ForeignServerKind) throws {
        let server = try TestServers.foreign(kind)
        let url = server.url(ForeignServer.textPath)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("uvfetch-foreign-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = directory.appendingPathComponent("first.jsonl").path

        let run1 = try runUVFetch(["--jsonl", first, url])
        #expect(run1.status == 0, "\(run1.stderr)")
        let record1 = try #require(Self.records(try String(contentsOfFile: first, encoding: .utf8)).first)
        #expect(record1["status"] as? Int == 200)
        #expect(record1["bytes"] as? Int == ForeignServer.textBody.count, "decoded")
        #expect(record1["notModified"] as? Bool == false)
        let etag = try #require(record1["etag"] as? String)
        #expect(etag.hasPrefix("\"") && etag.hasSuffix("\""), "verbatim: \(etag)")
        if let suffix = Self.expectedETagSuffix(kind) {
            #expect(etag.hasSuffix(suffix), "\(etag)")
        } else {
            #expect(!etag.contains("-gzip") && !etag.contains("-br"), "\(etag)")
        }
        #expect(record1["lastModified"] as? String == ForeignServer.lastModifiedField)

        let run2 = try runUVFetch(["--since", first, "--jsonl", "-", url])
        #expect(run2.status == 0, "\(run2.stdout) \(run2.stderr)")
        let record2 = try #require(Self.records(run2.stdout).first, "\(run2.stdout)")
        #expect(record2["status"] as? Int == 304)
        #expect(record2["notModified"] as? Bool == true)
        #expect(record2["error"] is NSNull)
        // The 304's own ETag when it has one: Apache's is the file's tag, not the "-gzip" one
        // its 200 carried (mod_deflate never sees a 304), which RFC 9110 §15.4.5 would have
        // match; the others repeat theirs.
        let etag2 = kind == .apache ? etag.replacingOccurrences(of: "-gzip\"", with: "\"") : etag
        #expect(record2["etag"] as? String == etag2)
        #expect(record2["lastModified"] as? String == ForeignServer.lastModifiedField)

        // And the record of the 304 serves the next run as well.
        let second = directory.appendingPathComponent("second.jsonl").path
        try run2.stdout.write(toFile: second, atomically: false, encoding: .utf8)
        let run3 = try runUVFetch(["--since", second, "--jsonl", "-", url])
        #expect(run3.status == 0, "\(run3.stdout) \(run3.stderr)")
        #expect(Self.records(run3.stdout).first?["notModified"] as? Bool == true, "\(run3.stdout)")
    }

    @Test(arguments: ForeignServerKind.allCases) func theUsersOwnIfModifiedSinceGetsA304(_ kind: ForeignServerKind) throws {
        let server = try TestServers.foreign(kind)
        let run = try runUVFetch(["-H", "If-Modified-Since: \(ForeignServer.lastModifiedField)", "--jsonl", "-",
                                  server.url(ForeignServer.textPath)])
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        let record = try #require(Self.records(run.stdout).first, "\(run.stdout)")
        #expect(record["status"] as? Int == 304)
        #expect(record["notModified"] as? Bool == true)
        #expect(record["bytes"] as? Int == 0)
    }

    /// A Range of the user's own goes without uvfetch's Accept-Encoding, so every server, Apache
    /// with mod_deflate too, answers with the file's first 100 bytes.
    @Test(arguments: ForeignServerKind.allCases) func theUsersRangeGetsA206OfTheFilesBytes(_ kind: ForeignServerKind) throws {
        let server = try TestServers.foreign(kind)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("uvfetch-foreign-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try runUVFetch(["-H", "Range: bytes=0-99", "--out-dir", directory.path, "--jsonl", "-",
                                  server.url(ForeignServer.textPath)])
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        let record = try #require(Self.records(run.stdout).first, "\(run.stdout)")
        #expect(record["status"] as? Int == 206)
        #expect(record["bytes"] as? Int == 100)
        #expect(record["notModified"] as? Bool == false)
        let file = try #require(record["file"] as? String)
        #expect(file.hasPrefix(directory.path))
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data(ForeignServer.textBody.prefix(100)))
    }
}
