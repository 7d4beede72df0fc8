import CSQLite
import Foundation

/// The little of SQLite the disk store needs: one connection, statements with bound text,
/// integers, reals and blobs, rows read by column. Not thread-safe: its owner serializes use.
final class CacheIndexDatabase {
    private var db: OpaquePointer?

    /// What SQLite said, with its result code.
    struct Failure: Error, CustomStringConvertible {
        let code: Int32
        let message: String
        var description: String { "SQLite \(code): \(message)" }
        /// The file is not a database, or a page of it is damaged.
        var isCorruption: Bool { code & 0xFF == SQLITE_CORRUPT || code & 0xFF == SQLITE_NOTADB }
    }

    /// Opens (creating) the database at `path`, in WAL mode so that readers in other processes
    /// never wait for a writer, waiting up to `busyTimeout` ms for another process's write.
    init(path: String, busyTimeout: Int32 = 5000) throws(Failure) {
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let result = sqlite3_open_v2(path, &db, flags, nil)
        guard result == SQLITE_OK else {
            let failure = Failure(code: result, message: db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open")
            sqlite3_close(db)
            db = nil
            throw failure
        }
        sqlite3_busy_timeout(db, busyTimeout)
        sqlite3_extended_result_codes(db, 1)
    }

    deinit { sqlite3_close(db) }

    /// Runs `sql` (one or more statements, no parameters).
    func execute(_ sql: String) throws(Failure) {
        let result = sqlite3_exec(db, sql, nil, nil, nil)
        guard result == SQLITE_OK else { throw failure(result) }
    }

    /// Runs `sql` with `arguments` bound in order, calling `row` for each result row.
    func query(_ sql: String, _ arguments: [Value] = [], row: (Row) throws(Failure) -> Void = { _ in }) throws(Failure) {
        var statement: OpaquePointer?
        let prepared = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        guard prepared == SQLITE_OK, let statement else { throw failure(prepared) }
        defer { sqlite3_finalize(statement) }
        for (index, argument) in arguments.enumerated() {
            let position = Int32(index + 1)
            let bound: Int32
            switch argument {
            case .text(let text): bound = sqlite3_bind_text(statement, position, text, -1, Self.transient)
            case .integer(let value): bound = sqlite3_bind_int64(statement, position, value)
            case .real(let value): bound = sqlite3_bind_double(statement, position, value)
            }
            guard bound == SQLITE_OK else { throw failure(bound) }
        }
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { return }
            guard step == SQLITE_ROW else { throw failure(step) }
            try row(Row(statement: statement))
        }
    }

    /// The rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(db)) }

    /// Runs `body` in one write transaction, taken at once (BEGIN IMMEDIATE), so that two
    /// processes never both read and then both write.
    func transaction<T>(_ body: () throws(Failure) -> T) throws(Failure) -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    enum Value {
        case text(String)
        case integer(Int64)
        case real(Double)
    }

    /// One result row, valid during the `query` callback.
    struct Row {
        let statement: OpaquePointer
        func text(_ column: Int32) -> String {
            guard let bytes = sqlite3_column_text(statement, column) else { return "" }
            return String(cString: bytes)
        }
        func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
        func real(_ column: Int32) -> Double { sqlite3_column_double(statement, column) }
    }

    private func failure(_ code: Int32) -> Failure {
        Failure(code: code, message: db.map { String(cString: sqlite3_errmsg($0)) } ?? "no database")
    }

    /// SQLITE_TRANSIENT: SQLite copies bound text before the call returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
