import NIOCore
import PostgresNIO

/// The worker's one statement: records the results it has, claims the next URLs, and extends
/// or releases its other leases, atomically, in one round trip, so that a batch of URLs costs
/// one statement in steady state (its claim carries the previous batch's results).
///
/// Why each URL gets exactly one result: a result is stored only together with the update that
/// finishes its URL, and that update matches only a row still `leased` by this worker. A worker
/// whose lease expired and was claimed by another (its `lease_owner` changed) stores nothing;
/// the primary key on `uvfetch_results.url_id` would refuse a second row all the same. The
/// statement is one transaction, so a result is never stored without its URL finished, nor the
/// reverse, and repeating it after a lost connection changes nothing more.
///
/// Why a claim is never orphaned: the database may commit a statement whose answer is then
/// lost (a network blip, a failover), and the worker sends it again on a new connection. The
/// claim carries a token the worker chose before sending it (`claimToken`), stored with every
/// row it claims; the statement first takes the rows this worker already holds under that
/// token, so the second sending gets the batch the first claimed, not another one beside it.
/// Results already stored by this worker count as stored, so that the second sending does not
/// report them as taken over.
struct QueueExchange: Sendable {
    /// One finished URL.
    struct Result: Sendable {
        var id: Int64
        /// The JSON Lines record, without its newline.
        var record: String
        var status: Int?
        var succeeded: Bool
        /// The error's text for `last_error`; nil on success.
        var error: String?
    }

    /// One URL claimed.
    struct Claim: Sendable {
        var id: Int64
        /// The input line's bytes, as pushed.
        var url: [UInt8]
        /// Claims so far, this one included.
        var attempts: Int
        /// The error an earlier worker recorded, if any (for a URL abandoned after `maxClaims`).
        var lastError: String?
    }

    /// What the statement did.
    struct Outcome: Sendable {
        var claimed: [Claim] = []
        /// Results stored: fewer than sent when a lease was lost meanwhile.
        var stored = 0
        /// Other leases of this worker extended.
        var extended = 0
        /// Leases handed back (`release`).
        var released = 0
        /// Whether, having claimed fewer than asked, other URLs are still pending or leased by
        /// other workers (so the queue is not finished yet).
        var othersOutstanding = false
    }

    var owner: String
    var leaseSeconds: Double
    var results: [Result] = []
    /// URLs to claim; 0 claims none.
    var claimLimit = 0
    /// Extend every other lease of this worker.
    var extend = false
    /// Hand every other lease of this worker back (pending, its claim not counted).
    var release = false
    /// Unique among this worker's statements: marks the rows this one claims, so that the same
    /// statement sent again finds them (see the type's comment).
    var claimToken: Int64 = 0
    /// The leases `extend` extends: the claimed URLs the worker still expects a record for. A
    /// lease it holds without knowing it (claimed by a statement whose answer it never got) is
    /// left to expire, so that some claim takes it over, rather than kept forever.
    var held: [Int64] = []

