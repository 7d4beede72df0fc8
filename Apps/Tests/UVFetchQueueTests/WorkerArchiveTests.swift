import Foundation
import Testing

/// `uvfetch worker --warc`: a worker archives what it fetches as `uvfetch --warc` does, checked
/// by warcio (PyPI, installed by scripts/install-deps.sh), a reader no one here wrote; a failed
/// archive write stops the worker and hands its unrecorded URLs back.
@Suite(.tags(.postgres), .serialized, .enabled(if: PostgresCluster.isInstalled, "PostgreSQL is not installed (scripts/install-deps.sh)"))
struct WorkerArchiveTests {
    @Test func aWorkersArchivePassesWarcioWithAResponseForEveryURL() throws {
        let fixture = try QueueFixture(count: 300)
        let directory = try temporaryFile("placeholder", Data()).deletingLastPathComponent()
        let archive = directory.appendingPathComponent("worker.warc.gz")
        let worker = try uvfetch(["worker", "--db", fixture.db, "-q", "--warc", archive.path])
        #expect(worker.status == 0, "\(worker.stderr)")
        #expect(try fixture.states() == ["done": 300])

        // warcio: every digest checks, and the index lists a 200 response per URL.
        let index = try shell("""
            command -v warcio >/dev/null || { echo "warcio is missing: run scripts/install-deps.sh (make test does)" >&2; exit 97; }
            python3 '\(warcCheck)' '\(archive.path)' || exit 98
            warcio index -f warc-type,warc-target-uri,http:status '\(archive.path)'
            """)
        #expect(index.status == 0, "warcio: \(index.stderr)")
        var responses: [String: Int] = [:]
        var types: [String: Int] = [:]
        for line in index.stdout.split(separator: "\n") {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let type = object["warc-type"] as? String else { continue }
            types[type, default: 0] += 1
            if type == "response", let uri = object["warc-target-uri"] as? String {
                responses[uri] = Int(object["http:status"] as? String ?? "")
            }
        }
        #expect(types == ["warcinfo": 1, "request": 300, "response": 300], "\(types)")
        #expect(Set(responses.keys) == Set(fixture.urls))
        #expect(responses.values.allSatisfy { $0 == 200 })
        // The warcinfo says it was a worker's, with its batch size.
        let info = try shell("gzip -dc '\(archive.path)' | head -c 2000")
        #expect(info.stdout.contains("uvfetch worker --batch-size 100"), "\(info.stdout)")
    }

    @Test func anArchiveThatCannotBeWrittenStopsTheWorkerAndLosesNoURL() throws {
        let fixture = try QueueFixture(count: 200)
        // /dev/full takes the open, then refuses the first record: nothing is claimed.
        let full = try uvfetch(["worker", "--db", fixture.db, "-q", "--warc", "/dev/full"])
        #expect(full.status == 23, "\(full.stderr)")
        #expect(full.stderr.contains("/dev/full"), "\(full.stderr)")
        #expect(try fixture.states() == ["pending": 200])
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_results") == 0)
        // A later worker with a working archive finishes the queue.
        let next = try uvfetch(["worker", "--db", fixture.db, "-q"])
        #expect(next.status == 0, "\(next.stderr)")
        #expect(try fixture.states() == ["done": 200])
    }

