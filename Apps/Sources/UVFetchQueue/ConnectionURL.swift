/// The parts of a libpq connection URL, `postgresql://[user[:password]@][host][:port][/dbname][?key=value&...]`,
/// percent-decoded; nil for a part it leaves out. A host in `[...]` is an IPv6 address; a host
/// that decodes to a path (`%2Fvar%2Frun%2Fpostgresql`) is a Unix socket's directory, as are
/// `?host=/path` values. Query parameters override the parts before them, as in libpq.
struct ConnectionURL: Equatable {
    var user: String?
    var password: String?
    var host: String?
    var port: String?
    var database: String?
    var sslMode: String?
    var connectTimeout: String?

    /// No URL: every part left to the environment.
    init() {}

    init(_ text: String) throws(DatabaseSettingsError) {
        guard let rest = ["postgresql://", "postgres://"].lazy.compactMap({ text.hasPrefix($0) ? text.dropFirst($0.count) : nil }).first else {
            throw .notAURL(text)
        }
        var main = Substring(rest)
        var query: Substring?
        if let mark = main.firstIndex(of: "?") {
            query = main[main.index(after: mark)...]
            main = main[..<mark]
        }
        var authority = main
        if let slash = main.firstIndex(of: "/") {
            authority = main[..<slash]
            database = try Self.decodedOrNil(main[main.index(after: slash)...])
        }
        // The last @: a password may hold an unescaped one.
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                user = try Self.decodedOrNil(userInfo[..<colon])
                password = try Self.decoded(userInfo[userInfo.index(after: colon)...])
            } else {
                user = try Self.decodedOrNil(userInfo)
            }
        }
        guard !authority.contains(",") else { throw .severalHosts }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .notAURL(text) }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { port = try Self.decodedOrNil(after.dropFirst()) } else if !after.isEmpty { throw .notAURL(text) }
        } else if let colon = authority.lastIndex(of: ":") {
            host = try Self.decodedOrNil(authority[..<colon])
            port = try Self.decodedOrNil(authority[authority.index(after: colon)...])
        } else {
            host = try Self.decodedOrNil(authority)
        }
        for pair in (query ?? "").split(separator: "&") where !pair.isEmpty {
            guard let equals = pair.firstIndex(of: "=") else { throw .invalidParameter(String(pair), "") }
            let key = try Self.decoded(pair[..<equals])
            let value = try Self.decoded(pair[pair.index(after: equals)...])
            switch key {
            case "host", "hostaddr":
                guard !value.contains(",") else { throw .severalHosts }
                host = value
            case "port": port = value
            case "user": user = value
            case "password": password = value
            case "dbname": database = value
            case "sslmode": sslMode = value
            case "connect_timeout": connectTimeout = value
            // Accepted and not needed here.
            case "application_name", "fallback_application_name", "client_encoding", "options", "keepalives",
                 "keepalives_idle", "keepalives_interval", "keepalives_count", "target_session_attrs":
                continue
            default: throw .invalidParameter(key, value)
            }
        }
    }

    /// nil for an empty part: the environment's value applies then.
    private static func decodedOrNil(_ text: Substring) throws(DatabaseSettingsError) -> String? {
        let value = try decoded(text)
        return value.isEmpty ? nil : value
    }

    /// `text` with every `%XX` decoded; the bytes must make UTF-8.
    static func decoded(_ text: Substring) throws(DatabaseSettingsError) -> String {
        guard text.contains("%") else { return String(text) }
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                throw .badPercentEncoding(String(text))
            }
            bytes.append(high << 4 | low)
        }
        guard let value = String(validating: bytes, as: UTF8.self) else { throw .badPercentEncoding(String(text)) }
        return value
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
