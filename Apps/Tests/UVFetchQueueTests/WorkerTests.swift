import Foundation
import Testing

/// `uvfetch worker` as a child process against a real PostgreSQL cluster and a
/// LoopbackHTTPServer: every URL gets exactly one result, whatever happens to the workers.
@Suite(.tags(.postgres), .serialized, .enabled(if: PostgresCluster.isInstalled, "PostgreSQL is not installed (scripts/install-deps.sh)"))
struct WorkerTests {
    @Test func oneWorkerRecordsEveryURLOnceAsJSONLinesWouldWriteIt() throws {
        let fixture = try QueueFixture(count: 2_000, failEvery: 200)
        let worker = try uvfetch(["worker", "--db", fixture.db, "-q", "--batch-size", "100"])
        // Ten 404s: some URLs failed.
        #expect(worker.status == 1, "\(worker.stderr)")
        #expect(try fixture.states() == ["done": 1_990, "failed": 10])
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_results") == 2_000)
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_urls WHERE lease_owner IS NOT NULL") == 0)
        // At most 2 statements per 100 URLs, connecting included.
        let perURL = try #require(QueueFixture.roundTripsPerURL(worker.stderr), "\(worker.stderr)")
        #expect(perURL <= 0.02, "\(worker.stderr)")
        #expect(worker.stderr.contains("2000 claimed, 2000 recorded"), "\(worker.stderr)")

        // The same URLs through `uvfetch --jsonl`: the same records but for the times taken.
        let (lines, results) = try fixture.results()
        #expect(lines.count == 2_000)
        #expect(lines.map { ($0 as NSString).range(of: "\"url\":\"").location }.allSatisfy { $0 != NSNotFound })
        let direct = try uvfetch(["-q", "--jsonl", "-", "-i", fixture.list.path])
        let directLines = direct.stdout.split(separator: "\n")
        #expect(directLines.count == 2_000)
        for line in directLines {
            let expected = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            let url = expected["url"] as! String
            guard let got = results[url] else {
                Issue.record("no result for \(url)")
                continue
            }
            #expect(Set(got.keys) == Set(expected.keys))
            for key in expected.keys where key != "timings" {
                #expect(got[key] as? NSObject == expected[key] as? NSObject, "\(url) \(key)")
            }
            #expect(Set((got["timings"] as! [String: Any]).keys) == Set((expected["timings"] as! [String: Any]).keys))
        }
        // Pushed order: the results come out in it.
        #expect(lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["url"] as? String } == fixture.urls)
        let status = try uvfetch(["queue", "status", "--db", fixture.db])
        #expect(status.stdout.hasPrefix("pending 0\nleased 0\ndone 1990\nfailed 10\ntotal 2000\n"), "\(status.stdout)")
    }

