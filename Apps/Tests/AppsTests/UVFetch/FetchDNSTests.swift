import Foundation
import Glibc
import LoopbackDNSServer
import LoopbackHTTPServer
import Testing
import UVFetchCore

/// uvfetch's DNS end to end: `--dns-servers` against the scripted DNS server, and, in a network
/// and mount namespace of the test's own, resolv.conf (search, ndots, timeout, attempts) and
/// /etc/hosts as the system's resolver would honour them.
@Suite(.tags(.namespace), .serialized) struct FetchDNSTests {
    private var environment: [String: String] { DNSNamespace.environment }

    /// The JSON Lines record of `url` in `output`.
    private func record(_ url: String, in output: String) -> String {
        output.split(separator: "\n").first { $0.contains("\"url\":\"\(url.replacingOccurrences(of: "/", with: "\\/"))\"") || $0.contains("\"url\":\"\(url)\"") }
            .map(String.init) ?? ""
    }

    @Test func dnsServersAreAskedInsteadOfResolvConfs() throws {
        let dns = try LoopbackDNSServer()
        defer { dns.stop() }
        let http = LoopbackHTTPServer()
        let port = try http.start()
        defer { http.stop() }
        dns.set("web.test", .init(addresses: ["127.0.0.1"]))
        dns.set("mute.test", .init(behavior: .silent))
        let good = "http://web.test:\(port)/items/1", gone = "http://gone.test:\(port)/items/1"
        let result = try runUVFetch(["--dns-servers", "127.0.0.1:\(dns.port)", "--jsonl", "-", good, gone], environment: environment)
        #expect(record(good, in: result.stdout).contains("\"status\":200"), "\(result.stdout)")
        #expect(record(gone, in: result.stdout).contains("dnsFailure"), "\(result.stdout)")
        #expect(dns.queryCount(for: "web.test") == 2)

        let bad = try runUVFetch(["--dns-servers", "127.0.0.1,dns.test", "--jsonl", "-", good], environment: environment)
        #expect(record(good, in: bad.stdout).contains("dnsFailure"), "\(bad.stdout)")
        #expect(bad.stdout.contains("dns.test"))
    }

    /// Issue #34 end to end: one name whose UDP answer is truncated while the DNS server refuses
    /// TCP fails alone, naming itself; the 20 fetched with it get their 200s.
    @Test func aTruncatedNameWithTCPRefusedFailsAlone() throws {
        let dns = try LoopbackDNSServer()
        defer { dns.stop() }
        let http = LoopbackHTTPServer()
        let port = try http.start()
        defer { http.stop() }
        dns.set("big.test", .init(behavior: .truncated))
        let good = (0..<20).map { "http://web\($0).test:\(port)/items/1" }
        // Still in flight when big.test's TCP retry is refused (answered at once they would not be).
        for index in 0..<20 { dns.set("web\(index).test", .init(addresses: ["127.0.0.1"], delay: 0.3)) }
        let big = "http://big.test:\(port)/items/1"
        let result = try runUVFetch(["--dns-servers", "127.0.0.1:\(dns.port)", "--jsonl", "-", big] + good, environment: environment)
        let fetched = good.filter { record($0, in: result.stdout).contains("\"status\":200") }
        #expect(fetched.count == 20, "\(result.stdout)")
        #expect(record(big, in: result.stdout).contains("dnsFailure"), "\(result.stdout)")
        #expect(record(big, in: result.stdout).contains("cannot resolve big.test: its DNS answer did not fit in UDP"), "\(result.stdout)")
    }

    /// In a namespace whose resolv.conf says `search corp.test`, `ndots:2`, `timeout:1` and
    /// `attempts:1`, and whose hosts file names pinned.test: a short name resolves through the
    /// search list, a name with fewer dots than ndots tries the list first, a silent server is
    /// given up after one try of one second per question (c-ares's ETIMEOUT, before dnsTimeout's
    /// 5 s), and the hosts file wins over DNS without a query.
    @Test(.enabled(if: NamespaceProcess.canUnshare, "needs root and unshare for a namespace of its own"))
    func resolvConfAndTheHostsFileAreHonoured() throws {
        let urls = ["http://short:8080/items/1", "http://a.b:8080/items/1", "http://pinned.test:8080/items/1", "http://mute.test:8080/items/1"]
        // 127.0.0.7 has no server: a name answered with it fails with connectionRefused.
        let table = ["short.corp.test=127.0.0.1", "a.b.corp.test=127.0.0.1", "a.b=127.0.0.7", "pinned.test=127.0.0.7",
                     "mute.test.corp.test=silent", "mute.test=silent"]
        let text = try DNSNamespace.run(resolvConf: "nameserver 127.0.0.1\nsearch corp.test\noptions ndots:2 timeout:1 attempts:1\n",
                                        hosts: "127.0.0.1 localhost\n127.0.0.1 pinned.test\n",
                                        probeArguments: table, command: [uvfetchExecutable.path, "--jsonl", "-"] + urls)
        #expect(record(urls[0], in: text).contains("\"status\":200"), "\(text)")
        #expect(record(urls[1], in: text).contains("\"status\":200"), "\(text)")
        #expect(record(urls[2], in: text).contains("\"status\":200"), "\(text)")
        #expect(record(urls[3], in: text).contains("dnsTimeout"), "\(text)")
        #expect(record(urls[3], in: text).contains("no DNS server answered"), "\(text)")
        #expect(text.contains("queries pinned.test 0"), "\(text)")
        #expect(text.contains("queries a.b 0"), "\(text)")
        #expect(text.contains("queries mute.test.corp.test 2"), "\(text)")
    }
}
