import Foundation
import Synchronization
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// SecurityPolicy pinning against nginx: which pins pass on which server, per-host policies, the
    /// challenge handler's overrides, and that a refused connection is never pooled.
    @Suite(.tags(.nginx)) struct TLSPinningTests {
        let nginx: NginxTLSServer
        init() throws { nginx = try TestServers.nginxTLS() }

        private func policy(_ mode: SecurityPolicy.PinningMode, _ certificates: [TestCertificate] = [],
                            keyHashes: [String] = []) -> SecurityPolicy {
            var policy = SecurityPolicy(pinningMode: mode, pinnedCertificates: Set(certificates.map(\.certificate)))
            policy.pinnedPublicKeyHashes = Set(keyHashes)
            return policy
        }

        private func fetch(_ site: NginxTLSServer.Site, with policy: SecurityPolicy) throws -> Outcome {
            let harness = tlsHarness()
            defer { harness.finish() }
            try harness.manager.setSecurityPolicy(policy)
            return harness.fetch(nginx.url(site))
        }

        @Test func certificatePinOnLeafIntermediateOrRootPasses() throws {
            let pki = nginx.pki
            for pinned in [pki.leaf, pki.intermediate, pki.root] {
                #expect(try fetch(.valid, with: policy(.certificate, [pinned])).status == 200, "pin \(pinned.certificate)")
            }
        }

        /// Pins are checked in the handshake, whatever ALPN then picks: an h2 origin passes with
        /// the right pin and is refused with a wrong one, as over HTTP/1.1.
        @Test func pinsHoldOverHTTP2() throws {
            let front = try TestServers.httpbinH2()
            let right = policy(.publicKey, [nginx.pki.leaf]), wrong = policy(.certificate, [nginx.extraCertificate])
            for (pin, passes) in [(right, true), (wrong, false)] {
                let harness = tlsHarness()
                defer { harness.finish() }
                try harness.manager.setSecurityPolicy(pin)
                let outcome = harness.fetch(front.baseURL + "/get")
                if passes {
                    #expect(outcome.status == 200)
                    #expect(outcome.networkProtocolName == "h2")
                } else {
                    #expect(outcome.code == .serverCertificateUntrusted)
                }
            }
        }

        @Test func certificatePinMismatchIsRefused() throws {
            let outcome = try fetch(.valid, with: policy(.certificate, [nginx.extraCertificate]))
            #expect(outcome.code == .serverCertificateUntrusted)
        }

        @Test func publicKeyPinSurvivesARenewalWithTheSameKey() throws {
            let pin = policy(.publicKey, [nginx.pki.leaf])
            #expect(try fetch(.valid, with: pin).status == 200)
            #expect(try fetch(.renewed, with: pin).status == 200)
            // A certificate pin does not: the renewed certificate is another certificate.
            #expect(try fetch(.renewed, with: policy(.certificate, [nginx.pki.leaf])).code == .serverCertificateUntrusted)
        }

        @Test func spkiHashPinPassesAndAWrongOneFails() throws {
            let hash = nginx.pki.intermediate.certificate.publicKeySHA256
            #expect(try fetch(.valid, with: policy(.publicKey, keyHashes: [hash])).status == 200)
            let other = nginx.extraCertificate.certificate.publicKeySHA256
            #expect(try fetch(.valid, with: policy(.publicKey, keyHashes: [other])).code == .serverCertificateUntrusted)
        }

        @Test func pinnedKeyOnAnAppendedUnrelatedCertificateFails() throws {
            // The server sends the valid chain plus a certificate carrying the pinned key; that
            // certificate is not in the chain OpenSSL verified, so the pin must not match.
            let extra = nginx.extraCertificate
            #expect(try fetch(.appendedExtraCertificate, with: policy(.publicKey, [extra])).code == .serverCertificateUntrusted)
            #expect(try fetch(.appendedExtraCertificate, with: policy(.certificate, [extra])).code == .serverCertificateUntrusted)
            // The chain itself is fine.
            #expect(try fetch(.appendedExtraCertificate, with: .default).status == 200)
        }

        @Test func selfSignedPassesOnlyWithPinningAndAllowInvalid() throws {
            let selfSigned = try Certificate(pemData: Data(contentsOf: URL(fileURLWithPath: nginx.directory + "/selfSigned.pem")))
            for mode in [SecurityPolicy.PinningMode.certificate, .publicKey] {
                var pinned = SecurityPolicy(pinningMode: mode, pinnedCertificates: [selfSigned])
                // AFNetworking's order: an invalid chain is refused before pins are looked at...
                #expect(try fetch(.selfSigned, with: pinned).code == .serverCertificateUntrusted, "\(mode)")
                // ...unless invalid certificates are allowed; then the pin decides, host still checked.
                pinned.allowInvalidCertificates = true
                #expect(try fetch(.selfSigned, with: pinned).status == 200, "\(mode)")
                pinned.pinnedCertificates = [nginx.extraCertificate.certificate]
                #expect(try fetch(.selfSigned, with: pinned).code == .serverCertificateUntrusted, "\(mode)")
            }
            // Allowing invalid certificates while validating the domain needs pins (AFNetworking's rule).
            var unpinned = SecurityPolicy.default
            unpinned.allowInvalidCertificates = true
            #expect(try fetch(.selfSigned, with: unpinned).code == .serverCertificateUntrusted)
            unpinned.validatesDomainName = false
            #expect(try fetch(.selfSigned, with: unpinned).status == 200)
        }

        @Test func perHostPolicyOverridesTheDefault() throws {
            let harness = tlsHarness()
            defer { harness.finish() }
            try harness.manager.setSecurityPolicy(policy(.certificate, [nginx.extraCertificate]))
            #expect(harness.fetch(nginx.url(.valid)).code == .serverCertificateUntrusted)
            try harness.manager.setSecurityPolicy(policy(.certificate, [nginx.pki.root]), forHost: "LOCALHOST")
            #expect(harness.fetch(nginx.url(.valid)).status == 200)
            #expect(harness.fetch(nginx.url(.valid, host: "127.0.0.1")).code == .serverCertificateUntrusted)
            try harness.manager.setSecurityPolicy(nil, forHost: "localhost")
            #expect(harness.fetch(nginx.url(.valid)).code == .serverCertificateUntrusted)
        }

        @Test func refusedConnectionIsClosedAndNeverReused() throws {
            let harness = tlsHarness()
            defer { harness.finish() }
            let baseline = openFileDescriptorCount()
            try harness.manager.setSecurityPolicy(policy(.certificate, [nginx.extraCertificate]))
            for _ in 0..<3 {
                #expect(harness.fetch(nginx.url(.valid, path: "/hello")).code == .serverCertificateUntrusted)
                // The socket is gone as soon as the task failed: nothing went back to a pool.
                #expect(waitUntil(timeout: 5) { openFileDescriptorCount() <= baseline })
            }
            try harness.manager.setSecurityPolicy(.default)
            #expect(harness.fetch(nginx.url(.valid, path: "/hello")).status == 200)
        }

        @Test func challengeHandlerCanAcceptCancelOrDefer() throws {
            let harness = tlsHarness()
            defer { harness.finish() }
            let seen = Mutex<[ProtectionSpace]>([])
            let askedOnTheLoop = Mutex(false)
            let loop = harness.manager.loop
            harness.manager.authenticationChallengeHandler = { _, challenge in
                seen.withLock { $0.append(challenge.protectionSpace) }
                if loop.inLoop { askedOnTheLoop.withLock { $0 = true } }
                let trust = challenge.protectionSpace.serverTrust!
                switch challenge.protectionSpace.port {
                case nginx.ports[.selfSigned]: return .useCredential(.serverTrust(trust))
                case nginx.ports[.expired]: return .cancelAuthenticationChallenge
                case nginx.ports[.wrongHost]: return .fail(NetworkingError(.invalidURL, "refused by the test"))
                default: return .performDefaultHandling
                }
            }
            #expect(harness.fetch(nginx.url(.selfSigned)).status == 200)
            #expect(harness.fetch(nginx.url(.expired)).code == .cancelled)
            let failed = harness.fetch(nginx.url(.wrongHost))
            #expect(failed.code == .serverCertificateUntrusted)
            #expect(((failed.error as? NetworkingError)?.underlyingError as? NetworkingError)?.detail == "refused by the test")
            #expect(harness.fetch(nginx.url(.valid)).status == 200)
            #expect(harness.fetch(nginx.url(.untrustedRoot)).code == .serverCertificateUntrusted)
            let spaces = seen.withLock { $0 }
            #expect(spaces.count == 5)
            #expect(spaces.allSatisfy { $0.authenticationMethod == .serverTrust && $0.scheme == "https" && $0.host == "localhost" })
            #expect(spaces.first?.serverTrust?.certificates.count == 1)
            // The handler (and the evaluation with it) runs on a worker, never the loop thread.
            #expect(askedOnTheLoop.withLock { $0 } == false)
        }

        /// A correct pin on the self-signed site: the error says the pin matched and names the
        /// settings that let the chain through; each of them does.
        @Test func aMatchingPinOnSelfSignedNamesTheWayOutAndEachWayWorks() throws {
            let selfSignedPath = nginx.directory + "/selfSigned.pem"
            let selfSigned = try Certificate(pemData: Data(contentsOf: URL(fileURLWithPath: selfSignedPath)))
            for mode in [SecurityPolicy.PinningMode.certificate, .publicKey] {
                let pinned = SecurityPolicy(pinningMode: mode, pinnedCertificates: [selfSigned])
                let outcome = try fetch(.selfSigned, with: pinned)
                #expect(outcome.code == .serverCertificateUntrusted, "\(mode)")
                let detail = (outcome.error as? NetworkingError)?.detail ?? ""
                #expect(detail.contains("matched, but the chain is not trusted"), "\(mode): \(detail)")
                #expect(detail.contains("additionalTrustedCAFiles") && detail.contains("allowInvalidCertificates"), "\(detail)")
                // The certificate as a trusted CA file: the same pinned policy passes.
                let trusted = tlsHarness { $0.tls.additionalTrustedCAFiles.append(selfSignedPath) }
                try trusted.manager.setSecurityPolicy(pinned)
                #expect(trusted.fetch(nginx.url(.selfSigned)).status == 200, "\(mode)")
                trusted.finish()
                // Or trusted by the pin alone.
                var byPin = pinned
                byPin.allowInvalidCertificates = true
                #expect(try fetch(.selfSigned, with: byPin).status == 200, "\(mode)")
            }
        }

        @Test func pinningPolicyNeedsAnHTTPSBaseURL() throws {
            let pinned = policy(.publicKey, [nginx.pki.leaf])
            let plain = HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1:1/"))
            #expect(throws: NetworkingError.self) { try plain.setSecurityPolicy(pinned) }
            #expect(plain.securityPolicy.pinningMode == .none)
            try plain.setSecurityPolicy(.default)
            let none = HTTPSessionManager()
            #expect(throws: NetworkingError.self) { try none.setSecurityPolicy(pinned) }
            let secure = HTTPSessionManager(baseURL: URL(string: "https://localhost:1/"))
            try secure.setSecurityPolicy(pinned)
            #expect(secure.securityPolicy == pinned)
        }
    }
}