    @Test func twoWorkersAtOnceNeverRecordAURLTwice() throws {
        let fixture = try QueueFixture(count: 3_000)
        // Small batches and a rate limit, so that both are claiming at the same time.
        let arguments = ["worker", "--db", fixture.db, "-q", "--batch-size", "20", "--rate-per-host", "1000"]
        let first = try UVFetchChild(arguments), second = try UVFetchChild(arguments)
        #expect(first.wait(timeout: 120) && second.wait(timeout: 120))
        #expect(first.status == 0 && second.status == 0, "\(first.stderr) \(second.stderr)")
        #expect(try fixture.states() == ["done": 3_000])
        #expect(try fixture.count("SELECT count(DISTINCT url_id) FROM uvfetch_results") == 3_000)
        #expect(try fixture.results().lines.count == 3_000)
        // Each claimed a share, and between them recorded each URL once.
        let recorded = [first.stderr, second.stderr].map { text -> Int in
            guard let range = text.range(of: #"\d+ recorded"#, options: .regularExpression) else { return -1 }
            return Int(text[range].split(separator: " ")[0]) ?? -1
        }
        #expect(recorded.reduce(0, +) == 3_000, "\(first.stderr) \(second.stderr)")
        #expect(recorded.allSatisfy { $0 > 0 }, "\(recorded)")
    }

    @Test func aKilledWorkersURLsAreTakenOverOnceItsLeasesExpire() throws {
        let fixture = try QueueFixture(count: 1_000)
        // 200 a second: five seconds of work, killed after the first hundred are recorded.
        let doomed = try UVFetchChild(["worker", "--db", fixture.db, "-q", "--lease", "3", "--rate-per-host", "200"])
        #expect(try waitUntil(timeout: 60) { try fixture.count("SELECT count(*) FROM uvfetch_results") >= 100 })
        doomed.signal(SIGKILL)
        doomed.wait(timeout: 10)
        let leftLeased = try fixture.count("SELECT count(*) FROM uvfetch_urls WHERE state = 'leased'")
        #expect(leftLeased > 0, "the killed worker held leases")
        let successor = try uvfetch(["worker", "--db", fixture.db, "-q", "--lease", "3", "--poll", "0.2"])
        #expect(successor.status == 0, "\(successor.stderr)")
        #expect(try fixture.states() == ["done": 1_000])
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_results") == 1_000)
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_urls WHERE lease_owner IS NOT NULL OR lease_expires_at IS NOT NULL") == 0)
        // The killed worker's leased URLs were claimed a second time.
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_urls WHERE attempts = 2") >= leftLeased)
        #expect(try fixture.results().lines.count == 1_000)
    }

    @Test func aURLWhoseWorkersKeepDyingEndsFailedWithItsLastError() throws {
        let fixture = try QueueFixture(count: 5)
        // As if three workers had claimed it and died: leased, expired, claimed three times.
        let poison = fixture.urls[2]
        try fixture.cluster.psql(fixture.db, """
            UPDATE uvfetch_urls SET state = 'leased', lease_owner = 'gone:1:1', lease_expires_at = now() - interval '1 second',
                attempts = 3, last_error = 'timedOut: the request timed out'
            WHERE url = convert_to('\(poison)', 'UTF8')
            """)
        let worker = try uvfetch(["worker", "--db", fixture.db, "-q", "--max-claims", "3"])
        #expect(worker.status == 1, "\(worker.stderr)")
        #expect(worker.stderr.contains("1 abandoned after too many claims"), "\(worker.stderr)")
        #expect(try fixture.states() == ["done": 4, "failed": 1])
        let record = try #require(try fixture.results().byURL[poison])
        let error = try #require(record["error"] as? [String: Any])
        #expect(error["code"] as? String == "abandoned")
        #expect((error["message"] as? String)?.contains("claimed 3 times") == true, "\(error)")
        #expect((error["message"] as? String)?.contains("last error: timedOut: the request timed out") == true, "\(error)")
        #expect(record["status"] is NSNull)
    }

    @Test(arguments: [(SIGTERM, "terminated", Int32(143)), (SIGINT, "interrupted", Int32(130))])
    func aStoppedWorkerRecordsWhatFinishedAndHandsTheRestBack(signal: Int32, word: String, status: Int32) throws {
        let fixture = try QueueFixture(count: 1_000)
        let worker = try UVFetchChild(["worker", "--db", fixture.db, "-q", "--rate-per-host", "100", "--grace", "1"])
        #expect(try waitUntil(timeout: 60) { try fixture.count("SELECT count(*) FROM uvfetch_results") >= 50 })
        worker.signal(signal)
        #expect(worker.wait(timeout: 30))
        #expect(worker.status == status, "\(worker.stderr)")
        #expect(worker.stderr.contains("uvfetch: \(word)\n"), "\(worker.stderr)")
        #expect(worker.stderr.contains("released"), "\(worker.stderr)")
        let states = try fixture.states()
        #expect(states["leased"] == nil, "\(states)")
        #expect((states["done"] ?? 0) + (states["pending"] ?? 0) == 1_000, "\(states)")
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_results") == states["done"])
        // Handed back unharmed: a released URL's claim is not counted against it.
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_urls WHERE state = 'pending' AND attempts <> 0") == 0)
        // Another worker finishes the queue.
        let successor = try uvfetch(["worker", "--db", fixture.db, "-q"])
        #expect(successor.status == 0, "\(successor.stderr)")
        #expect(try fixture.states() == ["done": 1_000])
        #expect(try fixture.results().lines.count == 1_000)
    }

    @Test func aWorkerExtendsItsLeasesWhileItWorks() throws {
        let fixture = try QueueFixture(count: 150)
        // Five seconds of work under a lease of two: without extensions the leases would expire
        // and the worker would claim its own URLs again (attempts 2).
        let worker = try UVFetchChild(["worker", "--db", fixture.db, "-q", "--lease", "2", "--rate-per-host", "30"])
        var expiredSeen = 0
        while worker.process.isRunning {
            expiredSeen = max(expiredSeen, try fixture.count("SELECT count(*) FROM uvfetch_urls WHERE state = 'leased' AND lease_expires_at < now()"))
            usleep(200_000)
        }
        #expect(worker.wait(timeout: 60))
        #expect(worker.status == 0, "\(worker.stderr)")
        #expect(expiredSeen == 0)
        #expect(try fixture.states() == ["done": 150])
        #expect(try fixture.count("SELECT max(attempts) FROM uvfetch_urls") == 1)
    }

    @Test func aWorkerWhoseConnectionIsKilledReconnectsAndFinishes() throws {
        let fixture = try QueueFixture(count: 600)
        let worker = try UVFetchChild(["worker", "--db", fixture.db, "-q", "--rate-per-host", "200"])
        let name = PostgresCluster.name(of: fixture.db)
        for _ in 0..<2 {
            #expect(try waitUntil(timeout: 60) { try fixture.count("SELECT count(*) FROM pg_stat_activity WHERE datname = '\(name)' AND application_name <> 'psql'") > 0 })
            try fixture.cluster.psql("postgres", "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(name)' AND application_name <> 'psql'")
            usleep(500_000)
        }
        #expect(worker.wait(timeout: 60))
        #expect(worker.status == 0, "\(worker.stderr)")
        #expect(try fixture.states() == ["done": 600])
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_results") == 600)
    }

    @Test func aFollowingWorkerFetchesURLsPushedWhileItWaits() throws {
        let fixture = try QueueFixture(count: 10)
        let worker = try UVFetchChild(["worker", "--db", fixture.db, "-q", "--follow", "--poll", "0.2"])
        #expect(try waitUntil(timeout: 60) { try fixture.count("SELECT count(*) FROM uvfetch_results") == 10 })
        // The queue is finished, and the worker still there, waiting for more.
        usleep(500_000)
        #expect(worker.process.isRunning)
        let more = try temporaryFile("more.txt", Data((10..<20).map { "http://127.0.0.1:\(fixture.port)/items/\($0)\n" }.joined().utf8))
        #expect(try uvfetch(["queue", "push", "--db", fixture.db, "-i", more.path]).status == 0)
        #expect(try waitUntil(timeout: 60) { try fixture.count("SELECT count(*) FROM uvfetch_results") == 20 })
        worker.signal(SIGTERM)
        #expect(worker.wait(timeout: 30))
        #expect(worker.status == 143, "\(worker.stderr)")
        #expect(try fixture.states() == ["done": 20])
    }

    @Test func aWorkerThatLostItsLeasesRecordsNothingForThem() throws {
        let fixture = try QueueFixture(count: 400)
        let worker = try UVFetchChild(["worker", "--db", fixture.db, "-q", "--rate-per-host", "100", "--lease", "60"])
        #expect(try waitUntil(timeout: 60) { try fixture.count("SELECT count(*) FROM uvfetch_urls WHERE state = 'leased'") > 0 })
        // Another worker (by name) takes over everything this one holds, and finishes it.
        let taken = try fixture.cluster.psql(fixture.db, """
            WITH taken AS (UPDATE uvfetch_urls SET lease_owner = 'thief:1:1' WHERE state = 'leased' RETURNING id)
            SELECT count(*) FROM taken
            """)
        let takenCount = Int(taken.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(takenCount > 0)
        try fixture.cluster.psql(fixture.db, """
            WITH finished AS (
                UPDATE uvfetch_urls SET state = 'done', lease_owner = NULL, lease_expires_at = NULL
                WHERE lease_owner = 'thief:1:1' RETURNING id)
            INSERT INTO uvfetch_results (url_id, record, status, ok, worker) SELECT id, '{"thief":true}', 200, true, 'thief:1:1' FROM finished
            """)
        #expect(worker.wait(timeout: 60))
        #expect(worker.status == 0, "\(worker.stderr)")
        #expect(worker.stderr.contains("taken over by another worker"), "\(worker.stderr)")
        #expect(try fixture.states() == ["done": 400])
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_results") == 400)
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_results WHERE worker = 'thief:1:1'") == takenCount)
    }
}
