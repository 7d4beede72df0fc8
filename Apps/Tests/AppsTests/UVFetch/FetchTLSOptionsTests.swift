import Foundation
import Testing
import UVFetchCore
@testable import UVNetworking

/// `--cacert`, `--insecure` and `--pin-sha256` against the test https nginx, and `--timeout`.
@Suite(.tags(.nginx), .serialized) struct FetchTLSOptionsTests {
    private func errorKind(_ record: [String: Any]?) -> String? {
        (record?["error"] as? [String: Any])?["kind"] as? String
    }

    @Test func caCertificateFileIsTrustedAndTLSTimeIsRecorded() throws {
        let server = try TestServers.nginxTLS()
        let (_, untrusted, _) = try runFetch([server.url(.valid)])
        #expect(errorKind(untrusted.first) == "tls")
        let (_, trusted, _) = try runFetch([server.url(.valid)], options: ["--cacert", server.pki.rootPEMPath])
        #expect(trusted.first?["status"] as? Int == 200)
        let timings = try #require(trusted.first?["timings"] as? [String: Any])
        #expect(timings["tls"] is Double)
        #expect(timings["connect"] is Double)
    }

    @Test func insecureAcceptsASelfSignedCertificate() throws {
        let server = try TestServers.nginxTLS()
        let (_, refused, _) = try runFetch([server.url(.selfSigned)])
        #expect(errorKind(refused.first) == "tls")
        let (_, accepted, _) = try runFetch([server.url(.selfSigned)], options: ["--insecure"])
        #expect(accepted.first?["status"] as? Int == 200)
    }

    @Test func pinsAcceptTheServersKeyOnly() throws {
        let server = try TestServers.nginxTLS()
        let trust = ["--cacert", server.pki.rootPEMPath]
        let (_, pinned, _) = try runFetch([server.url(.valid)],
                                          options: trust + ["--pin-sha256", server.pki.leaf.certificate.publicKeySHA256])
        #expect(pinned.first?["status"] as? Int == 200)
        let (_, mismatched, _) = try runFetch([server.url(.valid)],
                                              options: trust + ["--pin-sha256", server.extraCertificate.certificate.publicKeySHA256])
        #expect(errorKind(mismatched.first) == "tls")
    }

    @Test func timeoutEndsASlowRequest() throws {
        let base = try TestServers.httpbin().baseURL
        let (_, records, _) = try runFetch(["\(base)/delay/3"], options: ["--timeout", "0.5"])
        #expect(errorKind(records.first) == "timeout")
        #expect((records.first?["timings"] as? [String: Any])?["total"] as? Double ?? 0 < 2500)
    }
}
