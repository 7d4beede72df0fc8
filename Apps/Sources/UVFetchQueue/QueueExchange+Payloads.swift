import PostgresNIO
import UVFetchCore

extension QueueExchange {
    /// The payloads' part of a statement of a worker with `--warc --warc-dedup` (`FleetPayloads`):
    /// it inserts the originals this worker archived since its last statement and brings back
    /// the rows other workers added after `after`, in the same round trip as the results and
    /// the claim.
    ///
    /// Sending it again (after a lost answer) changes nothing more: an insert of a digest
    /// already there does nothing (the table keeps the first original of each payload), and the
    /// rows after `after` are the same ones, plus any added since. The inserts go in digest
    /// order, so two workers inserting some of the same digests at once wait for each other in
    /// one order, never in a deadlock.
    struct Payloads: Sendable {
        /// Originals to insert, in the order archived.
        var archived: [ArchivedPayload]
        /// The highest serial the worker has seen.
        var after: Int64

        /// The kinds of the statement's payload rows: an original, and the highest serial read.
        static let originalKind = 3
        static let serialKind = 4

        /// The CTEs, after `released`: $19 is `after`, $20 to $23 the originals' columns.
        /// `shared` reads the statement's snapshot, without this statement's own rows.
        static let tables = """
            , sharing AS (
                INSERT INTO uvfetch_payloads (digest, record_id, target_uri, date, worker)
                SELECT p.digest, p.record_id, p.target_uri, p.date, $1::text
                FROM unnest($20::text[], $21::text[], $22::text[], $23::text[]) AS p(digest, record_id, target_uri, date)
                ORDER BY p.digest
                ON CONFLICT (digest) DO NOTHING
            ), shared AS (
                SELECT serial, digest, record_id, target_uri, date, worker FROM uvfetch_payloads WHERE serial > $19::bigint
            )
            """

        /// The rows, after the others: the other workers' originals (this worker's own it has),
        /// then the highest serial read (NULL when none), with the columns the others use.
        static let rows = """

            UNION ALL
            SELECT \(originalKind), serial, NULL, NULL, digest, record_id, target_uri, date, NULL, NULL
            FROM shared WHERE worker <> $1::text
            UNION ALL
            SELECT \(serialKind), (SELECT max(serial) FROM shared), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
            """

        /// Appends $19 to $23.
        func bind(to binds: inout PostgresBindings) {
            binds.append(after)
            binds.append(archived.map(\.digest))
            binds.append(archived.map(\.recordID))
            binds.append(archived.map(\.targetURI))
            binds.append(archived.map(\.date))
        }
    }
}
