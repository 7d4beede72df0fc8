import Foundation
import Testing
@testable import UVNetworking

/// Chain and host validation under the default policy (no pinning), against anchors holding
/// only the test root.
@Suite(.tags(.loopback)) struct SecurityPolicyEvaluationTests {
    let pki = TestPKI.standard
    let policy = SecurityPolicy.default

    private func evaluate(_ chain: [TestCertificate], domain: String? = "localhost",
                          policy: SecurityPolicy = .default) -> TrustEvaluation {
        policy.evaluation(of: pki.trust(chain), forDomain: domain)
    }

    private func expectRefused(_ outcome: TrustEvaluation, _ reason: String,
                               sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!outcome.isTrusted, sourceLocation: sourceLocation)
        #expect(outcome.failureReason?.contains(reason) == true, "\(outcome.failureReason ?? "nil")",
                sourceLocation: sourceLocation)
    }

    @Test func validChainIsTrustedAndReturnedToTheRoot() {
        let outcome = evaluate(pki.sentChain)
        #expect(outcome.isTrusted)
        #expect(outcome.failureReason == nil)
        #expect(outcome.verifiedChain == [pki.leaf, pki.intermediate, pki.root].map(\.certificate))
        #expect(policy.evaluate(pki.trust(pki.sentChain), forDomain: "127.0.0.1"))
        #expect(policy.evaluate(pki.trust(pki.sentChain), forDomain: "::1"))
    }

    @Test func expiredLeafIsRefusedWithItsDate() {
        let expired = TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: ["localhost"],
                                       notBefore: Date() - 30 * TestPKI.day, notAfter: Date() - TestPKI.day)
        let outcome = evaluate([expired, pki.intermediate])
        expectRefused(outcome, "certificate has expired")
        expectRefused(outcome, "notAfter")
        expectRefused(outcome, "depth 0")
        #expect(outcome.verifiedChain.count == 3, "the chain is still built in full")
    }

    @Test func notYetValidLeafIsRefused() {
        let early = TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: ["localhost"],
                                     notBefore: Date() + TestPKI.day, notAfter: Date() + 30 * TestPKI.day)
        let outcome = evaluate([early, pki.intermediate])
        expectRefused(outcome, "certificate is not yet valid")
        expectRefused(outcome, "notBefore")
    }

    @Test func expiredIntermediateIsRefused() {
        let old = TestPKI.makeIntermediate(name: "Old Intermediate", issuer: pki.root,
                                           notBefore: Date() - 30 * TestPKI.day, notAfter: Date() - TestPKI.day)
        let leaf = TestPKI.makeLeaf(issuer: old, dnsNames: ["localhost"])
        expectRefused(evaluate([leaf, old]), "depth 1")
    }

    @Test func wrongHostIsRefused() {
        expectRefused(evaluate(pki.sentChain, domain: "example.com"), "host name mismatch")
    }

    @Test func hostIsNotCheckedWithoutDomainOrWhenTurnedOff() {
        #expect(evaluate(pki.sentChain, domain: nil).isTrusted)
        var relaxed = policy
        relaxed.validatesDomainName = false
        #expect(evaluate(pki.sentChain, domain: "example.com", policy: relaxed).isTrusted)
        let expired = TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: ["localhost"],
                                       notBefore: Date() - 30 * TestPKI.day, notAfter: Date() - TestPKI.day)
        #expect(!evaluate([expired, pki.intermediate], domain: nil, policy: relaxed).isTrusted,
                "turning the host check off leaves the chain check on")
    }

    @Test func wildcardAndPartialWildcardCertificates() {
        let wildcard = TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: ["*.example.test"])
        #expect(evaluate([wildcard, pki.intermediate], domain: "a.example.test").isTrusted)
        expectRefused(evaluate([wildcard, pki.intermediate], domain: "a.b.example.test"), "host name mismatch")
        expectRefused(evaluate([wildcard, pki.intermediate], domain: "example.test"), "host name mismatch")
        let partial = TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: ["f*.example.test"])
        expectRefused(evaluate([partial, pki.intermediate], domain: "foo.example.test"), "host name mismatch")
    }

    @Test func ipAddressEntries() {
        #expect(evaluate(pki.sentChain, domain: "127.0.0.1").isTrusted)
        #expect(evaluate(pki.sentChain, domain: "[::1]").isTrusted)
        expectRefused(evaluate(pki.sentChain, domain: "127.0.0.2"), "host name mismatch")
        let dnsSpelled = TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: ["127.0.0.1"])
        expectRefused(evaluate([dnsSpelled, pki.intermediate], domain: "127.0.0.1"), "host name mismatch")
    }

    @Test func commonNameOnlyCertificateIsRefused() {
        let cnOnly = TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: ["localhost"], includeSAN: false)
        expectRefused(evaluate([cnOnly, pki.intermediate]), "host name mismatch")
    }

    @Test func selfSignedIsRefused() {
        let selfSigned = TestPKI.makeSelfSigned(dnsNames: ["localhost"])
        let outcome = evaluate([selfSigned])
        expectRefused(outcome, "self")
        #expect(outcome.verifiedChain == [selfSigned.certificate])
    }

    @Test func unknownRootIsRefused() {
        let otherRoot = TestPKI.makeRoot(name: "Other Root")
        let otherIntermediate = TestPKI.makeIntermediate(name: "Other Intermediate", issuer: otherRoot)
        let leaf = TestPKI.makeLeaf(issuer: otherIntermediate, dnsNames: ["localhost"])
        expectRefused(evaluate([leaf, otherIntermediate]), "unable to get local issuer certificate")
        expectRefused(evaluate([leaf, otherIntermediate, otherRoot]), "self")
    }

    @Test func incompleteChainIsRefused() {
        expectRefused(evaluate([pki.leaf]), "unable to get local issuer certificate")
    }

    @Test func unrelatedExtraCertificatesDoNotHurtAValidChain() {
        let stray = TestPKI.makeSelfSigned(dnsNames: ["stray.test"])
        let outcome = evaluate([pki.leaf, stray, pki.intermediate])
        #expect(outcome.isTrusted)
        #expect(outcome.verifiedChain == [pki.leaf, pki.intermediate, pki.root].map(\.certificate))
    }

    @Test func clientOnlyCertificateIsNoServerCertificate() {
        let clientOnly = TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: ["localhost"], extendedKeyUsage: .clientAuth)
        expectRefused(evaluate([clientOnly, pki.intermediate]), "certificate purpose")
    }

    @Test func noCertificateIsRefused() {
        expectRefused(evaluate([]), "no certificate")
    }

    @Test func systemAnchorsDoNotTrustTheTestRoot() {
        let trust = ServerTrust(host: "localhost", certificates: pki.sentChain.map(\.certificate), anchors: .system)
        #expect(!policy.evaluate(trust, forDomain: "localhost"))
    }
}
