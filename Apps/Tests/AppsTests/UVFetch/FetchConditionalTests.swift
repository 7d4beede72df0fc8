import Foundation
import Synchronization
import Testing
import UVFetchCore

/// Conditional refetch: records keep each response's validators verbatim, `--since` sends them
/// back, and a 304 to a conditional request (ours or the user's own -H) is a success.
@Suite(.tags(.childProcess), .serialized) struct FetchConditionalTests {
    /// The conditional fields each path was last asked with.
    private final class SeenFields: Sendable {
        private let table = Mutex<[String: [(String, String)]]>([:])
        func set(_ fields: [(String, String)], for path: String) { table.withLock { $0[path] = fields } }
        func fields(for path: String) -> [(String, String)]? { table.withLock { $0[path] } }
        var all: [String: [(String, String)]] { table.withLock { $0 } }
    }

    /// One resource of the scripted server: its validators, and the body of a 200.
    private struct Resource {
        var etag: String?
        var lastModified: String?
    }

    private static let resources: [String: Resource] = [
        "/both": Resource(etag: "\"v1\"", lastModified: "Tue, 01 Dec 2026 10:00:00 GMT"),
        "/weak": Resource(etag: "W/\"w-7\"", lastModified: nil),
        "/dated": Resource(etag: nil, lastModified: "Mon, 30 Nov 2026 08:00:00 GMT"),
        "/none": Resource(etag: nil, lastModified: nil),
    ]

    /// Answers 304 when If-None-Match names the resource's ETag, or (without If-None-Match, as
    /// RFC 9110 §13.2.2 orders them) when If-Modified-Since is its Last-Modified; else a 200
    /// with the validators. Every request's conditional fields are kept, by path.
    private static func server(_ seen: SeenFields) throws -> ScriptedServer {
        try ScriptedServer { connection in
            while let request = try? connection.readRequest(timeout: 10) {
                let conditional = request.headers.filter { ["if-none-match", "if-modified-since"].contains($0.0.lowercased()) }
                seen.set(conditional, for: request.target)
                let resource = resources[request.target] ?? Resource()
                let inm = conditional.first { $0.0.lowercased() == "if-none-match" }?.1
                let ims = conditional.first { $0.0.lowercased() == "if-modified-since" }?.1
                var fields: [(String, String)] = []
                if let etag = resource.etag { fields.append(("ETag", etag)) }
                if let date = resource.lastModified { fields.append(("Last-Modified", date)) }
                let unchanged = inm.map { $0 == resource.etag } ?? (ims != nil && ims == resource.lastModified)
                if unchanged {
                    // Only the ETag repeated: a 304 need not send Last-Modified again.
                    let head = "HTTP/1.1 304 Not Modified\r\n" + (resource.etag.map { "ETag: \($0)\r\n" } ?? "") + "\r\n"
                    try connection.write(head)
                } else {
                    try connection.write(ScriptedResponse.text("body of \(request.target)", headers: fields))
                }
            }
        }
    }

    private static func records(_ text: String) -> [String: [String: Any]] {
        var byURL: [String: [String: Any]] = [:]
        for line in text.split(separator: "\n") {
            guard let record = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let url = record["url"] as? String else { continue }
            byURL[URL(string: url)!.path] = record
        }
        return byURL
    }

    @Test func recordsCarryValidatorsAndSinceSendsThemBack() throws {
        let seen = SeenFields()
        let server = try Self.server(seen)
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        let urls = Self.resources.keys.sorted().map { base + $0 }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("uvfetch-since-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = directory.appendingPathComponent("first.jsonl").path

        let run1 = try runUVFetch(["--jsonl", first] + urls)
        #expect(run1.status == 0, "\(run1.stderr)")
        let firstRecords = Self.records(try String(contentsOfFile: first, encoding: .utf8))
        #expect(firstRecords.count == 4)
        for (path, resource) in Self.resources {
            let record = try #require(firstRecords[path])
            // Verbatim: the quotes and W/ kept, null when absent, every record saying notModified.
            #expect(record["etag"] as? String == resource.etag, "\(path)")
            #expect(record["lastModified"] as? String == resource.lastModified, "\(path)")
            #expect(record["notModified"] as? Bool == false, "\(path)")
            #expect(seen.fields(for: path)?.isEmpty == true, "the first run asked \(path) conditionally")
        }

        // The second run writes over the file it reads: --since reads it first.
        let run2 = try runUVFetch(["--since", first, "--jsonl", first] + urls)
        #expect(run2.status == 0, "\(run2.stdout) \(run2.stderr)")
        let secondRecords = Self.records(try String(contentsOfFile: first, encoding: .utf8))
        #expect(secondRecords.count == 4)
        let sent = seen.all
        // Both validators when both were recorded; none for a URL that had none.
        #expect(Set(sent["/both"]?.map { $0.0.lowercased() } ?? []) == ["if-none-match", "if-modified-since"])
        #expect(sent["/both"]?.first { $0.0.lowercased() == "if-none-match" }?.1 == "\"v1\"")
        #expect(sent["/weak"]?.map(\.1) == ["W/\"w-7\""])
        #expect(sent["/dated"]?.map(\.1) == ["Mon, 30 Nov 2026 08:00:00 GMT"])
        #expect(sent["/none"]?.isEmpty == true)
        for path in ["/both", "/weak", "/dated"] {
            let record = try #require(secondRecords[path])
            #expect(record["status"] as? Int == 304, "\(path)")
            #expect(record["notModified"] as? Bool == true, "\(path)")
            #expect(record["error"] is NSNull, "\(path)")
            // The validators still hold, for the next run, though the 304 did not repeat them all.
            #expect(record["etag"] as? String == Self.resources[path]!.etag, "\(path)")
            #expect(record["lastModified"] as? String == Self.resources[path]!.lastModified, "\(path)")
        }
        #expect(secondRecords["/none"]?["status"] as? Int == 200)
        #expect(secondRecords["/none"]?["notModified"] as? Bool == false)
        #expect(run2.stdout.isEmpty || !run2.stdout.contains("error"), "\(run2.stdout)")
    }

    /// curl exits 0 on a 304 to its own If-Modified-Since (even with --fail): so does uvfetch,
    /// for the user's -H as for --since's. A 304 to a request that asked nothing is no success.
    @Test func a304ToTheUsersOwnConditionIsASuccess() throws {
        let seen = SeenFields()
        let server = try Self.server(seen)
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.port)/dated"
        let asked = try runUVFetch(["-H", "If-Modified-Since: Mon, 30 Nov 2026 08:00:00 GMT", "--jsonl", "-", url])
        #expect(asked.status == 0, "\(asked.stdout) \(asked.stderr)")
        let record = Self.records(asked.stdout)["/dated"]
        #expect(record?["status"] as? Int == 304)
        #expect(record?["notModified"] as? Bool == true)

        let unasked = try ScriptedServer { connection in
            _ = try connection.readRequest()
            try connection.write("HTTP/1.1 304 Not Modified\r\n\r\n")
            _ = connection.waitForPeerClose()
        }
        defer { unasked.stop() }
        let plain = try runUVFetch(["--jsonl", "-", "http://127.0.0.1:\(unasked.port)/x"])
        #expect(plain.status == 1)
        let unaskedRecord = Self.records(plain.stdout)["/x"]
        #expect(unaskedRecord?["notModified"] as? Bool == false)
        #expect((unaskedRecord?["error"] as? [String: Any])?["code"] as? String == "unacceptableStatusCode")
    }

    /// --since files that are not records: a clear refusal for one that cannot be read, and
    /// lines that are not records skipped with a count.
    @Test func sinceFilesThatAreNotRecords() throws {
        let missing = try runUVFetch(["--since", "/nonexistent/records.jsonl", "http://127.0.0.1:9/"])
        #expect(missing.status == ExitStatus.usage)
        #expect(missing.stderr.contains("/nonexistent/records.jsonl"))
        let directory = try runUVFetch(["--since", "/tmp", "http://127.0.0.1:9/"])
        #expect(directory.status == ExitStatus.usage)

        let seen = SeenFields()
        let server = try Self.server(seen)
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.port)/both"
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("uvfetch-since-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        let record = #"{"url":"\#(url)","requestURL":"\#(url)","status":200,"etag":"\"v1\"","lastModified":null}"#
        try Data("not json\n\(record)\n{\"half\":\n".utf8).write(to: file)
        let result = try runUVFetch(["--since", file.path, "--jsonl", "-", url])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("2 lines"), "\(result.stderr)")
        #expect(Self.records(result.stdout)["/both"]?["notModified"] as? Bool == true)
    }
}
