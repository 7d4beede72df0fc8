import Foundation
import Testing

/// The embed probe's `reachability-watch` inside a `RouterNamespace`'s client: reachability
/// managers under labels, every reading stamped on CLOCK_MONOTONIC (the clock the test reads
/// before each change it makes), so a test can check what was reported, how often and how soon.
final class ReachabilityWatch: Sendable {
    /// The managers a test may ask for, by label.
    static let general = "general=general"
    static let behindIPv4 = "v4=address:\(RouterNamespace.routerIPv4)"
    static let behindIPv6 = "v6=address:\(RouterNamespace.routerIPv6)"
    static let loopback = "loopback=address:127.0.0.1"
    /// The router by name, from the client's /etc/hosts (`RouterNamespace.hostsWithRouter`).
    static let domain = "domain=domain:router.test"

    /// One reading as the probe printed it.
    struct Reading: Equatable, CustomStringConvertible {
        /// `event` (the handler), `note` (the notification) or `stream` (`statusChanges`).
        var source: String
        var milliseconds: Int64
        var label: String
        /// `notReachable`, `reachable:ethernet`, ... (the probe's `statusToken`).
        var status: String
        var description: String { "\(source) \(milliseconds) \(label) \(status)" }
    }

    let process: NamespaceProcess
    /// Descriptors open in the probe before its managers started.
    let baselineDescriptors: Int
    /// Just before the managers were started.
    let startedAt: Int64

    /// Starts the probe with `managers` (the constants above) in `namespace`'s client.
    init(_ namespace: RouterNamespace, managers: [String]) throws {
        process = try NamespaceProcess.probe(namespace, .client, "reachability-watch", managers)
        guard process.waitForLine(timeout: 20, { $0.hasPrefix("started ") }) != nil,
              let stamp = process.lines.first(where: { $0.hasPrefix("starting ") }).flatMap({ Int64($0.dropFirst("starting ".count)) }),
              let fds = process.lines.first(where: { $0.hasPrefix("fds ") }).flatMap({ Int($0.dropFirst(4)) }) else {
            let output = process.text
            _ = process.finish(timeout: 5)
            throw RouterNamespaceError("the probe did not start: \(output)")
        }
        startedAt = stamp
        baselineDescriptors = fds
    }

    /// Every reading so far from `source` (the handler by default).
    func readings(_ source: String = "event", since: Int64 = 0) -> [Reading] {
        process.lines.compactMap { line in
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 4, fields[0] == source, let stamp = Int64(fields[1]), stamp >= since else { return nil }
            return Reading(source: fields[0], milliseconds: stamp, label: fields[2], status: fields[3])
        }
    }

    /// Waits (generously: up to `timeout` seconds) until every label of `expected` has a reading
    /// since `since` with its status, then `quiet` seconds more for anything that should not come;
    /// then checks the handler's readings since `since`: exactly one per expected label, with its
    /// status, at most `bound` ms after `since`, none for any other label; the notifications and
    /// the streams said the same. Returns the delays, for the record.
    @discardableResult
    func expectReadings(since: Int64, _ expected: [String: String], bound: Int64 = 1000, timeout: Double = 10, quiet: Double = 1.5,
                        _ comment: String, sourceLocation: SourceLocation = #_sourceLocation) -> [Int64] {
        _ = waitUntil(timeout: timeout) {
            let got = readings(since: since)
            return expected.allSatisfy { label, status in got.contains { $0.label == label && $0.status == status } }
        }
        usleep(UInt32(quiet * 1_000_000))
        let got = readings(since: since)
        var delays: [Int64] = []
        for label in Set(got.map(\.label)).union(expected.keys).sorted() {
            let mine = got.filter { $0.label == label }
            let want = expected[label].map { [$0] } ?? []
            #expect(mine.map(\.status) == want, "\(comment): \(label) reported \(mine), expected \(want); all since \(since): \(got)", sourceLocation: sourceLocation)
            for reading in mine {
                delays.append(reading.milliseconds - since)
                #expect(reading.milliseconds - since <= bound, "\(comment): \(label) reported \(reading.milliseconds - since) ms after the change", sourceLocation: sourceLocation)
            }
            for source in ["note", "stream"] {
                let echoed = readings(source, since: since).filter { $0.label == label }.map(\.status)
                #expect(echoed == want, "\(comment): \(label)'s \(source) readings \(echoed), expected \(want)", sourceLocation: sourceLocation)
            }
        }
        return delays
    }

    /// Stops the probe (end of its input); its exit status.
    func finish() -> Int32? { process.finish() }

    deinit { _ = process.finish(timeout: 5) }
}

extension RouterNamespace {
    /// A client /etc/hosts that names the router `router.test`.
    static let hostsWithRouter = "127.0.0.1 localhost\n::1 localhost\n\(routerIPv4) router.test\n"
}

/// The delays measured, printed so a run's log shows them (speed is measured, not asserted).
func recordDelays(_ name: String, _ delays: [Int64]) {
    guard !delays.isEmpty else { return }
    let sorted = delays.sorted()
    FileHandle.standardError.write(Data("reachability delays (\(name)): \(sorted.count) readings, median \(sorted[sorted.count / 2]) ms, max \(sorted.last!) ms\n".utf8))
}
