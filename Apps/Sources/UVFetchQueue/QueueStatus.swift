import Foundation
import PostgresNIO

/// The queue at a moment: `uvfetch queue status`.
public struct QueueStatus: Sendable, Equatable, Codable {
    /// URLs waiting for a worker.
    public var pending: Int
    /// URLs a worker holds, expired leases included.
    public var leased: Int
    /// URLs fetched with a 2xx.
    public var done: Int
    /// URLs fetched with an error or another status, or abandoned.
    public var failed: Int
    /// Leases past their expiry, which the next claim takes over.
    public var expiredLeases: Int
    /// Workers holding a lease that has not expired.
    public var activeWorkers: Int
    /// Seconds until the earliest lease expires (negative: expired that long ago); nil with no lease.
    public var oldestLeaseExpiresIn: Double?
    /// Results recorded per second over the last minute.
    public var resultsPerSecond: Double

    /// URLs in all.
    public var total: Int { pending + leased + done + failed }

    /// The human-readable report, a fact a line.
    public var text: String {
        var lines = [
            "pending \(pending)", "leased \(leased)" + (expiredLeases > 0 ? " (\(expiredLeases) expired)" : ""),
            "done \(done)", "failed \(failed)", "total \(total)",
            "rate \(String(format: "%.1f", resultsPerSecond)) results/s (last minute)",
            "active workers \(activeWorkers)",
        ]
        if let seconds = oldestLeaseExpiresIn {
            lines.append(seconds >= 0 ? String(format: "oldest lease expires in %.1f s", seconds)
                                      : String(format: "oldest lease expired %.1f s ago", -seconds))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// One JSON object, keys sorted, with `total`.
    public var json: String {
        struct Shape: Encodable {
            let status: QueueStatus
            let total: Int
            func encode(to encoder: any Encoder) throws {
                try status.encode(to: encoder)
                var container = encoder.container(keyedBy: Key.self)
                try container.encode(total, forKey: Key(stringValue: "total")!)
            }
            struct Key: CodingKey {
                var stringValue: String
                var intValue: Int? { nil }
                init?(stringValue: String) { self.stringValue = stringValue }
                init?(intValue: Int) { nil }
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = (try? encoder.encode(Shape(status: self, total: total))) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    // Nulls written out, as the records do.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(pending, forKey: .pending)
        try container.encode(leased, forKey: .leased)
        try container.encode(done, forKey: .done)
        try container.encode(failed, forKey: .failed)
        try container.encode(expiredLeases, forKey: .expiredLeases)
        try container.encode(activeWorkers, forKey: .activeWorkers)
        try container.encode(oldestLeaseExpiresIn, forKey: .oldestLeaseExpiresIn)
        try container.encode(resultsPerSecond, forKey: .resultsPerSecond)
    }
}

extension QueueDatabase {
    /// Counts the queue's URLs by state, its leases and its recent results, in one statement
    /// (a scan of the URLs: for a queue of millions it takes a moment).
    /// - Throws: `QueueError`.
    public func status() throws(QueueError) -> QueueStatus {
        try run("queue status") { session in
            let rows = try await session.query("""
                SELECT count(*) FILTER (WHERE state = 'pending'),
                       count(*) FILTER (WHERE state = 'leased'),
                       count(*) FILTER (WHERE state = 'done'),
                       count(*) FILTER (WHERE state = 'failed'),
                       count(*) FILTER (WHERE state = 'leased' AND lease_expires_at < now()),
                       count(DISTINCT lease_owner) FILTER (WHERE state = 'leased' AND lease_expires_at >= now()),
                       extract(epoch FROM min(lease_expires_at) FILTER (WHERE state = 'leased') - now())::float8,
                       (SELECT count(*) FROM uvfetch_results WHERE recorded_at > now() - interval '1 minute')
                FROM uvfetch_urls
                """)
            var status = QueueStatus(pending: 0, leased: 0, done: 0, failed: 0, expiredLeases: 0, activeWorkers: 0,
                                     oldestLeaseExpiresIn: nil, resultsPerSecond: 0)
            for try await (pending, leased, done, failed, expired, workers, oldest, recent)
                in rows.decode((Int, Int, Int, Int, Int, Int, Double?, Int).self) {
                status = QueueStatus(pending: pending, leased: leased, done: done, failed: failed, expiredLeases: expired,
                                     activeWorkers: workers, oldestLeaseExpiresIn: oldest, resultsPerSecond: Double(recent) / 60)
            }
            return status
        }
    }
}
