import Foundation
import Testing

/// `uvfetch queue ... | head -1` and `uvfetch worker | head -1`: when the reader of standard
/// output goes away, each command ends as `uvfetch fetch` does (README, exit status): killed by
/// SIGPIPE, silent, after a clean stop; or, when SIGPIPE was ignored by whoever started it,
/// with "write error on standard output: Broken pipe" and exit 23.
@Suite(.tags(.postgres), .serialized, .enabled(if: PostgresCluster.isInstalled, "PostgreSQL is not installed (scripts/install-deps.sh)"))
struct ClosedPipeTests {
    /// A queue with `count` results of about 400 bytes, far more than a pipe holds, so that
    /// `queue results` is still writing when the pipe is closed.
    private func queueWithResults(_ count: Int) throws -> (cluster: PostgresCluster, db: String) {
        let cluster = try SharedCluster.get()
        let db = try cluster.makeDatabase()
        let initialized = try uvfetch(["queue", "init", "--db", db])
        guard initialized.status == 0 else { throw ClusterError("queue init: \(initialized.stderr)") }
        try cluster.psql(db, """
            WITH urls AS (
                INSERT INTO uvfetch_urls (url, state) SELECT convert_to('http://127.0.0.1:1/r/' || g, 'UTF8'), 'done'
                FROM generate_series(1, \(count)) AS g RETURNING id, url)
            INSERT INTO uvfetch_results (url_id, record, status, ok, worker)
            SELECT id, '{"url":"' || convert_from(url, 'UTF8') || '","padding":"' || repeat('x', 360) || '"}', 200, true, 'test'
            FROM urls
            """)
        return (cluster, db)
    }

    @Test func queueResultsIntoAPipeClosedAfterOneLineDiesBySIGPIPESilently() throws {
        let (_, db) = try queueWithResults(2_000)
        let run = try runWithClosingPipe(["queue", "results", "--db", db], readingLines: 1, ignoringSIGPIPE: false)
        #expect(run.lines.count == 1 && run.lines[0].hasPrefix("{\"url\":\"http://127.0.0.1:1/r/1\""), "\(run.lines)")
        #expect(run.signal == SIGPIPE, "exit \(run.exitStatus.map(String.init) ?? "-"): \(run.stderr)")
        #expect(run.stderr.isEmpty, "\(run.stderr)")
    }

    @Test func queueResultsIntoAClosedPipeWithSIGPIPEIgnoredExits23() throws {
        let (_, db) = try queueWithResults(2_000)
        let run = try runWithClosingPipe(["queue", "results", "--db", db], readingLines: 1, ignoringSIGPIPE: true)
        #expect(run.lines.count == 1)
        #expect(run.exitStatus == 23, "signal \(run.signal.map(String.init) ?? "-"): \(run.stderr)")
        #expect(run.stderr == "uvfetch: write error on standard output: Broken pipe\n", "\(run.stderr)")
    }

    /// The commands that write a line or a few: into a pipe closed before they write.
    @Test(arguments: [false, true])
    func queueInitPushAndStatusIntoAClosedPipe(ignoringSIGPIPE: Bool) throws {
        let (_, db) = try queueWithResults(1)
        let list = try temporaryFile("urls.txt", Data("http://127.0.0.1:1/pushed\n".utf8))
        for arguments in [["queue", "init", "--db", db], ["queue", "push", "--db", db, "-i", list.path],
                          ["queue", "status", "--db", db], ["queue", "status", "--json", "--db", db]] {
            let run = try runWithClosingPipe(arguments, readingLines: 0, ignoringSIGPIPE: ignoringSIGPIPE)
            if ignoringSIGPIPE {
                #expect(run.exitStatus == 23, "\(arguments): signal \(run.signal.map(String.init) ?? "-"): \(run.stderr)")
                #expect(run.stderr == "uvfetch: write error on standard output: Broken pipe\n", "\(arguments): \(run.stderr)")
            } else {
                #expect(run.signal == SIGPIPE, "\(arguments): exit \(run.exitStatus.map(String.init) ?? "-"): \(run.stderr)")
                #expect(run.stderr.isEmpty, "\(arguments): \(run.stderr)")
            }
        }
    }

    /// A worker's line per URL into a closed pipe: it stops, records what finished and hands
    /// the rest back before it dies (or exits 23), so that no URL is left leased to it.
    @Test(arguments: [false, true])
    func aWorkerWhoseOutputIsClosedHandsItsLeasesBackFirst(ignoringSIGPIPE: Bool) throws {
        let fixture = try QueueFixture(count: 400)
        let run = try runWithClosingPipe(["worker", "--db", fixture.db, "--rate-per-host", "200"], readingLines: 0,
                                         ignoringSIGPIPE: ignoringSIGPIPE)
        if ignoringSIGPIPE {
            #expect(run.exitStatus == 23, "signal \(run.signal.map(String.init) ?? "-"): \(run.stderr)")
            #expect(run.stderr.contains("uvfetch: write error on standard output: Broken pipe\n"), "\(run.stderr)")
            #expect(run.stderr.contains("released"), "\(run.stderr)")
        } else {
            #expect(run.signal == SIGPIPE, "exit \(run.exitStatus.map(String.init) ?? "-"): \(run.stderr)")
            #expect(run.stderr.isEmpty, "\(run.stderr)")
        }
        let states = try fixture.states()
        #expect(states["leased"] == nil, "\(states)")
        #expect((states["pending"] ?? 0) > 0, "the worker stopped early: \(states)")
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_results") == states["done"] ?? 0)
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_urls WHERE lease_owner IS NOT NULL") == 0)
    }
}
