import Foundation

/// What nginx's `/handshake` access log says about a stretch of requests: the evidence that a
/// handshake benchmark measured what it claims (one request per connection, sessions resumed or
/// not).
public struct HandshakeLogSummary: Sendable {
    /// Requests logged.
    public var requests = 0
    /// Requests that were the first on their connection ($connection_requests = 1).
    public var firstOnConnection = 0
    /// Requests on a connection whose TLS session was resumed ($ssl_session_reused = r).
    public var resumed = 0
    /// "TLSv1.3 TLS_AES_256_GCM_SHA384 X25519" and how many requests used it.
    public var suites: [String: Int] = [:]

    /// The most common protocol, cipher and group.
    public var mainSuite: String? { suites.max { $0.value < $1.value }?.key }

    /// Nothing logged yet.
    public init() {}
}

/// Reads the log `NginxServer` writes for `/handshake` (format
/// "$connection $connection_requests $ssl_protocol $ssl_cipher $ssl_curve $ssl_session_reused").
public struct HandshakeLog {
    public let path: String

    public init(path: String) { self.path = path }

    /// Where the log ends now: `summary(from:)` of this offset covers what is logged later.
    public func end() -> UInt64 {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.uint64Value ?? 0
    }

    /// The requests logged from `offset` on.
    public func summary(from offset: UInt64) -> HandshakeLogSummary {
        var summary = HandshakeLogSummary()
        guard let handle = FileHandle(forReadingAtPath: path) else { return summary }
        defer { try? handle.close() }
        try? handle.seek(toOffset: offset)
        let data = (try? handle.readToEnd()) ?? Data()
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 6 else { continue }
            summary.requests += 1
            if fields[1] == "1" { summary.firstOnConnection += 1 }
            if fields[5] == "r" { summary.resumed += 1 }
            summary.suites[fields[2...4].joined(separator: " "), default: 0] += 1
        }
        return summary
    }
}
