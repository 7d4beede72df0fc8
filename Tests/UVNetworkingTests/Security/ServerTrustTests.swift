import Testing
@testable import UVNetworking

@Suite(.tags(.unit)) struct ServerTrustTests {
    let pki = TestPKI.standard

    @Test func hostLosesIPv6Brackets() {
        #expect(pki.trust(pki.sentChain, host: "[::1]").host == "::1")
        #expect(pki.trust(pki.sentChain, host: "::1").host == "::1")
        #expect(pki.trust(pki.sentChain, host: "localhost").host == "localhost")
    }

    @Test func equalityIsIdentity() {
        let first = pki.trust(pki.sentChain)
        let second = pki.trust(pki.sentChain)
        #expect(first == first)
        #expect(first != second)
        #expect(Set([first, second, first]).count == 2)
    }

    @Test func verifiedChainIsSetBySuccessOnly() {
        let trust = pki.trust(pki.sentChain)
        #expect(trust.verifiedChain.isEmpty)
        #expect(!SecurityPolicy.default.evaluate(trust, forDomain: "example.com"))
        #expect(trust.verifiedChain.isEmpty, "a refusal records nothing")
        #expect(SecurityPolicy.default.evaluate(trust, forDomain: "localhost"))
        #expect(trust.verifiedChain == [pki.leaf, pki.intermediate, pki.root].map(\.certificate))
        #expect(!SecurityPolicy.default.evaluate(trust, forDomain: "example.com"))
        #expect(trust.verifiedChain.count == 3, "a later refusal keeps the last verified chain")
    }
}
