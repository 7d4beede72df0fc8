import Foundation
import Testing

/// The worker's statement when its answers go astray: a claim the database committed but whose
/// answer never came back, and leases the worker holds without knowing it. Every URL is still
/// fetched and recorded once, and no lease outlives the worker.
@Suite(.tags(.postgres), .serialized, .enabled(if: PostgresCluster.isInstalled, "PostgreSQL is not installed (scripts/install-deps.sh)"))
struct QueueExchangeTests {
    /// The worker's first claim is committed and its answer lost (the proxy closes the
    /// connection instead of passing it on); the worker sends the statement again on a new
    /// connection, which must give it the batch the first sending claimed, not another.
    @Test func aClaimWhoseAnswerWasLostIsFetchedNotLeftLeased() throws {
        let fixture = try QueueFixture(count: 300)
        let proxy = try AnswerDroppingProxy(serverPort: fixture.cluster.port, marker: "claimed AS (")
        defer { proxy.stop() }
        let worker = try uvfetch(["worker", "--db", proxy.url(for: fixture.db), "-q", "--batch-size", "50"])
        #expect(proxy.dropped == 1, "the first claim's answer was dropped")
        #expect(worker.status == 0, "\(worker.stderr)")
        #expect(try fixture.states() == ["done": 300])
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_results") == 300)
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_urls WHERE lease_owner IS NOT NULL OR lease_expires_at IS NOT NULL") == 0)
        // The lost batch was the worker's from the first sending: claimed once, not taken over.
        #expect(try fixture.count("SELECT max(attempts) FROM uvfetch_urls") == 1)
        #expect(worker.stderr.contains("300 claimed, 300 recorded"), "\(worker.stderr)")
        #expect(try fixture.results().lines.count == 300)
    }

    /// Leases the worker holds but never heard of (as a claim whose answer it lost for good
    /// would leave) are not extended: they expire, a claim takes them over, and they are
    /// fetched, instead of staying leased to the worker until it exits.
    @Test func aLeaseTheWorkerDoesNotKnowOfExpiresAndIsTakenOver() throws {
        let fixture = try QueueFixture(count: 1_500)
        // 200 a second: seven seconds of work under leases of two, the first five of them
        // claiming (the last few hundred URLs are claimed ahead), so that the claims go on
        // well after the planted leases expire. (A worker that finds nothing to claim and no
        // other worker's lease stops claiming, and would hand them back at its end instead.)
        let worker = try UVFetchChild(["worker", "--db", fixture.db, "-q", "--batch-size", "20", "--lease", "2",
                                       "--rate-per-host", "200", "--poll", "0.2"])
        #expect(try waitUntil(timeout: 60) { try fixture.count("SELECT count(*) FROM uvfetch_urls WHERE state = 'leased'") > 0 })
        let owner = try fixture.cluster.psql(fixture.db, "SELECT lease_owner FROM uvfetch_urls WHERE state = 'leased' LIMIT 1")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        // The last ten pending URLs (the claims take the first ones), leased to it behind its back.
        let planted = try fixture.cluster.psql(fixture.db, """
            WITH planted AS (
                UPDATE uvfetch_urls SET state = 'leased', lease_owner = '\(owner)', lease_expires_at = now() + interval '2 seconds',
                    attempts = 1
                WHERE state = 'pending' AND id IN (SELECT id FROM uvfetch_urls WHERE state = 'pending' ORDER BY id DESC LIMIT 10)
                RETURNING id)
            SELECT string_agg(id::text, ',') FROM planted
            """).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(planted.split(separator: ",").count == 10, "\(planted)")
        #expect(worker.wait(timeout: 120))
        #expect(worker.status == 0, "\(worker.stderr)")
        #expect(try fixture.states() == ["done": 1_500])
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_results") == 1_500)
        // Taken over once expired: claimed a second time, by this worker.
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_urls WHERE id IN (\(planted)) AND attempts = 2") == 10)
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_urls WHERE lease_owner IS NOT NULL") == 0)
    }
}
