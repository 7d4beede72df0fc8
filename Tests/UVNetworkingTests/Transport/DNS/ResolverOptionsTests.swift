import Testing
@testable import UVNetworking

/// resolv.conf's timeout and attempts, which c-ares 1.18 does not read itself.
@Suite(.tags(.loopback)) struct ResolverOptionsTests {
    @Test func readsTheOptionsLinesThenTheEnvironment() {
        let text = "nameserver 127.0.0.1\nsearch a.test\noptions ndots:2 timeout:3\noptions attempts:4 rotate\n"
        #expect(ResolverOptions(resolvConf: text) == ResolverOptions(timeoutSeconds: 3, attempts: 4))
        #expect(ResolverOptions(resolvConf: text, environment: "timeout:1") == ResolverOptions(timeoutSeconds: 1, attempts: 4))
    }

    @Test func leavesWhatIsNotWrittenAndCapsAsGlibcDoes() {
        #expect(ResolverOptions(resolvConf: "nameserver 127.0.0.1\n") == ResolverOptions(timeoutSeconds: nil, attempts: nil))
        #expect(ResolverOptions(resolvConf: "options timeout:99 attempts:9\n") == ResolverOptions(timeoutSeconds: 30, attempts: 5))
        #expect(ResolverOptions(resolvConf: "options timeout:x attempts:-1 timeout:0\n") == ResolverOptions(timeoutSeconds: 1, attempts: nil))
    }
}
