import Foundation
import Testing
@testable import UVNetworking

/// A harness whose session trusts the test root (and nothing else), and maps the wildcard
/// site's names to loopback.
func tlsHarness(_ configure: (inout SessionConfiguration) -> Void = { _ in }) -> ClientHarness {
    ClientHarness { configuration in
        configuration.tls.trustsSystemCAs = false
        configuration.tls.additionalTrustedCAFiles = [TestPKI.standard.rootPEMPath]
        configuration.hostAddressOverrides = ["a.uvn.test": "127.0.0.1", "a.b.uvn.test": "127.0.0.1", "uvn.test": "127.0.0.1"]
        configuration.connectTimeout = 5
        configure(&configuration)
    }
}

extension EndToEnd {
    /// https against nginx: the happy paths, the certificate failures, resumption.
    @Suite(.tags(.nginx)) struct TLSTests {
        let nginx: NginxTLSServer
        init() throws { nginx = try TestServers.nginxTLS() }

        @Test func validChainServesKeepAliveRequestsOnOneConnection() async throws {
            let harness = tlsHarness()
            defer { harness.finish() }
            let first = try await harness.manager.data(for: Request(url: URL(string: nginx.url(.valid))!))
            let second = try await harness.manager.data(for: Request(url: URL(string: nginx.url(.valid))!))
            #expect(first.response.status.code == 200)
            #expect(String(decoding: first.data, as: UTF8.self) == NginxTLSServer.helloBody)
            #expect(second.metrics?.isReusedConnection == true)
            let tls = try #require(first.metrics?.tls)
            #expect(["TLSv1.2", "TLSv1.3"].contains(tls.protocolVersion))
            // The chain the policy verified: leaf, intermediate, root.
            #expect(tls.verifiedChain.map(\.derData) == [nginx.pki.leaf.der, nginx.pki.intermediate.der, nginx.pki.root.der])
        }

        @Test func connectionIdlePastItsBufferReleaseServesTheNextRequest() async throws {
            let harness = tlsHarness()
            defer { harness.finish() }
            let url = URL(string: nginx.url(.valid))!
            _ = try await harness.manager.data(for: Request(url: url))
            // Idle past the point where it gives OpenSSL's record buffers back. (Not Task.sleep:
            // its timer descriptor would count as a leak.)
            usleep(UInt32(HTTP1Connection.memoryReleaseDelay + 300) * 1000)
            let second = try await harness.manager.data(for: Request(url: url))
            #expect(second.response.status.code == 200)
            #expect(String(decoding: second.data, as: UTF8.self) == NginxTLSServer.helloBody)
            #expect(second.metrics?.isReusedConnection == true)
        }

        @Test func largeBodyArrivesIntact() {
            let harness = tlsHarness()
            defer { harness.finish() }
            let outcome = harness.fetch(nginx.url(.valid, path: "/large"))
            #expect(outcome.status == 200)
            #expect(outcome.data.map(Array.init) == NginxServer.largeBody(count: NginxServer.largeSize))
        }

        @Test func ipLiteralIsVerifiedAgainstTheIPAddressSAN() {
            let harness = tlsHarness()
            defer { harness.finish() }
            #expect(harness.fetch(nginx.url(.valid, host: "127.0.0.1")).status == 200)
        }

        @Test func hostNameOverrideStillVerifiesTheName() {
            let harness = tlsHarness { $0.hostAddressOverrides["localhost.invalid"] = "127.0.0.1" }
            defer { harness.finish() }
            // Reaches the right server, but the certificate is not for that name.
            #expect(harness.fetch(nginx.url(.valid, host: "localhost.invalid")).code == .serverCertificateUntrusted)
        }

        @Test(arguments: [
            (NginxTLSServer.Site.expired, "expired"),
            (.notYetValid, "not yet valid"),
            (.wrongHost, "host"),
            (.selfSigned, "self-signed"),
            (.untrustedRoot, "issuer"),
            (.incompleteChain, "issuer"),
            (.commonNameOnly, "host"),
        ])
        func invalidCertificateIsRefusedWithAFNetworkingsCode(site: NginxTLSServer.Site, reason: String) throws {
            let harness = tlsHarness()
            defer { harness.finish() }
            let url = nginx.url(site)
            let requestsBefore = nginx.accessLog(site, uri: "/hello").count
            let outcome = harness.fetch(url)
            // Seen once with no error at all (a full `make test`, the seven cases at once): say
            // what came instead, and what nginx logged, should it come again.
            let logged = nginx.accessLog(site, uri: "/hello").count - requestsBefore
            let error = try #require(outcome.error as? NetworkingError,
                                     "no error from \(url): status \(outcome.status ?? 0), calls \(outcome.calls), nginx logged \(logged)")
            #expect(error.code == .serverCertificateUntrusted)
            #expect(error.kind == .tls)
            #expect(error.nsError.code == -1202)
            #expect(error.failingURL?.absoluteString == url)
            #expect(error.detail.lowercased().contains(reason), "\(error.detail)")
            // The chain the server sent is in the error, leaf first.
            let trust = try #require(error.serverTrust)
            #expect(trust.host == "localhost")
            #expect(!trust.certificates.isEmpty)
            #expect(error.nsError.userInfo["NSErrorPeerCertificateChainKey"] as? [Data] == trust.certificates.map(\.derData))
            // Nothing was sent: nginx logged no request.
            #expect(nginx.accessLog(site, uri: "/hello").count == requestsBefore)
        }

