import Testing
@testable import UVFetchCore

/// `LoopbackHosts`: which hosts a run reaches without the network, so a run of only those never
/// says "network unreachable".
@Suite(.tags(.loopback)) struct LoopbackHostsTests {
    private let hosts = LoopbackHosts()

    @Test func the127NetworkInEveryFormTheResolverConnectsTo() {
        for host in ["127.0.0.1", "127.0.0.2", "127.255.255.254", "127.1", "0x7f.1", "2130706433"] {
            #expect(hosts.contains(host), "\(host)")
        }
    }

    @Test func otherIPv4AddressesAreNot() {
        for host in ["128.0.0.1", "126.255.255.255", "10.0.0.1", "192.0.2.1", "0.0.0.0", "1.127.0.0", "127.0.0.256"] {
            #expect(!hosts.contains(host), "\(host)")
        }
    }

    @Test func ipv6LoopbackAndMapped127() {
        for host in ["::1", "0:0:0:0:0:0:0:1", "::1%lo", "::ffff:127.0.0.1", "::FFFF:127.9.9.9"] {
            #expect(hosts.contains(host), "\(host)")
        }
        for host in ["::", "::2", "2001:db8::1", "fe80::1%lo", "::ffff:192.0.2.1", "::127.0.0.1"] {
            #expect(!hosts.contains(host), "\(host)")
        }
    }

    @Test func localhostByNameInAnyCase() {
        for host in ["localhost", "LOCALHOST", "LocalHost.", "localhost."] {
            #expect(hosts.contains(host), "\(host)")
        }
        for host in ["localhost.example.com", "mylocalhost", "localhost..", "127.example.com", "example.com", ""] {
            #expect(!hosts.contains(host), "\(host)")
        }
    }

    @Test func namesResolveSendsOnlyToLoopbackAreLoopback() {
        let hosts = LoopbackHosts(overrides: ["api.example.com": "127.0.0.1, [::1]", "cdn.example.com": "127.0.0.1,192.0.2.7",
                                              "localhost": "192.0.2.9", "bad.example.com": "not-an-address"])
        #expect(hosts.contains("api.example.com"))
        #expect(hosts.contains("API.Example.COM"))
        #expect(!hosts.contains("cdn.example.com"), "one address beyond loopback needs the network")
        #expect(!hosts.contains("localhost"), "an override decides for its name")
        #expect(!hosts.contains("bad.example.com"))
        #expect(!hosts.contains("other.example.com"))
        // Literals are literals whatever the overrides say, as the resolver reads them.
        #expect(hosts.contains("127.0.0.1"))
    }
}
