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
enum QueueSchema {
    /// The version this build writes and reads; `uvfetch_schema` holds it.
    static let version = 1
    /// Any number: only `queue init` takes this transaction-scoped lock.
    static let initLock = 0x7576_6665_7463_68

    static let statements = [
        "SELECT pg_advisory_xact_lock(\(initLock))",
        """
        CREATE TABLE IF NOT EXISTS uvfetch_schema (
            version integer PRIMARY KEY,
            created_at timestamptz NOT NULL DEFAULT now())
        """,
        "INSERT INTO uvfetch_schema (version) VALUES (\(version)) ON CONFLICT DO NOTHING",
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
    ]
}
