import Testing
@testable import UVNetworking

@Suite(.tags(.unit)) struct SecurityPolicyTests {
    let pki = TestPKI.standard

    @Test func defaultsAreAFNetworkings() {
        let policy = SecurityPolicy.default
        #expect(policy.pinningMode == .none)
        #expect(policy.pinnedCertificates.isEmpty)
        #expect(policy.pinnedPublicKeyHashes.isEmpty)
        #expect(policy.validatesDomainName)
        #expect(!policy.allowInvalidCertificates)
        #expect(!policy.hasPins)
        #expect(policy == SecurityPolicy())
    }

    @Test func hasPinsNeedsAModeAndAPin() {
        #expect(!SecurityPolicy(pinningMode: .none, pinnedCertificates: [pki.leaf.certificate]).hasPins)
        #expect(!SecurityPolicy(pinningMode: .certificate).hasPins)
        #expect(!SecurityPolicy(pinningMode: .publicKey).hasPins)
        #expect(SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [pki.leaf.certificate]).hasPins)
        var keyOnly = SecurityPolicy(pinningMode: .publicKey)
        keyOnly.pinnedPublicKeyHashes = [pki.leaf.certificate.publicKeySHA256]
        #expect(keyOnly.hasPins)
    }

    @Test func equalityIsByValue() {
        var first = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [pki.root.certificate])
        let second = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [pki.root.certificate])
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        first.allowInvalidCertificates = true
        #expect(first != second)
        first.allowInvalidCertificates = false
        first.pinnedPublicKeyHashes = ["x"]
        #expect(first != second)
        first.pinnedPublicKeyHashes = []
        first.validatesDomainName = false
        #expect(first != second)
        first.validatesDomainName = true
        first.pinningMode = .publicKey
        #expect(first != second)
        first.pinningMode = .certificate
        #expect(first == second)
    }

    @Test func changingPinnedCertificatesRebuildsTheAnchors() {
        var policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [pki.clientRoot.certificate])
        let copy = policy
        #expect(!policy.evaluate(pki.trust(pki.sentChain), forDomain: "localhost"))
        policy.pinnedCertificates = [pki.root.certificate]
        #expect(policy.evaluate(pki.trust(pki.sentChain), forDomain: "localhost"))
        #expect(!copy.evaluate(pki.trust(pki.sentChain), forDomain: "localhost"), "a copy keeps its own pins")
        policy.pinnedCertificates.insert(pki.clientRoot.certificate)
        policy.pinnedCertificates.remove(pki.root.certificate)
        #expect(!policy.evaluate(pki.trust(pki.sentChain), forDomain: "localhost"))
    }
}