    @Test(.enabled(if: geteuid() == 0, "needs root to mount a small tmpfs"))
    func aDiskThatFillsMidRunStopsTheWorkerAndItsURLsGoBack() throws {
        let fixture = try QueueFixture(count: 1_000)
        let directory = try temporaryFile("placeholder", Data()).deletingLastPathComponent()
        // A tmpfs of 24 KiB in a mount namespace of the worker's own: full after a few dozen
        // exchanges, while it holds leases.
        let full = try shell("""
            mkdir '\(directory.path)/small'
            unshare -m /bin/sh -c "mount -t tmpfs -o size=24k tmpfs '\(directory.path)/small' && \
              '\(uvfetchPath)' worker --db '\(fixture.db)' -q --concurrency 4 --warc '\(directory.path)/small/a.warc.gz'; \
              status=\\$?; cp '\(directory.path)/small/a.warc.gz' '\(directory.path)/full-worker.warc.gz'; exit \\$status"
            """)
        defer { try? FileManager.default.removeItem(atPath: directory.path + "/full-worker.warc.gz") }
        #expect(full.status == 23, "\(full.stdout) \(full.stderr)")
        #expect(full.stderr.contains("No space left on device"), "\(full.stderr)")
        // Whatever it recorded is done; the rest went back to pending, none left leased.
        let states = try fixture.states()
        #expect(states["leased"] == nil, "\(states)")
        #expect((states["pending"] ?? 0) > 0, "\(states)")
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_results") == states["done"] ?? 0)
        // Every URL recorded done is in the archive: a URL is recorded only once it is archived.
        let index = try shell("python3 '\(warcCheck)' '\(directory.path)/full-worker.warc.gz' && warcio index -f warc-type,warc-target-uri '\(directory.path)/full-worker.warc.gz'")
        #expect(index.status == 0, "warcio: \(index.stderr)")
        let archived = Set(index.stdout.split(separator: "\n").compactMap { line -> String? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object["warc-type"] as? String == "response" else { return nil }
            return object["warc-target-uri"] as? String
        })
        let done = try fixture.count("SELECT count(*) FROM uvfetch_urls WHERE state = 'done' AND convert_from(url, 'UTF8') = ANY(ARRAY['\(archived.joined(separator: "','"))'])")
        #expect(done == states["done"] ?? 0, "\(done) of \(states["done"] ?? 0) done URLs archived")
        let next = try uvfetch(["worker", "--db", fixture.db, "-q"])
        #expect(next.status == 0, "\(next.stderr)")
        #expect(try fixture.states() == ["done": 1_000])
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_results") == 1_000)
    }

    /// A worker stopped and started again with the same command line continues its archive.
    /// Before, the restart emptied the file (even when it then could not reach the database):
    /// the URLs the first run archived are done in the queue and never fetched again, so their
    /// records were gone for good.
    @Test func aRestartedWorkerAppendsToItsArchive() throws {
        let fixture = try QueueFixture(count: 300)
        let directory = try temporaryFile("placeholder", Data()).deletingLastPathComponent()
        let archive = directory.appendingPathComponent("restart-\(UUID().uuidString).warc.gz")
        defer { try? FileManager.default.removeItem(at: archive) }
        let command = ["worker", "--db", fixture.db, "-q", "--rate-per-host", "100", "--grace", "1", "--warc", archive.path]
        let first = try UVFetchChild(command)
        #expect(try waitUntil(timeout: 60) { try fixture.count("SELECT count(*) FROM uvfetch_results") >= 50 })
        first.signal(SIGTERM)
        #expect(first.wait(timeout: 30))
        let afterFirst = try Data(contentsOf: archive)
        // A restart that cannot reach its database (exit 69) leaves the archive's records as they were.
        let closed = try ClosedPort()
        let unreachable = try uvfetch(["worker", "--db", "postgres://uvfetch@127.0.0.1:\(closed.port)/none", "-q", "--warc", archive.path],
                                      timeout: 30)
        #expect(unreachable.status == 69, "\(unreachable.stderr)")
        #expect(try Data(contentsOf: archive).prefix(afterFirst.count) == afterFirst)
        let second = try uvfetch(command.filter { $0 != "--rate-per-host" && $0 != "100" })
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try fixture.states() == ["done": 300])
        let index = try shell("""
            python3 '\(warcCheck)' '\(archive.path)' || exit 98
            warcio index -f warc-type,warc-target-uri '\(archive.path)'
            """)
        #expect(index.status == 0, "warcio: \(index.stderr)")
        var uris = Set<String>()
        for line in index.stdout.split(separator: "\n") {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object["warc-type"] as? String == "response", let uri = object["warc-target-uri"] as? String else { continue }
            uris.insert(uri)
        }
        #expect(uris == Set(fixture.urls), "\(uris.count) of \(fixture.urls.count) URLs archived")
    }
}

/// `warcio check`, its complaint about chunked payloads aside (Apps/Tests/Scripts/warc_check.py).
private let warcCheck = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Scripts/warc_check.py").path
