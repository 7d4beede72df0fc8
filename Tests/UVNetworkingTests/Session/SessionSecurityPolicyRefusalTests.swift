import Foundation
import Testing
@testable import UVNetworking

/// `setSecurityPolicy` refuses a pinning mode with nothing pinned for it, which would refuse
/// every server, and keeps the policy it had.
@Suite(.tags(.loopback)) struct SessionSecurityPolicyRefusalTests {
    let pinned = TestPKI.standard.leaf.certificate

    private func refusal(_ set: () throws(NetworkingError) -> Void) -> NetworkingError? {
        do throws(NetworkingError) {
            try set()
            return nil
        } catch {
            return error
        }
    }

    @Test func aPinningModeWithNothingPinnedIsRefused() {
        let manager = SessionManager()
        var keyHashOnly = SecurityPolicy(pinningMode: .certificate)
        keyHashOnly.pinnedPublicKeyHashes = [pinned.publicKeySHA256]
        for policy in [SecurityPolicy(pinningMode: .certificate), SecurityPolicy(pinningMode: .publicKey), keyHashOnly] {
            let error = refusal { () throws(NetworkingError) in try manager.setSecurityPolicy(policy) }
            #expect(error?.code == .invalidCertificate, "\(policy.pinningMode)")
            #expect(error?.detail.contains("would refuse every server") == true, "\(error?.detail ?? "accepted")")
            let perHost = refusal { () throws(NetworkingError) in try manager.setSecurityPolicy(policy, forHost: "a.test") }
            #expect(perHost?.code == .invalidCertificate, "\(policy.pinningMode)")
        }
        // The policies in place are kept.
        #expect(manager.securityPolicy == .default)
        #expect(manager.securityPolicy(forHost: "a.test") == .default)
        manager.invalidateSessionCancelingTasks(true, resetSession: false)
    }

    @Test func aPinnedOrUnpinnedPolicyIsTaken() throws {
        let manager = SessionManager()
        var keyOnly = SecurityPolicy(pinningMode: .publicKey)
        keyOnly.pinnedPublicKeyHashes = [pinned.publicKeySHA256]
        for policy in [SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [pinned]),
                       SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [pinned]), keyOnly, .default] {
            try manager.setSecurityPolicy(policy)
            #expect(manager.securityPolicy == policy)
            try manager.setSecurityPolicy(policy, forHost: "a.test")
            #expect(manager.securityPolicy(forHost: "a.test") == policy)
        }
        try manager.setSecurityPolicy(nil, forHost: "a.test")
        manager.invalidateSessionCancelingTasks(true, resetSession: false)
    }
}
