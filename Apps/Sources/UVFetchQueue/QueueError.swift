import PostgresNIO

/// Why a queue command could not use its database.
public struct QueueError: Error, Sendable, CustomStringConvertible {
    /// What failed: "cannot connect to postgres://user@host:5432/db: connection refused".
    public var message: String
    /// Whether a new connection might succeed where this one failed (a lost or refused
    /// connection), as opposed to an error the server reported for the statement.
    public var isConnectionLost: Bool

    /// Creates an error with its message.
    public init(_ message: String, isConnectionLost: Bool = false) {
        self.message = message
        self.isConnectionLost = isConnectionLost
    }

    /// The message printed after "uvfetch: ".
    public var description: String { message }

    /// `error` in words: the server's own message for a statement it refused (PSQLError's
    /// description is a generic text, on purpose, to keep query values out of logs).
    static func describe(_ error: any Error) -> (text: String, isConnectionLost: Bool) {
        guard let error = error as? PSQLError else { return ("\(error)", false) }
        if let info = error.serverInfo {
            let code = info[.sqlState] ?? ""
            let state = code.isEmpty ? "" : " (SQLSTATE \(code))"
            // Class 08 (connection exception) and 57P (the server shutting down, or the
            // backend terminated by an administrator): a new connection may well work.
            return ((info[.message] ?? "server error") + state, code.hasPrefix("08") || code.hasPrefix("57P"))
        }
        let lost: Set<PSQLError.Code> = [.connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown]
        let reason = error.underlying.map { ": \($0)" } ?? ""
        return ("\(error.code)\(reason)", lost.contains(error.code))
    }
}
