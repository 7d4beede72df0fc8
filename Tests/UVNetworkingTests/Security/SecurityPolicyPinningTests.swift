import Foundation
import Testing
@testable import UVNetworking

/// Certificate and public-key pinning, on top of the chain checks.
@Suite(.tags(.unit)) struct SecurityPolicyPinningTests {
    let pki = TestPKI.standard

    private func policy(_ mode: SecurityPolicy.PinningMode, _ pinned: [TestCertificate] = [],
                        keys: Set<String> = [], allowInvalid: Bool = false) -> SecurityPolicy {
        var policy = SecurityPolicy(pinningMode: mode, pinnedCertificates: Set(pinned.map(\.certificate)))
        policy.pinnedPublicKeyHashes = keys
        policy.allowInvalidCertificates = allowInvalid
        return policy
    }

    private func evaluate(_ policy: SecurityPolicy, _ chain: [TestCertificate], domain: String? = "localhost") -> TrustEvaluation {
        policy.evaluation(of: pki.trust(chain), forDomain: domain)
    }

    @Test func certificatePinOnLeafIntermediateOrRoot() {
        let leafPinned = evaluate(policy(.certificate, [pki.leaf]), pki.sentChain)
        #expect(leafPinned.isTrusted)
        #expect(leafPinned.verifiedChain == [pki.leaf.certificate], "the pinned leaf is the anchor")
        let intermediatePinned = evaluate(policy(.certificate, [pki.intermediate]), pki.sentChain)
        #expect(intermediatePinned.isTrusted)
        #expect(intermediatePinned.verifiedChain == [pki.leaf, pki.intermediate].map(\.certificate))
        let rootPinned = evaluate(policy(.certificate, [pki.root]), pki.sentChain)
        #expect(rootPinned.isTrusted)
        #expect(rootPinned.verifiedChain == [pki.leaf, pki.intermediate, pki.root].map(\.certificate))
    }

    @Test func certificatePinMismatchIsRefused() {
        let outcome = evaluate(policy(.certificate, [pki.clientRoot]), pki.sentChain)
        #expect(!outcome.isTrusted)
        #expect(outcome.failureReason?.contains("pinned certificates") == true, "\(outcome.failureReason ?? "")")
    }

    @Test func certificatePinStillChecksHost() {
        let outcome = evaluate(policy(.certificate, [pki.leaf], allowInvalid: true), pki.sentChain, domain: "example.com")
        #expect(!outcome.isTrusted)
        #expect(outcome.failureReason?.contains("host name mismatch") == true)
    }

    @Test func expiredPinnedLeafIsRefusedEvenWithInvalidCertificatesAllowed() {
        let expired = TestPKI.makeSelfSigned(dnsNames: ["localhost"], notBefore: Date() - 30 * TestPKI.day,
                                             notAfter: Date() - TestPKI.day)
        let outcome = evaluate(policy(.certificate, [expired], allowInvalid: true), [expired])
        #expect(!outcome.isTrusted)
        #expect(outcome.failureReason?.contains("certificate has expired") == true, "\(outcome.failureReason ?? "")")
    }

    @Test func publicKeyPinOnAnyCertificateOfTheChain() {
        for pinned in [pki.leaf, pki.intermediate, pki.root] {
            let outcome = evaluate(policy(.publicKey, [pinned]), pki.sentChain)
            #expect(outcome.isTrusted, "\(pinned.certificate)")
            #expect(outcome.verifiedChain.count == 3)
        }
        #expect(!evaluate(policy(.publicKey, [pki.clientRoot]), pki.sentChain).isTrusted)
    }

    @Test func publicKeyPinSurvivesARenewalWithTheSameKeyButNotAKeyChange() {
        let renewed = TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: ["localhost"], key: pki.leaf.key)
        let rekeyed = TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: ["localhost"])
        #expect(evaluate(policy(.publicKey, [pki.leaf]), [renewed, pki.intermediate]).isTrusted)
        let changed = evaluate(policy(.publicKey, [pki.leaf]), [rekeyed, pki.intermediate])
        #expect(!changed.isTrusted)
        #expect(changed.failureReason == "no pinned public key in the verified chain")
        // A certificate pin is on the certificate itself: the renewal breaks it.
        #expect(!evaluate(policy(.certificate, [pki.leaf]), [renewed, pki.intermediate]).isTrusted)
    }

    @Test func spkiHashPinsInTheOWASPForm() {
        let pin = pki.leaf.certificate.publicKeySHA256
        #expect(evaluate(policy(.publicKey, keys: [pin]), pki.sentChain).isTrusted)
        #expect(evaluate(policy(.publicKey, keys: ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", pin]), pki.sentChain).isTrusted,
                "a backup pin next to the live one")
        #expect(!evaluate(policy(.publicKey, keys: ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]), pki.sentChain).isTrusted)
        #expect(!evaluate(policy(.certificate, keys: [pin]), pki.sentChain).isTrusted,
                "certificate mode ignores key hashes")
    }

    @Test func pinningModeWithoutPinsRefuses() {
        #expect(!evaluate(policy(.publicKey), pki.sentChain).isTrusted)
        #expect(!evaluate(policy(.certificate), pki.sentChain).isTrusted)
    }

    @Test func pinsDoNotRescueAnInvalidChainUnlessInvalidCertificatesAreAllowed() {
        let expired = TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: ["localhost"], notBefore: Date() - 30 * TestPKI.day,
                                       notAfter: Date() - TestPKI.day, key: pki.leaf.key)
        #expect(!evaluate(policy(.publicKey, [pki.leaf]), [expired, pki.intermediate]).isTrusted)
        #expect(evaluate(policy(.publicKey, [pki.leaf], allowInvalid: true), [expired, pki.intermediate]).isTrusted)
    }

    /// A server (or an attacker with a certificate from another CA) appends a copy of the
    /// genuine, pinned certificate to a chain it is not part of.
    @Test func aPinnedCertificateAppendedOutsideTheChainDoesNotCount() {
        let otherRoot = TestPKI.makeRoot(name: "Attacker Root")
        let impostor = TestPKI.makeLeaf(issuer: otherRoot, dnsNames: ["localhost"])
        let misissued = TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: ["localhost"])
        for allowInvalid in [false, true] {
            for chain in [[impostor, pki.leaf], [misissued, pki.intermediate, pki.leaf]] {
                let keyPinned = evaluate(policy(.publicKey, [pki.leaf], allowInvalid: allowInvalid), chain)
                #expect(!keyPinned.isTrusted, "public key, allowInvalid \(allowInvalid), \(chain.map(\.certificate))")
                #expect(!keyPinned.verifiedChain.contains(pki.leaf.certificate))
                let certificatePinned = evaluate(policy(.certificate, [pki.leaf], allowInvalid: allowInvalid), chain)
                #expect(!certificatePinned.isTrusted, "certificate, allowInvalid \(allowInvalid), \(chain.map(\.certificate))")
            }
        }
    }

    @Test func publicKeyModeChecksTheHostEvenWithInvalidCertificatesAllowed() {
        // AFNetworking skipped the host check here; a pinned key on a certificate for another
        // host must not pass.
        let selfSigned = TestPKI.makeSelfSigned(dnsNames: ["localhost"])
        let outcome = evaluate(policy(.publicKey, [selfSigned], allowInvalid: true), [selfSigned], domain: "other.test")
        #expect(!outcome.isTrusted)
        #expect(outcome.failureReason?.contains("host name mismatch") == true)
    }
}
