import Foundation

/// Where the queue's PostgreSQL database is and how to log in, from `--db` and the PG*
/// environment variables, read as libpq reads them: the URL's parts first, then PGHOST, PGPORT,
/// PGUSER, PGPASSWORD, PGDATABASE and PGSSLMODE for what it leaves out, then libpq's defaults.
///
/// The password is never printed: `description` leaves it out.
public struct DatabaseSettings: Sendable, Equatable, CustomStringConvertible {
    /// libpq's `sslmode`. `allow` and `prefer` try without TLS first and with it; here both
    /// connect without TLS (a server that insists on TLS refuses, and says so).
    public enum SSLMode: String, Sendable, CaseIterable {
        case disable, allow, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    /// A host name or address, or, starting with `/`, the directory of the server's Unix socket.
    public var host: String
    /// The TCP port, which also names the Unix socket (`.s.PGSQL.PORT`).
    public var port: Int
    /// The role to log in as.
    public var user: String
    /// The password, if one is needed.
    public var password: String?
    /// The database.
    public var database: String
    /// Whether and how to use TLS.
    public var sslMode: SSLMode
    /// Seconds a connection attempt may take (`connect_timeout`); nil for the driver's default.
    public var connectTimeout: Double?

    /// Whether `host` is a Unix socket's directory.
    public var isUnixSocket: Bool { host.hasPrefix("/") }

    /// The socket file when `isUnixSocket`.
    public var unixSocketPath: String { "\(host)/.s.PGSQL.\(port)" }

    /// The settings, as a URL without the password: for messages.
    public var description: String {
        let hostPart = isUnixSocket ? "" : (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
        let socket = isUnixSocket ? "?host=\(host)&port=\(port)" : ""
        return "postgres://\(user)@\(hostPart)/\(database)\(socket)"
    }

    /// Reads `url` (nil: only the environment) over `environment`'s PG* variables.
    /// - Throws: `DatabaseSettingsError` for a URL libpq would refuse, or a bad port or sslmode.
    public init(url: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws(DatabaseSettingsError) {
        let given = try url.map { text throws(DatabaseSettingsError) in try ConnectionURL(text) } ?? ConnectionURL()
        func pick(_ fromURL: String?, _ variable: String) -> String? {
            if let fromURL, !fromURL.isEmpty { return fromURL }
            if let value = environment[variable], !value.isEmpty { return value }
            return nil
        }
        let portText = pick(given.port, "PGPORT") ?? "5432"
        guard let port = Int(portText), (1...65_535).contains(port) else { throw .invalidPort(portText) }
        let sslText = pick(given.sslMode, "PGSSLMODE") ?? SSLMode.prefer.rawValue
        guard let sslMode = SSLMode(rawValue: sslText) else { throw .invalidSSLMode(sslText) }
        let timeoutText = pick(given.connectTimeout, "PGCONNECT_TIMEOUT")
        if let timeoutText {
            guard let seconds = Double(timeoutText), seconds >= 0, seconds.isFinite else { throw .invalidParameter("connect_timeout", timeoutText) }
            // libpq: zero (or nothing) waits forever; here the driver's own default then.
            connectTimeout = seconds > 0 ? max(seconds, 2) : nil
        } else {
            connectTimeout = nil
        }
        // libpq's defaults: the Unix socket where Debian's server puts it, the OS user, a
        // database named after the user.
        host = pick(given.host, "PGHOST") ?? "/var/run/postgresql"
        self.port = port
        user = pick(given.user, "PGUSER") ?? Self.operatingSystemUser(environment)
        password = pick(given.password, "PGPASSWORD")
        database = pick(given.database, "PGDATABASE") ?? user
        self.sslMode = sslMode
    }

    private static func operatingSystemUser(_ environment: [String: String]) -> String {
        if let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name { return String(cString: name) }
        return environment["USER"] ?? "postgres"
    }
}

/// Why `--db` or the PG* variables cannot be used.
public enum DatabaseSettingsError: Error, Equatable, CustomStringConvertible {
    /// Not `postgres://` or `postgresql://`.
    case notAURL(String)
    /// A `%` not followed by two hex digits, or an escape that decodes to no UTF-8 text.
    case badPercentEncoding(String)
    /// More than one host (`host1,host2`): libpq tries them in turn; this client does not.
    case severalHosts
    /// A port that is not a number from 1 to 65535.
    case invalidPort(String)
    /// An sslmode libpq does not know.
    case invalidSSLMode(String)
    /// A query parameter libpq would refuse, or a bad value for one.
    case invalidParameter(String, String)

    /// The message printed after "uvfetch: ".
    public var description: String {
        switch self {
        case .notAURL: return "--db must be a postgres:// or postgresql:// URL"
        case .badPercentEncoding: return "--db has a bad percent-escape"
        case .severalHosts: return "--db names several hosts; give one"
        case .invalidPort(let port): return "invalid database port \"\(port)\""
        case .invalidSSLMode(let mode): return "invalid sslmode \"\(mode)\" (disable, allow, prefer, require, verify-ca or verify-full)"
        case .invalidParameter(let name, _): return "invalid --db parameter \"\(name)\""
        }
    }
}
