import Foundation
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// TLS outcomes in the session's log against nginx: the handshake's version, cipher and
    /// resumption, and a pinning refusal's reason, never a pinned key or a certificate.
    @Suite(.tags(.nginx)) struct TLSLoggingTests {
        let nginx: NginxTLSServer
        init() throws { nginx = try TestServers.nginxTLS() }

        @Test func handshakesAndPinningRefusalsAreLoggedWithoutKeys() throws {
            let recording = LogRecording()
            let harness = tlsHarness { $0.backgroundActivityLogger = recording.logger() }
            let good = nginx.pki.intermediate.certificate.publicKeySHA256
            let wrong = nginx.extraCertificate.certificate.publicKeySHA256
            var policy = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [nginx.pki.leaf.certificate])
            policy.pinnedPublicKeyHashes = [good]
            try harness.manager.setSecurityPolicy(policy)
            #expect(harness.fetch(nginx.url(.valid)).status == 200)
            policy = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [nginx.extraCertificate.certificate])
            policy.pinnedPublicKeyHashes = [wrong]
            try harness.manager.setSecurityPolicy(policy)
            #expect(harness.fetch(nginx.url(.valid)).code == .serverCertificateUntrusted)
            harness.finish()

            let opened = try #require(recording.lines("connection opened, TLS handshake done").first)
            #expect(opened.metadata["tls.protocol.version"]?.hasPrefix("TLSv1.") == true, "\(opened.text)")
            #expect(opened.metadata["tls.cipher"] != nil)
            #expect(opened.metadata["tls.resumed"] == "false")
            let refused = try #require(recording.lines("connection failed to open").first)
            #expect(refused.metadata["error"]?.hasPrefix("serverCertificateUntrusted") == true, "\(refused.text)")
            // Neither the pins nor any certificate's bytes (PEM bodies, in 40-character pieces).
            let certificates = [nginx.pki.leaf, nginx.pki.intermediate, nginx.pki.root, nginx.extraCertificate]
            let pieces = certificates.flatMap { certificate in
                certificate.pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.map { String($0.prefix(40)) }
            }
            for line in recording.recorded {
                for secret in [good, wrong] + pieces {
                    #expect(!line.text.contains(secret), "\(line.level) line logs key material: \(line.text)")
                }
            }
        }
    }
}
