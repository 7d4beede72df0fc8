import Testing
@testable import UVNetworking

@Suite(.tags(.loopback)) struct HostsFileTests {
    @Test func namesAndAliasesCaseInsensitivelyIPv6First() {
        let file = HostsFile(parsing: """
            # comment
            127.0.0.1\tlocalhost
            ::1 localhost ip6-localhost   # trailing comment
            127.0.0.5 Web.Test alias.test
            not-an-address broken.test
            127.0.0.6 web.test

            """)
        #expect(file.addresses(for: "localhost", port: 80)?.map(\.description) == ["[::1]:80", "127.0.0.1:80"])
        #expect(file.addresses(for: "WEB.test.", port: 8080)?.map(\.description) == ["127.0.0.5:8080", "127.0.0.6:8080"])
        #expect(file.addresses(for: "alias.test", port: 1)?.map(\.description) == ["127.0.0.5:1"])
        #expect(file.addresses(for: "broken.test", port: 1) == nil)
        #expect(file.addresses(for: "other.test", port: 1) == nil)
    }
}
