import Foundation
import Testing
import UVFetchCore

/// The crawler's world of issue 15, all on loopback in a namespace of the test's own: 1,500 host
/// names served by the scripted DNS server, each on its own 127.x.y.z address (one HTTP server
/// on 0.0.0.0:8080 answers on all of them), among them names whose answers come far too late,
/// names that do not exist and dual-stack names whose IPv6 address blackholes; uvfetch fetches
/// one URL per name under `ulimit -n 1024`.
@Suite(.tags(.namespace), .serialized) struct CrawlerWorldTests {
    /// What a name of the world does.
    enum Kind { case normal, slow, missing, dualStack }

    /// The world's names: host0.crawl.test ... host1499.crawl.test; every 37th from the first is
    /// slow (41 names, spread over the list so that some start first), 6 do not exist, 14 are
    /// dual-stack, the rest answer at once.
    static let count = 1_500
    static func kind(_ n: Int) -> Kind {
        if n % 37 == 0 { return .slow }
        if n % 250 == 5 { return .missing }
        if n % 100 == 11 { return .dualStack }
        return .normal
    }

    /// The n-th name's own IPv4 address: 127.1.x.y, y from 1 to 250.
    static func address(_ n: Int) -> String { "127.\(1 + n / 62_500).\(n / 250 % 250).\(1 + n % 250)" }

    static func url(_ n: Int) -> String { "http://host\(n).crawl.test:8080/items/\(n)" }

    /// The probe's DNS table: slow names answer after 30 s, far beyond the run; missing names
    /// are left out (NXDOMAIN); dual-stack names answer AAAA with ::1, whose port 8080 drops SYNs.
    static var table: [String] {
        (0..<count).compactMap { n in
            switch kind(n) {
            case .normal: "host\(n).crawl.test=\(address(n))"
            case .slow: "host\(n).crawl.test=\(address(n))@30"
            case .missing: nil
            case .dualStack: "host\(n).crawl.test=::1,\(address(n))"
            }
        }
    }

    /// Every URL of a name that answers succeeds (more than 1,024 origins under the descriptor
    /// limit, Happy Eyeballs past the blackholed IPv6 address), missing names fail with
    /// dnsFailure, slow ones with dnsTimeout, each URL has exactly one record, and every fast
    /// name's record is written before the first slow name's: slow answers hold nothing back.
    ///
    /// resolv.conf lets c-ares wait 20 s per try, so it is uvfetch's `--dns-timeout 8` that ends
    /// the slow look-ups: the fast names must all be done while the slow ones are still pending
    /// (resolv.conf's `timeout:1` would end them after a second, racing the fast ones). The fast
    /// phase takes well under a second here; 8 s leaves a loaded machine its margin.
    @Test(.enabled(if: NamespaceProcess.canUnshare, "needs root and unshare for a namespace of its own"), .timeLimit(.minutes(1)))
    func fastNamesAreNeverHeldBackBySlowOnesUnderTheDescriptorLimit() throws {
        let list = temporaryFile("crawler-world.txt")
        defer { try? FileManager.default.removeItem(at: list) }
        try (0..<Self.count).map { Self.url($0) + "\n" }.joined().write(to: list, atomically: true, encoding: .utf8)
        let command = ["/bin/sh", "-c", "ulimit -n 1024 && exec \"$0\" \"$@\"", uvfetchExecutable.path,
                       "-i", list.path, "--jsonl", "-", "--dns-timeout", "8", "--concurrency", "128"]
        let output = try DNSNamespace.run(resolvConf: "nameserver 127.0.0.1\noptions timeout:20 attempts:1\n",
                                          hosts: "127.0.0.1 localhost\n::1 localhost\n",
                                          probeArguments: ["--listen", "0.0.0.0", "--blackhole-ipv6"] + Self.table, command: command)
        let decoder = JSONDecoder()
        let records = output.split(separator: "\n").filter { $0.hasPrefix("{") }.compactMap { try? decoder.decode(FetchRecord.self, from: Data($0.utf8)) }
        try #require(records.count == Self.count, "\(records.count) records: \(output.suffix(800))")
        let index = Dictionary(uniqueKeysWithValues: (0..<Self.count).map { (Self.url($0), $0) })
        var seen = Set<Int>(), lastFast = -1, firstSlow = Int.max
        var problems: [String] = []
        for (position, record) in records.enumerated() {
            guard let n = index[record.url] else { problems.append("unknown \(record.url)"); continue }
            if !seen.insert(n).inserted { problems.append("second record for \(record.url)") }
            let code = record.error?.code
            switch Self.kind(n) {
            case .normal, .dualStack:
                if record.status != 200 { problems.append("\(record.url): \(record.status.map(String.init) ?? "-") \(record.error?.message ?? "")") }
                lastFast = max(lastFast, position)
            case .missing:
                if code != "dnsFailure" { problems.append("\(record.url): \(code ?? "success"), not dnsFailure") }
            case .slow:
                if code != "dnsTimeout" { problems.append("\(record.url): \(code ?? "success"), not dnsTimeout") }
                firstSlow = min(firstSlow, position)
            }
        }
        #expect(problems.isEmpty, "\(problems.count) problems: \(problems.prefix(8))")
        #expect(seen.count == Self.count)
        #expect(lastFast < firstSlow, "the last fast record is line \(lastFast), the first slow one line \(firstSlow)")
    }
}