    // The CTEs' order does not matter to PostgreSQL (all see one snapshot; data-modifying ones
    // all run); each row is touched by one of them only: results ($4) are excluded from the
    // claim, extension and release, the rows of this claim's token (`again`) from the claim of
    // expired leases, and the claim's expired rows from the extension, which takes only the
    // held rows ($12), never this token's. `again` is empty but when the statement is a claim
    // sent a second time, after its answer was lost: it hands back what the first sending
    // claimed, with a fresh lease, and the claim takes only what is missing from the batch.
    static let sql = """
        WITH input AS (
            SELECT * FROM unnest($4::bigint[], $5::text[], $6::integer[], $7::boolean[], $8::text[])
                AS r(id, record, status, ok, error)
        ), finished AS (
            UPDATE uvfetch_urls AS u
            SET state = CASE WHEN r.ok THEN 'done' ELSE 'failed' END, lease_owner = NULL, lease_expires_at = NULL,
                claim_token = NULL, last_error = NULLIF(r.error, ''), updated_at = now()
            FROM input AS r
            WHERE u.id = r.id AND u.state = 'leased' AND u.lease_owner = $1::text
            RETURNING u.id
        ), stored AS (
            INSERT INTO uvfetch_results (url_id, record, status, ok, worker)
            SELECT r.id, r.record, NULLIF(r.status, -1), r.ok, $1::text FROM input AS r JOIN finished USING (id)
            ON CONFLICT (url_id) DO NOTHING
            RETURNING url_id
        ), stored_before AS (
            SELECT url_id FROM uvfetch_results WHERE url_id = ANY($4::bigint[]) AND worker = $1::text
        ), again AS (
            UPDATE uvfetch_urls SET lease_expires_at = now() + make_interval(secs => $2::float8)
            WHERE $3::integer > 0 AND state = 'leased' AND lease_owner = $1::text AND claim_token = $11::bigint
                AND NOT (id = ANY($4::bigint[]))
            RETURNING id, url, attempts, last_error
        ), expired AS (
            SELECT id FROM uvfetch_urls
            WHERE state = 'leased' AND lease_expires_at < now() AND NOT (id = ANY($4::bigint[]))
                AND (lease_owner IS DISTINCT FROM $1::text OR claim_token IS DISTINCT FROM $11::bigint)
            ORDER BY lease_expires_at LIMIT greatest(0, $3::integer - (SELECT count(*) FROM again))
            FOR UPDATE SKIP LOCKED
        ), fresh AS (
            SELECT id FROM uvfetch_urls WHERE state = 'pending'
            ORDER BY id LIMIT greatest(0, $3::integer - (SELECT count(*) FROM again) - (SELECT count(*) FROM expired))
            FOR UPDATE SKIP LOCKED
        ), claimed AS (
            UPDATE uvfetch_urls AS u
            SET state = 'leased', lease_owner = $1::text, lease_expires_at = now() + make_interval(secs => $2::float8),
                claim_token = $11::bigint, attempts = u.attempts + 1, updated_at = now()
            WHERE u.id IN (SELECT id FROM expired UNION ALL SELECT id FROM fresh)
            RETURNING u.id, u.url, u.attempts, u.last_error
        ), granted AS (
            SELECT * FROM again UNION ALL SELECT * FROM claimed
        ), extended AS (
            UPDATE uvfetch_urls SET lease_expires_at = now() + make_interval(secs => $2::float8)
            WHERE $9::boolean AND state = 'leased' AND lease_owner = $1::text AND id = ANY($12::bigint[])
                AND NOT (id = ANY($4::bigint[])) AND id NOT IN (SELECT id FROM expired)
            RETURNING id
        ), released AS (
            UPDATE uvfetch_urls
            SET state = 'pending', lease_owner = NULL, lease_expires_at = NULL, claim_token = NULL,
                attempts = greatest(attempts - 1, 0), updated_at = now()
            WHERE $10::boolean AND state = 'leased' AND lease_owner = $1::text AND NOT (id = ANY($4::bigint[]))
            RETURNING id
        )
        SELECT 0 AS kind, id, url, attempts, last_error FROM granted
        UNION ALL
        SELECT 1, (SELECT count(*) FROM stored) + (SELECT count(*) FROM stored_before), NULL,
            (SELECT count(*) FROM extended)::integer, (SELECT count(*) FROM released)::text
        UNION ALL
        SELECT 2, NULL, NULL, NULL, NULL
        WHERE $3::integer > 0 AND (SELECT count(*) FROM granted) < $3::integer
            AND (EXISTS (SELECT 1 FROM uvfetch_urls WHERE state = 'pending' AND id NOT IN (SELECT id FROM claimed))
                 OR EXISTS (SELECT 1 FROM uvfetch_urls WHERE state = 'leased' AND lease_owner <> $1::text))
        """

    var query: PostgresQuery {
        var binds = PostgresBindings(capacity: 12)
        binds.append(owner)
        binds.append(leaseSeconds)
        binds.append(claimLimit)
        binds.append(results.map(\.id))
        binds.append(results.map(\.record))
        binds.append(results.map { $0.status ?? -1 })
        binds.append(results.map(\.succeeded))
        binds.append(results.map { $0.error ?? "" })
        binds.append(extend)
        binds.append(release)
        binds.append(claimToken)
        binds.append(held)
        return PostgresQuery(unsafeSQL: Self.sql, binds: binds)
    }

    /// Sends the statement (retried after a lost connection unless `retries` is false: see the
    /// type's comment).
    func send(on database: QueueDatabase, retries: Bool = true) throws(QueueError) -> Outcome {
        let query = self.query
        return try database.run("the worker's statement", retries: retries) { session in
            var outcome = Outcome()
            let rows = try await session.query(query)
            for try await (kind, id, url, attempts, text) in rows.decode((Int, Int64?, ByteBuffer?, Int?, String?).self) {
                switch kind {
                case 0:
                    outcome.claimed.append(Claim(id: id ?? 0, url: url.map { Array($0.readableBytesView) } ?? [],
                                                 attempts: attempts ?? 0, lastError: text))
                case 1:
                    outcome.stored = Int(id ?? 0)
                    outcome.extended = attempts ?? 0
                    outcome.released = text.flatMap { Int($0) } ?? 0
                default:
                    outcome.othersOutstanding = true
                }
            }
            outcome.claimed.sort { $0.id < $1.id }
            return outcome
        }
    }
}
