import COpenSSL
import Foundation
import Testing
@testable import UVNetworking

@Suite(.tags(.unit)) struct ClientIdentityTests {
    let pki = TestPKI.standard

    private func data(_ text: String) -> Data { Data(text.utf8) }

    @Test func fromPEM() throws {
        let identity = try ClientIdentity.pem(certificate: data(pki.clientLeaf.pem), privateKey: data(pki.clientLeaf.key.pem))
        #expect(identity.certificate == pki.clientLeaf.certificate)
        #expect(identity.chain.isEmpty)
    }

    @Test func fromPEMWithChain() throws {
        let identity = try ClientIdentity.pem(certificate: data(pki.leaf.pem + pki.intermediate.pem),
                                              privateKey: data(pki.leaf.key.pem))
        #expect(identity.certificate == pki.leaf.certificate)
        #expect(identity.chain == [pki.intermediate.certificate])
    }

    @Test func fromEncryptedPEM() throws {
        let encrypted = data(pki.clientLeaf.key.encryptedPEM(password: "s3cret"))
        let identity = try ClientIdentity.pem(certificate: data(pki.clientLeaf.pem), privateKey: encrypted, password: "s3cret")
        #expect(identity.certificate == pki.clientLeaf.certificate)

        let wrong = try #require(throws: NetworkingError.self) {
            try ClientIdentity.pem(certificate: data(pki.clientLeaf.pem), privateKey: encrypted, password: "wrong")
        }
        #expect(wrong.code == .invalidClientIdentity)
        #expect(wrong.kind == .invalidRequest)
        #expect(wrong.detail.contains("password is wrong"), "\(wrong.detail)")

        let missing = try #require(throws: NetworkingError.self) {
            try ClientIdentity.pem(certificate: data(pki.clientLeaf.pem), privateKey: encrypted)
        }
        #expect(missing.detail.contains("no password was given"), "\(missing.detail)")
        #expect(ERR_peek_error() == 0)
    }

    @Test func mismatchedKeyIsRefused() throws {
        let error = try #require(throws: NetworkingError.self) {
            try ClientIdentity.pem(certificate: data(pki.clientLeaf.pem), privateKey: data(pki.leaf.key.pem))
        }
        #expect(error.code == .invalidClientIdentity)
        #expect(error.detail.contains("does not belong"), "\(error.detail)")
    }

    @Test func unreadablePEMIsRefused() throws {
        let noKey = try #require(throws: NetworkingError.self) {
            try ClientIdentity.pem(certificate: data(pki.clientLeaf.pem), privateKey: data("junk"))
        }
        #expect(noKey.detail.contains("no PEM private key"), "\(noKey.detail)")
        let noCertificate = try #require(throws: NetworkingError.self) {
            try ClientIdentity.pem(certificate: data("junk"), privateKey: data(pki.clientLeaf.key.pem))
        }
        #expect(noCertificate.code == .invalidClientIdentity)
        #expect(noCertificate.detail.contains("certificate"), "\(noCertificate.detail)")
    }

    @Test func fromPEMFiles() throws {
        let identity = try ClientIdentity.pem(certificateFile: pki.clientCertificatePEMPath, privateKeyFile: pki.clientKeyPEMPath)
        #expect(identity.certificate == pki.clientLeaf.certificate)

        let missing = TestPKI.directory + "/missing-key.pem"
        let error = try #require(throws: NetworkingError.self) {
            try ClientIdentity.pem(certificateFile: pki.clientCertificatePEMPath, privateKeyFile: missing)
        }
        #expect(error.code == .invalidClientIdentity)
        #expect(error.detail.contains(missing), "\(error.detail)")

        let mismatched = try #require(throws: NetworkingError.self) {
            try ClientIdentity.pem(certificateFile: pki.clientCertificatePEMPath, privateKeyFile: pki.serverKeyPEMPath)
        }
        #expect(mismatched.detail.contains(pki.serverKeyPEMPath), "\(mismatched.detail)")
    }

    @Test func fromPKCS12() throws {
        let archive = TestPKI.pkcs12(pki.leaf, key: pki.leaf.key, chain: [pki.intermediate], password: "p12 pass")
        let identity = try ClientIdentity.pkcs12(archive, password: "p12 pass")
        #expect(identity.certificate == pki.leaf.certificate)
        #expect(identity.chain == [pki.intermediate.certificate])

        let wrong = try #require(throws: NetworkingError.self) { try ClientIdentity.pkcs12(archive, password: "nope") }
        #expect(wrong.code == .invalidClientIdentity)
        #expect(wrong.detail.contains("wrong password"), "\(wrong.detail)")
        let garbage = try #require(throws: NetworkingError.self) { try ClientIdentity.pkcs12(data("junk"), password: "x") }
        #expect(garbage.detail.contains("not a PKCS#12"), "\(garbage.detail)")
        #expect(ERR_peek_error() == 0)
    }

    @Test func fromPKCS12File() throws {
        let path = TestPKI.makeDirectory("p12") + "/client.p12"
        try TestPKI.pkcs12(pki.clientLeaf, key: pki.clientLeaf.key, password: "pw").write(to: URL(fileURLWithPath: path))
        #expect(try ClientIdentity.pkcs12(file: path, password: "pw").certificate == pki.clientLeaf.certificate)
        let wrong = try #require(throws: NetworkingError.self) { try ClientIdentity.pkcs12(file: path, password: "px") }
        #expect(wrong.detail.contains(path), "\(wrong.detail)")
        let missing = path + ".missing"
        let unreadable = try #require(throws: NetworkingError.self) { try ClientIdentity.pkcs12(file: missing, password: "pw") }
        #expect(unreadable.detail.contains(missing), "\(unreadable.detail)")
    }

    /// Found by Fuzz/pkcs12: an identity whose certificate has an extension OpenSSL cannot
    /// read installs, but left "invalid certificate" in the thread's error queue.
    @Test func installingLeavesNoErrorBehind() throws {
        let input = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../../Fuzz/regressions/pkcs12/install-left-an-openssl-error").standardized
        // The harness's input: a password-length byte (0), then the archive.
        let archive = try Data(contentsOf: input).dropFirst()
        let identity = try ClientIdentity.pkcs12(Data(archive), password: "")
        let context = try #require(SSL_CTX_new(TLS_client_method()))
        defer { SSL_CTX_free(context) }
        try identity.apply(to: context)
        #expect(ERR_peek_error() == 0)
    }

    @Test func appliesToAnSSLContext() throws {
        let context = try #require(SSL_CTX_new(TLS_client_method()))
        defer { SSL_CTX_free(context) }
        let identity = try ClientIdentity.pem(certificate: data(pki.leaf.pem + pki.intermediate.pem),
                                              privateKey: data(pki.leaf.key.pem))
        try identity.apply(to: context)
        try identity.apply(to: context)   // again: the chain is replaced, not appended to
        let installed = try #require(SSL_CTX_get0_certificate(context))
        #expect(Certificate(x509: installed) == pki.leaf.certificate)
        #expect(SSL_CTX_get0_privatekey(context) != nil)
        #expect(SSL_CTX_check_private_key(context) == 1)
    }
}
