/// The queue's tables, made by `uvfetch queue init`: every statement idempotent, so running it
/// again (or from two machines at once: an advisory lock orders them) changes nothing.
///
/// `uvfetch_urls` holds one row per distinct URL, as the exact bytes of the input line (a line
/// that is not UTF-8 is kept, as `--jsonl` keeps it), unique by their SHA-256 (a B-tree entry
/// cannot hold a URL of several kilobytes). A row is `pending`, `leased` by one worker until
/// `lease_expires_at`, or finished: `done` (2xx) or `failed`. `attempts` counts its claims.
///
/// `uvfetch_results` holds at most one row per URL (its primary key is the URL's id): the JSON
/// Lines record as `--jsonl` writes it, byte for byte, with its status and outcome as columns
/// for queries.
///
/// `uvfetch_schema` holds a row for each version whose changes the tables have: version 1 made
/// them, version 2 added `uvfetch_urls.claim_token` (the worker's claim token, so that a claim
/// whose answer was lost is found again), version 3 the validators of each URL's last response
/// (`etag`, `last_modified`) and where `--warc` archived it (`capture_record_id`,
/// `capture_date`, `captured_url`), so that a URL pushed again (`queue push --refetch`) is asked
/// for conditionally by whichever worker claims it, version 4 the table `uvfetch_payloads`:
/// one row per payload digest a worker archived as an original under `--warc --warc-dedup`
/// (`FleetPayloads`), with the record that holds it, so that the other workers write revisits
/// of it. Each version's changes only add to the ones before, so a uvfetch that reads version 1
/// keeps working on a queue of a later version.
enum QueueSchema {
    /// The version this build writes (`queue init`).
    static let version = 4
    /// The versions whose tables `queue push`, `status` and `results` can use: their statements
    /// do not touch what versions 2 to 4 added.
    static let readable: Set<Int> = [1, 2, 3, 4]

    /// The version `uvfetch worker` needs: its statement uses the validators (3), and the
    /// payloads (4) only when it shares them, so a worker without `--warc-dedup` never makes
    /// a table.
    static func versionNeeded(sharingPayloads: Bool) -> Int { sharingPayloads ? 4 : 3 }
    /// Any number: only `queue init` and the upgrade take this transaction-scoped lock.
    static let initLock = 0x7576_6665_7463_68

    /// Everything `queue init` makes, the upgrade included.
    static let statements: [String] = [
        "SELECT pg_advisory_xact_lock(\(initLock))",
        """
        CREATE TABLE IF NOT EXISTS uvfetch_schema (
            version integer PRIMARY KEY,
            created_at timestamptz NOT NULL DEFAULT now())
        """,
        "INSERT INTO uvfetch_schema (version) VALUES (1) ON CONFLICT DO NOTHING",
        """
        CREATE TABLE IF NOT EXISTS uvfetch_urls (
            id bigserial PRIMARY KEY,
            url bytea NOT NULL,
            url_digest bytea GENERATED ALWAYS AS (sha256(url)) STORED,
            state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'leased', 'done', 'failed')),
            lease_owner text,
            lease_expires_at timestamptz,
            attempts integer NOT NULL DEFAULT 0,
            last_error text,
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now())
        """,
        "CREATE UNIQUE INDEX IF NOT EXISTS uvfetch_urls_digest ON uvfetch_urls (url_digest)",
        // The claim's two scans: pending URLs in the order they were pushed, and leases by
        // expiry; both partial, so finished rows (most of a big queue) cost them nothing.
        "CREATE INDEX IF NOT EXISTS uvfetch_urls_pending ON uvfetch_urls (id) WHERE state = 'pending'",
        "CREATE INDEX IF NOT EXISTS uvfetch_urls_leases ON uvfetch_urls (lease_expires_at) WHERE state = 'leased'",
        // A worker's own leases: extended, recorded and released by owner.
        "CREATE INDEX IF NOT EXISTS uvfetch_urls_owner ON uvfetch_urls (lease_owner) WHERE state = 'leased'",
        """
        CREATE TABLE IF NOT EXISTS uvfetch_results (
            url_id bigint PRIMARY KEY REFERENCES uvfetch_urls (id),
            record text NOT NULL,
            status integer,
            ok boolean NOT NULL,
            worker text NOT NULL,
            recorded_at timestamptz NOT NULL DEFAULT now())
        """,
        // `queue status`'s rate: results of the last minute.
        "CREATE INDEX IF NOT EXISTS uvfetch_results_recorded_at ON uvfetch_results (recorded_at)",
    ] + steps.flatMap(\.statements)

    /// What each version after 1 changed, run by `queue init` (all of them) and by a worker
    /// that finds a queue of an older version (`upgrade`). Adding nullable columns without a
    /// default rewrites nothing: it holds the table's lock for a moment.
    static let steps: [(version: Int, statements: [String])] = [
        (2, [
            "ALTER TABLE uvfetch_urls ADD COLUMN IF NOT EXISTS claim_token bigint",
            "INSERT INTO uvfetch_schema (version) VALUES (2) ON CONFLICT DO NOTHING",
        ]),
        (3, [
            """
            ALTER TABLE uvfetch_urls ADD COLUMN IF NOT EXISTS etag text, ADD COLUMN IF NOT EXISTS last_modified text,
                ADD COLUMN IF NOT EXISTS capture_record_id text, ADD COLUMN IF NOT EXISTS capture_date text,
                ADD COLUMN IF NOT EXISTS captured_url text
            """,
            "INSERT INTO uvfetch_schema (version) VALUES (3) ON CONFLICT DO NOTHING",
        ]),
        // `serial` orders the rows as they were inserted: a worker asks for those after the
        // last it saw. `date` is text: a revisit repeats the original's WARC-Date as written.
        (4, [
            """
            CREATE TABLE IF NOT EXISTS uvfetch_payloads (
                serial bigserial PRIMARY KEY,
                digest text NOT NULL UNIQUE,
                record_id text NOT NULL,
                target_uri text NOT NULL,
                date text NOT NULL,
                worker text NOT NULL,
                archived_at timestamptz NOT NULL DEFAULT now())
            """,
            "INSERT INTO uvfetch_schema (version) VALUES (4) ON CONFLICT DO NOTHING",
        ]),
    ]

    /// From a queue whose versions are `present` up to `version`, under `queue init`'s lock:
    /// only the steps missing, so that a role that owns the tables but may not create any (no
    /// CREATE on the schema) can bring a queue to version 3, and one that may create tables but
    /// does not own them can add version 4.
    static func upgrade(from present: Set<Int>, to version: Int) -> [String] {
        ["SELECT pg_advisory_xact_lock(\(initLock))"]
            + steps.filter { $0.version <= version && !present.contains($0.version) }.flatMap(\.statements)
    }
}