        @Test func wildcardMatchesOneLabelOnly() {
            let harness = tlsHarness()
            defer { harness.finish() }
            #expect(harness.fetch(nginx.url(.wildcard, host: "a.uvn.test")).status == 200)
            #expect(harness.fetch(nginx.url(.wildcard, host: "a.b.uvn.test")).code == .serverCertificateUntrusted)
            #expect(harness.fetch(nginx.url(.wildcard, host: "uvn.test")).code == .serverCertificateUntrusted)
        }

        @Test func secondConnectionResumesTheSession() async throws {
            let harness = tlsHarness()
            defer { harness.finish() }
            // /close makes nginx close after each response (with close_notify), so each request
            // needs a new connection.
            let request = Request(url: URL(string: nginx.url(.renewed, path: "/close"))!)
            let first = try await harness.manager.data(for: request)
            let second = try await harness.manager.data(for: request)
            #expect(first.metrics?.tls?.isSessionResumed == false)
            #expect(second.metrics?.isReusedConnection == false)
            #expect(second.metrics?.tls?.isSessionResumed == true)
            // A resumed session exchanged no certificates.
            #expect(second.metrics?.tls?.verifiedChain.isEmpty == true)
            #expect(nginx.accessLog(.renewed, uri: "/close").map { $0.hasSuffix(" r") } == [false, true])
        }

        @Test func resumptionCanBeTurnedOff() async throws {
            let harness = tlsHarness { $0.tls.resumesSessions = false }
            defer { harness.finish() }
            let request = Request(url: URL(string: nginx.url(.valid, path: "/close"))!)
            for _ in 0..<2 {
                let response = try await harness.manager.data(for: request)
                #expect(response.metrics?.tls?.isSessionResumed == false)
            }
        }

        @Test func tls13CanBeRequired() async throws {
            let harness = tlsHarness { $0.tls.minimumVersion = .v1_3 }
            defer { harness.finish() }
            let response = try await harness.manager.data(for: Request(url: URL(string: nginx.url(.valid))!))
            #expect(response.metrics?.tls?.protocolVersion == "TLSv1.3")
        }

        @Test func missingCAFileFailsTheTaskClearly() {
            let harness = tlsHarness { $0.tls.additionalTrustedCAFiles = ["/nonexistent/ca.pem"] }
            defer { harness.finish() }
            let outcome = harness.fetch(nginx.url(.valid))
            #expect(outcome.code == .invalidCertificate)
            #expect((outcome.error as? NetworkingError)?.detail.contains("/nonexistent/ca.pem") == true)
        }

        @Test func systemTrustStoreDoesNotTrustTheTestRoot() {
            let harness = ClientHarness()
            defer { harness.finish() }
            #expect(harness.fetch(nginx.url(.valid)).code == .serverCertificateUntrusted)
        }
    }
}
