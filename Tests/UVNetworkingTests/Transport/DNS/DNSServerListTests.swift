import Testing
@testable import UVNetworking

/// `dnsServers` in curl's syntax becomes c-ares's list; a bad entry is named.
@Suite(.tags(.loopback)) struct DNSServerListTests {
    @Test func acceptsCurlsForms() throws {
        let list = try DNSServerList.csv(["127.0.0.1", "127.0.0.1:5353", "[::1]:53", "::1", " 10.0.0.1 ", "[fe80::1]"]).get()
        #expect(list == "127.0.0.1:53,127.0.0.1:5353,[::1]:53,[::1]:53,10.0.0.1:53,[fe80::1]:53")
    }

    @Test(arguments: ["", "dns.test", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:5x", "[::1", "[::1]x",
                      "[127.0.0.1]:53", "1.2.3", "::g", "[::1]:-1"])
    func refusesOthers(_ entry: String) {
        guard case .failure(.invalidDNSServer(let named)) = DNSServerList.csv(["127.0.0.1", entry]) else {
            Issue.record("\"\(entry)\" accepted")
            return
        }
        #expect(named == entry)
    }
}
