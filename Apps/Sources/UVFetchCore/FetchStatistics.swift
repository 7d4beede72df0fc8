import Foundation
import Histogram

/// Counts and latencies over a run, fed one record at a time.
///
/// Latencies go into an HdrHistogram: fixed memory and 3 significant digits whatever the number
/// of URLs, where keeping every sample for exact percentiles would grow with the input.
public struct FetchStatistics: Sendable {
    /// URLs that answered 2xx.
    public private(set) var succeeded = 0
    /// URLs that failed: an error or a non-2xx status.
    public private(set) var failed = 0
    /// Input lines or arguments that were not http(s) URLs.
    public private(set) var malformed = 0
    /// URLs `--resume` skipped: the `--jsonl` file had their records already, or the run had
    /// taken them earlier in the list. Neither fetched nor counted in `total`.
    public private(set) var alreadyRecorded = 0
    /// Body bytes over all URLs.
    public private(set) var bytes = 0
    /// URLs by status class ("2xx", "4xx", ...; "none" when no response arrived).
    public var statusClasses: [String: Int] {
        var classes: [String: Int] = [:]
        for (index, count) in classCounts.enumerated() where count > 0 {
            classes[index == Self.noStatus ? "none" : "\(index)xx"] = count
        }
        return classes.merging(otherClasses) { $0 + $1 }
    }
    /// URLs by status / 100 (0...9), then those without a response: counted without building
    /// the class's name or hashing it per URL.
    private var classCounts = [Int](repeating: 0, count: 11)
    private static let noStatus = 10
    /// Classes beyond 9xx, which no HTTP/1.1 status has (kept all the same).
    private var otherClasses: [String: Int] = [:]
    /// URLs by the protocol of their final response ("h2", "http/1.1"), when records say it.
    public var protocols: [String: Int] { Dictionary(uniqueKeysWithValues: protocolCounts.lazy.map { ($0.name, $0.count) }) }
    /// The same, in order of first sight: a run sees one or two names, which a scan of short
    /// strings finds for less than hashing one per URL.
    private var protocolCounts: [(name: String, count: Int)] = []
    /// Failed URLs by error kind ("transport", "timeout", "validation", ...).
    public private(set) var errorKinds: [String: Int] = [:]
    /// Microseconds up to an hour, allocated once (~180 KiB): an auto-resizing histogram grows,
    /// copying its counts, each time a new maximum arrives, which showed in a profile.
    private var latencies = Histogram<UInt64>(highestTrackableValue: Self.longestLatency, numberOfSignificantValueDigits: .three)

    /// The longest latency recorded as itself, in microseconds; longer ones count as this.
    static let longestLatency: UInt64 = 3_600_000_000

    /// Empty statistics.
    public init() {}

    /// Requests finished, successful or not.
    public var total: Int { succeeded + failed }

    /// Counts one finished URL.
    public mutating func add(_ record: FetchRecord) {
        add(status: record.status, bytes: record.bytes, failureKind: record.error?.kind, milliseconds: record.timings.total,
            httpProtocol: record.httpProtocol, notModified: record.notModified)
    }

    /// Counts one finished URL from what its record would say (`FetchRecord`): the status
    /// (nil without a response), the body bytes, the error's kind (nil on success), the total
    /// time, the protocol its response came over, whether it was a 304 to a conditional
    /// request (a success). For runs that write no record.
    mutating func add(status: Int?, bytes: Int, failureKind: String?, milliseconds: Double, httpProtocol: String? = nil,
                      notModified: Bool = false) {
        if let httpProtocol {
            if let index = protocolCounts.firstIndex(where: { $0.name == httpProtocol }) {
                protocolCounts[index].count += 1
            } else {
                protocolCounts.append((httpProtocol, 1))
            }
        }
        if failureKind == nil, let status, (200..<300).contains(status) || notModified { succeeded += 1 } else { failed += 1 }
        self.bytes += bytes
        let statusClass = status.map { $0 / 100 } ?? Self.noStatus
        if status == nil || (0..<Self.noStatus).contains(statusClass) {
            classCounts[statusClass] += 1
        } else {
            otherClasses["\(statusClass)xx", default: 0] += 1
        }
        if let failureKind { errorKinds[failureKind, default: 0] += 1 }
        // Microseconds, so sub-millisecond loopback requests keep their resolution.
        _ = latencies.record(min(Self.longestLatency, UInt64(max(0, milliseconds * 1000).rounded())))
    }

    /// Counts one malformed input entry.
    public mutating func addMalformed() { malformed += 1 }

    /// Counts one URL `--resume` skipped.
    public mutating func addAlreadyRecorded() { alreadyRecorded += 1 }

    /// Latency at `percentile` (0...100) in milliseconds; 0 before any request.
    public func latency(atPercentile percentile: Double) -> Double {
        guard latencies.totalCount > 0 else { return 0 }
        return Double(latencies.valueAtPercentile(percentile)) / 1000
    }

    /// The slowest request in milliseconds (to the histogram's precision).
    public var maximumLatency: Double { latencies.totalCount > 0 ? Double(latencies.max) / 1000 : 0 }

    /// The exit status the run earns.
    public var exitStatus: Int32 { failed == 0 && malformed == 0 ? ExitStatus.success : ExitStatus.someFailed }

    /// The summary: first the one line `uvfetch` has always printed (with the throughput in
    /// requests and in megabytes, 10^6 bytes, per second), then status classes, error kinds and
    /// latency percentiles.
    public func summary(seconds: Double) -> String {
        let rate = Double(total) / max(seconds, 1e-9)
        let megabytesPerSecond = Double(bytes) / 1e6 / max(seconds, 1e-9)
        var lines = ["\(total) requests in \(String(format: "%.2f", seconds)) s: \(succeeded) succeeded, \(failed) failed, "
                     + "\(bytes) body bytes, \(String(format: "%.0f", rate)) requests/s, \(String(format: "%.1f", megabytesPerSecond)) MB/s"]
        lines.append("status: " + Self.list(statusClasses))
        if !protocols.isEmpty { lines.append("protocols: " + Self.list(protocols)) }
        if !errorKinds.isEmpty { lines.append("errors: " + Self.list(errorKinds)) }
        if malformed > 0 { lines.append("malformed input: \(malformed)") }
        if alreadyRecorded > 0 { lines.append("skipped, already recorded: \(alreadyRecorded)") }
        let percentiles = [("p50", 50.0), ("p90", 90.0), ("p99", 99.0)].map { name, value in
            "\(name) \(String(format: "%.2f", latency(atPercentile: value)))"
        }
        lines.append("latency ms: " + percentiles.joined(separator: " ") + " max \(String(format: "%.2f", maximumLatency))")
        return lines.joined(separator: "\n")
    }

    private static func list(_ counts: [String: Int]) -> String {
        counts.isEmpty ? "-" : counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }
}
