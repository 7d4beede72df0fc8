import Foundation
import Testing
@testable import UVNetworking

/// The reason given when a pinned chain is refused because the session's anchors do not trust
/// it: whether the pin matched, and the settings that would let it through.
@Suite(.tags(.unit)) struct SecurityPolicyUntrustedPinTests {
    /// A self-signed certificate for localhost, trusted by no anchor of the standard PKI.
    let selfSigned = TestPKI.makeSelfSigned(dnsNames: ["localhost"])
    let pki = TestPKI.standard

    private func reason(_ mode: SecurityPolicy.PinningMode, pinning pinned: TestCertificate) -> String {
        let policy = SecurityPolicy(pinningMode: mode, pinnedCertificates: [pinned.certificate])
        let outcome = policy.evaluation(of: pki.trust([selfSigned]), forDomain: "localhost")
        #expect(!outcome.isTrusted)
        return outcome.failureReason ?? ""
    }

    @Test func aMatchingPinOnAnUntrustedChainSaysSoAndNamesTheWayOut() {
        for (mode, matched) in [(SecurityPolicy.PinningMode.certificate, "the pinned certificate matched"),
                                (.publicKey, "a pinned public key matched")] {
            let text = reason(mode, pinning: selfSigned)
            #expect(text.hasPrefix(matched + ", but the chain is not trusted: "), "\(text)")
            #expect(text.contains("self-signed certificate"), "OpenSSL's reason is kept: \(text)")
            #expect(text.contains("additionalTrustedCAFiles") && text.contains("allowInvalidCertificates"), "\(text)")
        }
    }

    @Test func aPinThatDoesNotMatchEitherSaysNeitherDid() {
        for mode in [SecurityPolicy.PinningMode.certificate, .publicKey] {
            let text = reason(mode, pinning: pki.clientRoot)
            #expect(text.hasPrefix("the chain is not trusted: "), "\(text)")
            #expect(text.hasSuffix("no pin matched it either"), "\(text)")
            #expect(!text.contains("allowInvalidCertificates"), "no way out to suggest: \(text)")
        }
    }

    @Test func withoutPinningTheReasonIsOpenSSLsAlone() {
        let outcome = SecurityPolicy.default.evaluation(of: pki.trust([selfSigned]), forDomain: "localhost")
        #expect(outcome.failureReason?.hasPrefix("self-signed certificate") == true, "\(outcome.failureReason ?? "")")
    }
}
