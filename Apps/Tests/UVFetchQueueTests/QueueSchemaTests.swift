import Foundation
import Testing

/// Queues made by an older uvfetch: the commands that read them go on as they are, and a
/// worker brings them up to the version its statement needs.
@Suite(.tags(.postgres), .serialized, .enabled(if: PostgresCluster.isInstalled, "PostgreSQL is not installed (scripts/install-deps.sh)"))
struct QueueSchemaTests {
    /// What versions 2 and 3 added to `uvfetch_urls`, as an ALTER TABLE's drops.
    private static let laterColumns = ["claim_token", "etag", "last_modified", "capture_record_id", "capture_date", "captured_url"]
        .map { "DROP COLUMN \($0)" }.joined(separator: ", ")
    /// The table version 4 added.
    private static let hasPayloads = "SELECT count(*) FROM information_schema.tables WHERE table_name = 'uvfetch_payloads'"

    @Test func aQueueOfVersion1IsReadAsItIsAndUpgradedByAWorker() throws {
        let fixture = try QueueFixture(count: 50)
        // The tables as version 1 made them: no claim token, no validators, no payloads, no rows for 2 to 4.
        try fixture.cluster.psql(fixture.db, """
            ALTER TABLE uvfetch_urls \(Self.laterColumns); DROP TABLE uvfetch_payloads; DELETE FROM uvfetch_schema WHERE version > 1
            """)
        let hasToken = "SELECT count(*) FROM information_schema.columns WHERE table_name = 'uvfetch_urls' AND column_name = 'claim_token'"

        let status = try uvfetch(["queue", "status", "--db", fixture.db])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.hasPrefix("pending 50\n"), "\(status.stdout)")
        let more = try temporaryFile("more.txt", Data("http://127.0.0.1:\(fixture.port)/items/50\n".utf8))
        let push = try uvfetch(["queue", "push", "--db", fixture.db, "-i", more.path])
        #expect(push.stdout == "1 pushed, 0 duplicates, 0 malformed\n", "\(push.stdout) \(push.stderr)")
        // Reading changed nothing.
        #expect(try fixture.count(hasToken) == 0)
        #expect(try fixture.cluster.psql(fixture.db, "SELECT version FROM uvfetch_schema ORDER BY version") == "1\n")

        let worker = try uvfetch(["worker", "--db", fixture.db, "-q"])
        #expect(worker.status == 0, "\(worker.stderr)")
        #expect(try fixture.states() == ["done": 51])
        #expect(try fixture.count(hasToken) == 1)
        #expect(try fixture.count(hasToken.replacingOccurrences(of: "'claim_token'", with: "'etag'")) == 1)
        #expect(try fixture.cluster.psql(fixture.db, "SELECT version FROM uvfetch_schema ORDER BY version") == "1\n2\n3\n")
        #expect(try fixture.results().lines.count == 51)
        // A worker without --warc-dedup makes no payloads table; one with it does (version 4).
        #expect(try fixture.count(Self.hasPayloads) == 0)
        let archive = try temporaryFile("dedup.warc.gz", Data())
        try FileManager.default.removeItem(at: archive)
        #expect(try uvfetch(["queue", "push", "--db", fixture.db, "-i", fixture.list.path, "--refetch"]).status == 0)
        let dedup = try uvfetch(["worker", "--db", fixture.db, "-q", "--warc", archive.path, "--warc-dedup"])
        #expect(dedup.status == 0, "\(dedup.stderr)")
        #expect(try fixture.cluster.psql(fixture.db, "SELECT version FROM uvfetch_schema ORDER BY version") == "1\n2\n3\n4\n")
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_payloads") == 50)
        #expect(try fixture.states() == ["done": 51])
    }

    /// A worker with --warc-dedup brings a version 1 queue up to 4 at once.
    @Test func aDedupWorkerBringsAQueueOfVersion1ToVersion4() throws {
        let fixture = try QueueFixture(count: 20)
        try fixture.cluster.psql(fixture.db, """
            ALTER TABLE uvfetch_urls \(Self.laterColumns); DROP TABLE uvfetch_payloads; DELETE FROM uvfetch_schema WHERE version > 1
            """)
        let archive = try temporaryFile("dedup.warc.gz", Data())
        try FileManager.default.removeItem(at: archive)
        let worker = try uvfetch(["worker", "--db", fixture.db, "-q", "--warc", archive.path, "--warc-dedup"])
        #expect(worker.status == 0, "\(worker.stderr)")
        #expect(try fixture.cluster.psql(fixture.db, "SELECT version FROM uvfetch_schema ORDER BY version") == "1\n2\n3\n4\n")
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_payloads") == 20)
        #expect(try fixture.states() == ["done": 20])
    }

    /// A role that may use a queue of version 3 but not create tables: a worker without
    /// --warc-dedup works as before; one with it says what to do.
    @Test func aDedupWorkerThatMayNotCreateThePayloadsTableSaysWhatToDo() throws {
        let fixture = try QueueFixture(count: 5)
        try fixture.cluster.psql(fixture.db, """
            DROP TABLE uvfetch_payloads; DELETE FROM uvfetch_schema WHERE version > 3;
            DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'uvfetch_user') THEN CREATE ROLE uvfetch_user LOGIN; END IF; END $$;
            GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO uvfetch_user;
            GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO uvfetch_user;
            REVOKE CREATE ON SCHEMA public FROM PUBLIC
            """)
        let url = fixture.db.replacingOccurrences(of: "postgres://postgres@", with: "postgres://uvfetch_user@")
        let archive = try temporaryFile("dedup.warc.gz", Data())
        try FileManager.default.removeItem(at: archive)
        let dedup = try uvfetch(["worker", "--db", url, "-q", "--warc", archive.path, "--warc-dedup"])
        #expect(dedup.status == 69, "\(dedup.stderr)")
        #expect(dedup.stderr.contains("has schema version 3, and `uvfetch worker --warc-dedup` needs version 4"), "\(dedup.stderr)")
        #expect(try fixture.states() == ["pending": 5])
        let plain = try uvfetch(["worker", "--db", url, "-q", "--warc", archive.path])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(try fixture.states() == ["done": 5])
        #expect(try fixture.count(Self.hasPayloads) == 0)
    }

    /// A role that may use the queue but not alter its tables gets a clear error, not a
    /// worker whose every statement fails.
    @Test func aWorkerThatMayNotUpgradeSaysWhatToDo() throws {
        let fixture = try QueueFixture(count: 5)
        try fixture.cluster.psql(fixture.db, """
            ALTER TABLE uvfetch_urls \(Self.laterColumns); DELETE FROM uvfetch_schema WHERE version > 1;
            DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'uvfetch_user') THEN CREATE ROLE uvfetch_user LOGIN; END IF; END $$;
            GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO uvfetch_user;
            GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO uvfetch_user
            """)
        let url = fixture.db.replacingOccurrences(of: "postgres://postgres@", with: "postgres://uvfetch_user@")
        let worker = try uvfetch(["worker", "--db", url, "-q"])
        #expect(worker.status == 69, "\(worker.stderr)")
        #expect(worker.stderr.contains("has schema version 1, and `uvfetch worker` needs version 3"), "\(worker.stderr)")
        #expect(worker.stderr.contains("run `uvfetch queue init` as a role that owns the queue's tables"), "\(worker.stderr)")
        #expect(try fixture.states() == ["pending": 5])
    }
}
