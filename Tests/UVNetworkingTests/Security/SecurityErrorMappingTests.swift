import Foundation
import Testing
@testable import UVNetworking

/// Each `SecurityError` becomes the `NetworkingError` the public API has always reported.
@Suite(.tags(.unit)) struct SecurityErrorMappingTests {
    private struct Cause: Error, LocalizedError {
        var errorDescription: String? { "no such file" }
    }

    @Test(arguments: [
        (SecurityError.notDERCertificate(byteCount: 3, openSSL: "too long"), NetworkingError.Code.invalidCertificate,
         "the data is not a DER X.509 certificate (3 bytes) (too long)"),
        (.noPEMCertificate(openSSL: ""), .invalidCertificate, "the data holds no PEM certificate"),
        (.noPEMCertificate(openSSL: "no start line"), .invalidCertificate, "the data holds no PEM certificate (no start line)"),
        (.damagedPEMCertificate(index: 2, openSSL: "bad base64 decode"), .invalidCertificate,
         "PEM certificate 2 of the data is damaged (bad base64 decode)"),
        (.identityCertificateUnreadable(source: "id.pem", cause: .noPEMCertificate(openSSL: "")), .invalidClientIdentity,
         "the certificate of id.pem cannot be read: the data holds no PEM certificate"),
        (.privateKeyUnreadable(source: "id.pem", problem: .encryptedWithoutPassword, openSSL: ""), .invalidClientIdentity,
         "the private key of id.pem cannot be read: it is encrypted and no password was given"),
        (.privateKeyUnreadable(source: "id.pem", problem: .wrongPasswordOrDamaged, openSSL: "bad decrypt"), .invalidClientIdentity,
         "the private key of id.pem cannot be read: the password is wrong or the key is damaged (bad decrypt)"),
        (.privateKeyUnreadable(source: "id.pem", problem: .noPEMKey, openSSL: ""), .invalidClientIdentity,
         "the private key of id.pem cannot be read: the data holds no PEM private key"),
        (.keyDoesNotMatchCertificate(source: "id.pem", subject: "CN=client", openSSL: "key values mismatch"), .invalidClientIdentity,
         "the private key of id.pem does not belong to its certificate \"CN=client\" (key values mismatch)"),
        (.notPKCS12(source: "id.p12", openSSL: ""), .invalidClientIdentity, "id.p12 is not a PKCS#12 archive"),
        (.pkcs12Unopenable(source: "id.p12", openSSL: "mac verify failure"), .invalidClientIdentity,
         "id.p12 cannot be opened: wrong password or unsupported encryption (mac verify failure)"),
        (.pkcs12Incomplete(source: "id.p12"), .invalidClientIdentity, "id.p12 holds no certificate with its private key"),
        (.certificateRefused(subject: "CN=c", openSSL: "ee key too small"), .invalidClientIdentity,
         "the client certificate \"CN=c\" was refused (ee key too small)"),
        (.chainCertificateRefused(subject: "CN=i", openSSL: ""), .invalidClientIdentity, "the chain certificate \"CN=i\" was refused"),
        (.privateKeyRefused(subject: "CN=c", openSSL: ""), .invalidClientIdentity, "the private key of \"CN=c\" was refused"),
        (.systemCAsUnloadable(openSSL: "x"), .invalidCertificate, "the system's CA certificates could not be loaded (x)"),
        (.caFileUnreadable(path: "/ca.pem"), .invalidCertificate, "the CA file /ca.pem does not exist or cannot be read"),
        (.caFileHoldsNoCertificate(path: "/ca.pem", openSSL: "no certificate or crl found"), .invalidCertificate,
         "the CA file /ca.pem holds no PEM certificate (no certificate or crl found)"),
        (.caDirectoryMissing(path: "/cas"), .invalidCertificate, "the CA directory /cas does not exist"),
        (.caDirectoryUnloadable(path: "/cas", openSSL: ""), .invalidCertificate, "the CA directory /cas could not be added"),
        (.challengeCancelled(host: "example.com"), .cancelled,
         "the authentication challenge handler cancelled the connection to example.com"),
    ] as [(SecurityError, NetworkingError.Code, String)])
    func mapsToCodeAndDetail(_ error: SecurityError, code: NetworkingError.Code, detail: String) {
        let mapped = NetworkingError(error)
        #expect(mapped.code == code)
        #expect(mapped.detail == detail)
        #expect(mapped.serverTrust == nil && mapped.failingURL == nil && mapped.underlyingError == nil)
    }

    @Test func unreadableIdentityFileCarriesItsCause() {
        let mapped = NetworkingError(.identityFileUnreadable(role: "certificate", path: "/id.pem", cause: Cause()))
        #expect(mapped.code == .invalidClientIdentity)
        #expect(mapped.detail == "the certificate file /id.pem cannot be read: no such file")
        #expect(mapped.underlyingError is Cause)
    }

    @Test func untrustedChainCarriesTrustURLAndCause() {
        let trust = TestPKI.standard.trust(TestPKI.standard.sentChain, host: "::1")
        let plain = NetworkingError(.untrusted(trust, port: 8443, reason: "the security policy refused it", cause: nil))
        #expect(plain.code == .serverCertificateUntrusted)
        #expect(plain.detail == "The certificate for this server is invalid; connecting to [::1] could put confidential information at risk: the security policy refused it")
        #expect(plain.failingURL == URL(string: "https://[::1]:8443/"))
        #expect(plain.serverTrust === trust)
        #expect(plain.underlyingError == nil)
        let failed = NetworkingError(.untrusted(trust, port: 443, reason: "r", cause: Cause()))
        #expect(failed.underlyingError is Cause)
    }
}
