import NIOCore
import PostgresNIO
import UVFetchCore

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
///
/// A URL pushed again (`queue push --refetch`) is fetched again, its new result replacing the
/// old one (still only by the worker that holds its lease); a result with a response also
/// replaces the URL's validators and capture, which the next claim hands out with the URL, so
/// that any worker asks for it conditionally (`ValidatorLookup`). A result without a response
/// says nothing of the resource and leaves them.
///
/// A worker with `--warc --warc-dedup` adds the payloads' part (`Payloads`): the originals it
/// archived since its last statement, and the ones other workers archived that it has not seen.
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
        /// What the record says of its response, kept with the URL (`validators(of:)`).
        var validators: RecordedValidators.Validators? = nil
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
        /// The validators of the URL's last response, if it had any: sent with the request.
        var validators: RecordedValidators.Validators? = nil
    }

    /// What a record with a response leaves with its URL: its validators and where it was
    /// archived, each possibly nil; nil for a record without a response.
    static func validators(of record: FetchRecord) -> RecordedValidators.Validators? {
        guard record.status != nil else { return nil }
        return RecordedValidators.Validators(etag: record.etag, lastModified: record.lastModified, capture: record.capture,
                                             capturedURL: record.capture == nil ? nil : record.effectiveURL)
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
        /// Other workers' originals after `Payloads.after`, and the highest serial of the rows
        /// read (this worker's own among them), with `payloads`.
        var payloads: [ArchivedPayload] = []
        var payloadSerial: Int64?
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
    /// With `--warc --warc-dedup`: the originals to share and the rows to bring back.
    var payloads: Payloads?

    // The CTEs' order does not matter to PostgreSQL (all see one snapshot; data-modifying ones
    // all run); each row is touched by one of them only: results ($4) are excluded from the
    // claim, extension and release, the rows of this claim's token (`again`) from the claim of
    // expired leases, and the claim's expired rows from the extension, which takes only the
    // held rows ($12), never this token's. `again` is empty but when the statement is a claim
    // sent a second time, after its answer was lost: it hands back what the first sending
    // claimed, with a fresh lease, and the claim takes only what is missing from the batch.
    static let sql = statement(sharingPayloads: false)
    /// `sql` with the payloads' parts (`Payloads`): only for a worker that shares them, whose
    /// queue has `uvfetch_payloads`.
    static let sharingSQL = statement(sharingPayloads: true)

    private static func statement(sharingPayloads: Bool) -> String {
        """
        WITH input AS (
            SELECT * FROM unnest($4::bigint[], $5::text[], $6::integer[], $7::boolean[], $8::text[], $13::boolean[],
                                 $14::text[], $15::text[], $16::text[], $17::text[], $18::text[])
                AS r(id, record, status, ok, error, answered, etag, last_modified, capture_record_id, capture_date, captured_url)
        ), finished AS (
            UPDATE uvfetch_urls AS u
            SET state = CASE WHEN r.ok THEN 'done' ELSE 'failed' END, lease_owner = NULL, lease_expires_at = NULL,
                claim_token = NULL, last_error = NULLIF(r.error, ''), updated_at = now(),
                etag = CASE WHEN r.answered THEN NULLIF(r.etag, '') ELSE u.etag END,
                last_modified = CASE WHEN r.answered THEN NULLIF(r.last_modified, '') ELSE u.last_modified END,
                capture_record_id = CASE WHEN r.answered THEN NULLIF(r.capture_record_id, '') ELSE u.capture_record_id END,
                capture_date = CASE WHEN r.answered THEN NULLIF(r.capture_date, '') ELSE u.capture_date END,
                captured_url = CASE WHEN r.answered THEN NULLIF(r.captured_url, '') ELSE u.captured_url END
            FROM input AS r
            WHERE u.id = r.id AND u.state = 'leased' AND u.lease_owner = $1::text
            RETURNING u.id
        ), stored AS (
            -- A URL fetched again (pushed with --refetch) replaces its result: only rows this
            -- statement finished get here, so sending it again replaces nothing.
            INSERT INTO uvfetch_results (url_id, record, status, ok, worker)
            SELECT r.id, r.record, NULLIF(r.status, -1), r.ok, $1::text FROM input AS r JOIN finished USING (id)
            ON CONFLICT (url_id) DO UPDATE
                SET record = EXCLUDED.record, status = EXCLUDED.status, ok = EXCLUDED.ok, worker = EXCLUDED.worker,
                    recorded_at = now()
            RETURNING url_id
        ), stored_before AS (
            SELECT url_id FROM uvfetch_results WHERE url_id = ANY($4::bigint[]) AND worker = $1::text
                AND url_id NOT IN (SELECT id FROM finished)
        ), again AS (
            UPDATE uvfetch_urls SET lease_expires_at = now() + make_interval(secs => $2::float8)
            WHERE $3::integer > 0 AND state = 'leased' AND lease_owner = $1::text AND claim_token = $11::bigint
                AND NOT (id = ANY($4::bigint[]))
            RETURNING id, url, attempts, last_error, etag, last_modified, capture_record_id, capture_date, captured_url
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
            RETURNING u.id, u.url, u.attempts, u.last_error, u.etag, u.last_modified, u.capture_record_id, u.capture_date,
                u.captured_url
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
        )\(sharingPayloads ? Payloads.tables : "")
        SELECT 0 AS kind, id, url, attempts, last_error, etag, last_modified, capture_record_id, capture_date, captured_url
        FROM granted
        UNION ALL
        SELECT 1, (SELECT count(*) FROM stored) + (SELECT count(*) FROM stored_before), NULL,
            (SELECT count(*) FROM extended)::integer, (SELECT count(*) FROM released)::text, NULL, NULL, NULL, NULL, NULL
        UNION ALL
        SELECT 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
        WHERE $3::integer > 0 AND (SELECT count(*) FROM granted) < $3::integer
            AND (EXISTS (SELECT 1 FROM uvfetch_urls WHERE state = 'pending' AND id NOT IN (SELECT id FROM claimed))
                 OR EXISTS (SELECT 1 FROM uvfetch_urls WHERE state = 'leased' AND lease_owner <> $1::text))\(sharingPayloads ? Payloads.rows : "")
        """
    }

    var query: PostgresQuery {
        var binds = PostgresBindings(capacity: payloads == nil ? 18 : 23)
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
        // What each result leaves with its URL; "" for none (a text[] of Swift optionals has no
        // encoding here), made NULL again by the statement.
        binds.append(results.map { $0.validators != nil })
        binds.append(results.map { $0.validators?.etag ?? "" })
        binds.append(results.map { $0.validators?.lastModified ?? "" })
        binds.append(results.map { $0.validators?.capture?.recordID ?? "" })
        binds.append(results.map { $0.validators?.capture?.date ?? "" })
        binds.append(results.map { $0.validators?.capturedURL ?? "" })
        guard let payloads else { return PostgresQuery(unsafeSQL: Self.sql, binds: binds) }
        payloads.bind(to: &binds)
        return PostgresQuery(unsafeSQL: Self.sharingSQL, binds: binds)
    }

    /// Sends the statement (retried after a lost connection unless `retries` is false: see the
    /// type's comment).
    func send(on database: QueueDatabase, retries: Bool = true) throws(QueueError) -> Outcome {
        let query = self.query
        return try database.run("the worker's statement", retries: retries) { session in
            var outcome = Outcome()
            let rows = try await session.query(query)
            typealias Row = (Int, Int64?, ByteBuffer?, Int?, String?, String?, String?, String?, String?, String?)
            for try await (kind, id, url, attempts, text, etag, lastModified, captureID, captureDate, capturedURL)
                in rows.decode(Row.self) {
                switch kind {
                case 0:
                    var claim = Claim(id: id ?? 0, url: url.map { Array($0.readableBytesView) } ?? [], attempts: attempts ?? 0,
                                      lastError: text)
                    if etag != nil || lastModified != nil {
                        let capture = captureID.map { FetchRecord.Capture(date: captureDate ?? "", recordID: $0) }
                        claim.validators = .init(etag: etag, lastModified: lastModified, capture: capture, capturedURL: capturedURL)
                    }
                    outcome.claimed.append(claim)
                case 1:
                    outcome.stored = Int(id ?? 0)
                    outcome.extended = attempts ?? 0
                    outcome.released = text.flatMap { Int($0) } ?? 0
                case 2:
                    outcome.othersOutstanding = true
                case Payloads.originalKind:
                    outcome.payloads.append(ArchivedPayload(digest: text ?? "", recordID: etag ?? "", targetURI: lastModified ?? "",
                                                            date: captureID ?? ""))
                default:
                    outcome.payloadSerial = id
                }
            }
            outcome.claimed.sort { $0.id < $1.id }
            return outcome
        }
    }
}
