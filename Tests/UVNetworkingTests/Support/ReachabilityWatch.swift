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

    /// The label of a manager constant ("v4" of "v4=address:...").
    static func label(_ manager: String) -> String { String(manager.prefix { $0 != "=" }) }

    /// What a started manager reports first in the namespace as made: every target reachable
    /// over the veth (an Ethernet-like link), loopback over lo (`other`).
    static func reachable(_ managers: [String]) -> [String: String] {
        Dictionary(uniqueKeysWithValues: managers.map { manager in
            (label(manager), manager == loopback ? "reachable:other" : "reachable:ethernet")
        })
    }

    /// `status` for each of `labels`.
    static func all(_ labels: [String], _ status: String) -> [String: String] {
        Dictionary(uniqueKeysWithValues: labels.map { (label($0), status) })
    }

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
    private let managerCount: Int
    /// Descriptors open in the probe before its managers started.
    let baselineDescriptors: Int
    /// Just before the managers were started.
    let startedAt: Int64

    /// Starts the probe with `managers` (the constants above) in `namespace`'s client.
    init(_ namespace: RouterNamespace, managers: [String]) throws {
        managerCount = managers.count
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
    /// the streams said the same. The bound counts from `published` when given: when the kernel
    /// published a change it deferred (carrier, see `RouterNamespace.clientOperstateChanged`).
    /// Returns the delays, for the record.
    @discardableResult
    func expectReadings(since: Int64, published: Int64? = nil, _ expected: [String: String], bound: Int64 = 1000, timeout: Double = 10,
                        quiet: Double = 1.5, _ comment: String, sourceLocation: SourceLocation = #_sourceLocation) -> [Int64] {
        let from = max(since, published ?? since)
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
                delays.append(reading.milliseconds - from)
                #expect(reading.milliseconds - from <= bound, "\(comment): \(label) reported \(reading.milliseconds - from) ms after the change (\(from - since) ms after the command)",
                        sourceLocation: sourceLocation)
            }
            for source in ["note", "stream"] {
                let echoed = readings(source, since: since).filter { $0.label == label }.map(\.status)
                #expect(echoed == want, "\(comment): \(label)'s \(source) readings \(echoed), expected \(want)", sourceLocation: sourceLocation)
            }
        }
        let each = got.map { "\($0.label) \($0.milliseconds - from) ms" }.joined(separator: ", ")
        let kernel = from > since ? " (the kernel published it \(from - since) ms after the command)" : ""
        FileHandle.standardError.write(Data("reachability readings (\(comment))\(kernel): \(each.isEmpty ? "none" : each)\n".utf8))
        return delays
    }

    /// Asks the probe for every manager's `status` and `isMonitoring`: label to "STATUS BOOL".
    func statuses() -> [String: String] {
        let before = process.lines.count
        process.send("status")
        _ = waitUntil(timeout: 10) { process.lines.dropFirst(before).filter { $0.hasPrefix("status ") }.count >= managerCount }
        var result: [String: String] = [:]
        for line in process.lines.dropFirst(before) where line.hasPrefix("status ") {
            let fields = line.split(separator: " ", maxSplits: 2).map(String.init)
            if fields.count == 3 { result[fields[1]] = fields[2] }
        }
        return result
    }

    /// Asks the probe for its open descriptors: the count, and what each one is.
    func descriptors() -> (count: Int, targets: String) {
        let before = process.lines.count
        process.send("fds")
        _ = waitUntil(timeout: 10) { process.lines.dropFirst(before).contains { $0.hasPrefix("fds ") } }
        // The per-descriptor lines follow the count; give them a moment.
        usleep(100_000)
        let lines = process.lines.dropFirst(before)
        let count = lines.first { $0.hasPrefix("fds ") }.flatMap { Int($0.dropFirst(4)) } ?? -1
        return (count, lines.filter { $0.hasPrefix("fd ") }.joined(separator: "; "))
    }

    /// Sends a command and waits for the line that answers it (`stopped MS`, `started MS`): its stamp.
    func command(_ command: String, answer: String) -> Int64? {
        let before = process.lines.count
        process.send(command)
        _ = waitUntil(timeout: 10) { process.lines.dropFirst(before).contains { $0.hasPrefix(answer + " ") } }
        return process.lines.dropFirst(before).first { $0.hasPrefix(answer + " ") }.flatMap { Int64($0.dropFirst(answer.count + 1)) }
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
