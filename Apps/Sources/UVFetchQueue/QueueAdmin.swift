import PostgresNIO

/// `uvfetch queue init` and the check the other commands make first.
extension QueueDatabase {
    /// Creates the queue's tables and indexes where they are missing, in one transaction.
    /// - Throws: `QueueError` with the server's reason (no right to create tables, ...).
    public func initializeSchema() throws(QueueError) {
        try runInTransaction("queue init", QueueSchema.statements)
    }

    /// Runs `statements` in one transaction.
    private func runInTransaction(_ what: String, _ statements: [String]) throws(QueueError) {
        try run(what) { session in
            try await session.query("BEGIN")
            do {
                for statement in statements {
                    try await session.query(PostgresQuery(unsafeSQL: statement))
                }
                try await session.query("COMMIT")
            } catch {
                _ = try? await session.query("ROLLBACK")
                throw error
            }
        }
    }

    /// Fails unless `queue init` made this database's tables, of a version this uvfetch can
    /// use. `upgrading` (the worker's) needs the version its statement uses
    /// (`QueueSchema.versionNeeded`: more when `sharingPayloads`), and brings a queue of an
    /// older one up to it first (`QueueSchema.upgrade`).
    /// - Throws: `QueueError` saying to run `uvfetch queue init`, or why the upgrade failed.
    public func checkSchema(upgrading: Bool = false, sharingPayloads: Bool = false) throws(QueueError) {
        let versions = try run("reading the queue's schema version") { session -> [Int] in
            do {
                var versions: [Int] = []
                for try await version in try await session.query("SELECT version FROM uvfetch_schema").decode(Int.self) {
                    versions.append(version)
                }
                return versions
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42P01" {
                // undefined_table: no queue here yet.
                return []
            }
        }
        guard let newest = versions.max() else { throw QueueError("no queue in \(settings): run `uvfetch queue init` first") }
        guard !QueueSchema.readable.isDisjoint(with: versions) else {
            throw QueueError("the queue in \(settings) has schema version \(newest); this uvfetch reads version \(QueueSchema.version)")
        }
        let needed = QueueSchema.versionNeeded(sharingPayloads: sharingPayloads)
        guard upgrading, !versions.contains(needed) else { return }
        do throws(QueueError) {
            try runInTransaction("upgrading the queue", QueueSchema.upgrade(from: Set(versions), to: needed))
        } catch {
            let who = sharingPayloads ? "`uvfetch worker --warc-dedup`" : "`uvfetch worker`"
            throw QueueError("the queue in \(settings) has schema version \(newest), and \(who) needs version \(needed): \(error); run `uvfetch queue init` as a role that owns the queue's tables")
        }
    }
}
