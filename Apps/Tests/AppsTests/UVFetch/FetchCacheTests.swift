import Dispatch
import Foundation
import Synchronization
import Testing

/// `uvfetch --cache DIR`: kept across runs, the records' "cache" field, the modes, duplicates
/// through the cache, two processes on one directory at once, and a damaged entry.
@Suite(.tags(.childProcess), .serialized) struct FetchCacheTests {
    /// Requests the server answered, by path.
    private final class Hits: Sendable {
        private let table = Mutex<[String: Int]>([:])
        func add(_ path: String) { table.withLock { $0[path, default: 0] += 1 } }
        subscript(path: String) -> Int { table.withLock { $0[path] ?? 0 } }
        var total: Int { table.withLock { $0.values.reduce(0, +) } }
    }

    /// /fresh/...: fresh for ten minutes; /etag: always revalidated, 304 on a match;
    /// /nostore: never kept.
    private static func server(_ hits: Hits) throws -> ScriptedServer {
        try ScriptedServer { connection in
            while let request = try? connection.readRequest(timeout: 10) {
                hits.add(request.target)
                let body = "body of \(request.target)"
                if request.target == "/etag" {
                    let matched = request.headers.contains { $0.0.lowercased() == "if-none-match" && $0.1 == "\"e1\"" }
                    try connection.write(matched
                        ? "HTTP/1.1 304 Not Modified\r\nETag: \"e1\"\r\nCache-Control: no-cache\r\n\r\n"
                        : ScriptedResponse.text(body, headers: [("ETag", "\"e1\""), ("Cache-Control", "no-cache")]))
                } else if request.target == "/nostore" {
                    try connection.write(ScriptedResponse.text(body, headers: [("Cache-Control", "no-store")]))
                } else {
                    try connection.write(ScriptedResponse.text(body, headers: [("Cache-Control", "max-age=600")]))
                }
            }
        }
    }

    /// The "cache" of each record, by path (the last record of a path listed twice wins).
    private static func cacheFields(_ text: String) -> [String: [String]] {
        var byPath: [String: [String]] = [:]
        for line in text.split(separator: "\n") {
            guard let record = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let url = record["url"] as? String else { continue }
            byPath[URL(string: url)!.path, default: []].append(record["cache"] as? String ?? "null")
        }
        return byPath
    }

    private static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("uvfetch-cache-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func aSecondRunIsAnsweredFromTheCacheKeptOnDisk() throws {
        let hits = Hits()
        let server = try Self.server(hits)
        defer { server.stop() }
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let cache = scratch.appendingPathComponent("cache").path
        let base = "http://127.0.0.1:\(server.port)"
        let urls = ["/fresh/a", "/etag", "/nostore"].map { base + $0 }

        let first = try runUVFetch(["--cache", cache, "--jsonl", "-", "--concurrency", "1"] + urls)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(Self.cacheFields(first.stdout) == ["/fresh/a": ["miss"], "/etag": ["miss"], "/nostore": ["miss"]])

        let second = try runUVFetch(["--cache", cache, "--jsonl", "-", "--concurrency", "1"] + urls + [base + "/fresh/a"])
        #expect(second.status == 0, "\(second.stderr)")
        // The duplicate is fetched as often as listed: from the cache both times.
        #expect(Self.cacheFields(second.stdout) == ["/fresh/a": ["hit", "hit"], "/etag": ["revalidated"], "/nostore": ["miss"]])
        #expect(hits["/fresh/a"] == 1)
        #expect(hits["/etag"] == 2)
        #expect(hits["/nostore"] == 2)
        // A no-store body never reached the disk.
        let bodies = try FileManager.default.contentsOfDirectory(atPath: cache + "/bodies")
        #expect(bodies.count == 2)
        for name in bodies {
            let text = try String(contentsOfFile: cache + "/bodies/" + name, encoding: .utf8)
            #expect(!text.contains("nostore"))
        }
    }

    @Test func theModesDecideBetweenTheCacheAndTheNetwork() throws {
        let hits = Hits()
        let server = try Self.server(hits)
        defer { server.stop() }
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let cache = scratch.appendingPathComponent("cache").path
        let url = "http://127.0.0.1:\(server.port)/fresh/m"

        let offline = try runUVFetch(["--cache", cache, "--cache-mode", "only-if-cached", "--jsonl", "-", url])
        #expect(offline.status != 0)
        #expect(offline.stdout.contains("\"resourceUnavailable\""))
        #expect(hits.total == 0)

        _ = try runUVFetch(["--cache", cache, "--cache-mode", "force-cache", url])
        #expect(hits.total == 1)
        let reload = try runUVFetch(["--cache", cache, "--cache-mode", "reload", "--jsonl", "-", url])
        #expect(Self.cacheFields(reload.stdout)["/fresh/m"] == ["bypass"])
        #expect(hits.total == 2)
        let noCache = try runUVFetch(["--cache", cache, "--cache-mode", "no-cache", "--jsonl", "-", url])
        // Revalidated, but the stored response has no validator: fetched again in full.
        #expect(Self.cacheFields(noCache.stdout)["/fresh/m"] == ["miss"])
        #expect(hits.total == 3)
        let stored = try runUVFetch(["--cache", cache, "--cache-mode", "only-if-cached", "--jsonl", "-", url])
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(Self.cacheFields(stored.stdout)["/fresh/m"] == ["hit"])
        #expect(hits.total == 3)

        let refused = try runUVFetch(["--cache-mode", "no-cache", url])
        #expect(refused.status != 0 && refused.stderr.contains("--cache-mode needs --cache"))
    }

    @Test func twoProcessesShareOneCacheDirectory() throws {
        let hits = Hits()
        let server = try Self.server(hits)
        defer { server.stop() }
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let cache = scratch.appendingPathComponent("cache").path
        let list = scratch.appendingPathComponent("urls.txt")
        try (0..<300).map { "http://127.0.0.1:\(server.port)/fresh/\($0)" }.joined(separator: "\n").write(to: list, atomically: true, encoding: .utf8)

        let results = Mutex<[UVFetchResult]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            if let result = try? runUVFetch(["--cache", cache, "-i", list.path, "--jsonl", "-", "--concurrency", "16"]) {
                results.withLock { $0.append(result) }
            }
        }
        let both = results.withLock { $0 }
        #expect(both.count == 2)
        for result in both {
            #expect(result.status == 0, "\(result.stderr)")
            #expect(Self.cacheFields(result.stdout).count == 300)
        }
        // Each URL reached the server at most twice (once per process), and the third run
        // finds every one of them.
        #expect(hits.total <= 600)
        let third = try runUVFetch(["--cache", cache, "-i", list.path, "--jsonl", "-"])
        #expect(third.status == 0)
        let thirdFields = Self.cacheFields(third.stdout)
        #expect(thirdFields.values.allSatisfy { $0 == ["hit"] }, "\(thirdFields.filter { $0.value != ["hit"] }.prefix(5)) \(third.stderr)")
        #expect(hits.total <= 600)
    }

    @Test func aDamagedEntryIsAMissNeverACrash() throws {
        let hits = Hits()
        let server = try Self.server(hits)
        defer { server.stop() }
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let cache = scratch.appendingPathComponent("cache").path
        let url = "http://127.0.0.1:\(server.port)/fresh/damaged"
        _ = try runUVFetch(["--cache", cache, url])
        let bodies = try FileManager.default.contentsOfDirectory(atPath: cache + "/bodies")
        let file = try #require(bodies.first)
        try Data("garbage of another length".utf8).write(to: URL(fileURLWithPath: cache + "/bodies/" + file))
        let again = try runUVFetch(["--cache", cache, "--jsonl", "-", url])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(Self.cacheFields(again.stdout)["/fresh/damaged"] == ["miss"])
        #expect(again.stdout.contains("\"bytes\":22"))
        #expect(hits.total == 2)
        // A damaged index: the run starts from an empty cache.
        try Data(repeating: 0x55, count: 4096).write(to: URL(fileURLWithPath: cache + "/index.sqlite"))
        try? FileManager.default.removeItem(atPath: cache + "/index.sqlite-wal")
        try? FileManager.default.removeItem(atPath: cache + "/index.sqlite-shm")
        let fresh = try runUVFetch(["--cache", cache, "--jsonl", "-", url])
        #expect(fresh.status == 0, "\(fresh.stderr)")
        #expect(Self.cacheFields(fresh.stdout)["/fresh/damaged"] == ["miss"])
    }
}
