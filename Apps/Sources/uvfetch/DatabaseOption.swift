import ArgumentParser
import Foundation
import UVFetchQueue

/// `--db`, shared by `uvfetch queue ...` and `uvfetch worker`.
struct DatabaseOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The queue's PostgreSQL database: postgres://user:password@host:port/dbname?sslmode=disable|prefer|require|verify-full (host=/dir for a Unix socket). PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE and PGSSLMODE fill in what it leaves out; with neither, libpq's defaults.", valueName: "url"))
    var db: String?

    /// The settings, or a usage error (the message never shows the password).
    func settings() throws -> DatabaseSettings {
        do {
            return try DatabaseSettings(url: db, environment: ProcessInfo.processInfo.environment)
        } catch {
            throw ValidationError("\(error)")
        }
    }

    /// Connected, its queue's schema checked unless `checkingSchema` is false (and brought up
    /// to the version a worker needs if `upgrading`: `sharingPayloads` needs the payloads'
    /// table); or the process ends with the database's error (exit 69).
    func connect(checkingSchema: Bool = true, upgrading: Bool = false, sharingPayloads: Bool = false) throws -> QueueDatabase {
        let database = QueueDatabase(settings: try settings())
        do throws(QueueError) {
            try database.connect()
            if checkingSchema { try database.checkSchema(upgrading: upgrading, sharingPayloads: sharingPayloads) }
        } catch {
            throw databaseFailure(error)
        }
        return database
    }
}

/// A database error: "uvfetch: MESSAGE" on standard error; returns exit 69 for the caller to throw.
func databaseFailure(_ error: QueueError) -> ExitCode {
    FileHandle.standardError.write(Data("uvfetch: \(error)\n".utf8))
    return ExitCode(QueueExitStatus.databaseError)
}
