import COpenSSL
import Foundation
import Testing
@testable import UVNetworking

@Suite(.tags(.unit)) struct TrustStoreTests {
    let pki = TestPKI.standard

    private func verifies(_ store: TrustStore) -> Bool {
        ChainVerification(leaf: pki.leaf.certificate, untrusted: [pki.intermediate.certificate], anchors: store).isValid
    }

    @Test func caFileAnchorsTheChain() throws {
        #expect(verifies(try TrustStore(trustsSystemCAs: false, caFiles: [pki.rootPEMPath])))
        #expect(!verifies(try TrustStore(trustsSystemCAs: false, caFiles: [pki.clientRootPEMPath])))
        #expect(!verifies(try TrustStore(trustsSystemCAs: false)), "an empty store trusts nothing")
    }

    @Test func severalCAFilesAndBundles() throws {
        let bundle = TestPKI.makeDirectory("bundle") + "/bundle.pem"
        TestPKI.writePEM([pki.clientRoot, pki.root], to: bundle)
        #expect(verifies(try TrustStore(trustsSystemCAs: false, caFiles: [bundle])))
        #expect(verifies(try TrustStore(trustsSystemCAs: false, caFiles: [pki.clientRootPEMPath, pki.rootPEMPath])))
    }

    @Test func missingCAFileIsAnErrorNamingIt() throws {
        let path = TestPKI.directory + "/no-such-ca.pem"
        let error = NetworkingError(try #require(throws: SecurityError.self) {
            try TrustStore(trustsSystemCAs: false, caFiles: [pki.rootPEMPath, path])
        })
        #expect(error.code == .invalidCertificate)
        #expect(error.detail.contains(path), "\(error.detail)")
    }

    @Test func caFileWithoutCertificateIsAnErrorNamingIt() throws {
        let path = TestPKI.makeDirectory("junk-ca") + "/junk.pem"
        try Data("junk".utf8).write(to: URL(fileURLWithPath: path))
        let error = NetworkingError(try #require(throws: SecurityError.self) { try TrustStore(trustsSystemCAs: false, caFiles: [path]) })
        #expect(error.code == .invalidCertificate)
        #expect(error.detail.contains(path), "\(error.detail)")
        #expect(ERR_peek_error() == 0)
    }

    @Test func hashedCADirectoryAnchorsTheChain() throws {
        // OpenSSL's directory layout: <subject hash>.0 per CA (what `openssl rehash` makes).
        let directory = TestPKI.makeDirectory("hashed")
        let hash = String(format: "%08lx", X509_NAME_hash_ex(X509_get_subject_name(pki.root.x509), nil, nil, nil))
        TestPKI.writePEM([pki.root], to: "\(directory)/\(hash).0")
        #expect(verifies(try TrustStore(trustsSystemCAs: false, caDirectories: [directory])))
        #expect(!verifies(try TrustStore(trustsSystemCAs: false, caDirectories: [TestPKI.makeDirectory("empty")])))
    }

    @Test func missingCADirectoryIsAnErrorNamingIt() throws {
        let path = TestPKI.directory + "/no-such-directory"
        let error = NetworkingError(try #require(throws: SecurityError.self) { try TrustStore(trustsSystemCAs: false, caDirectories: [path]) })
        #expect(error.code == .invalidCertificate)
        #expect(error.detail.contains(path), "\(error.detail)")
    }

    @Test func systemStoreHoldsTheSystemCAsButNotTheTestRoot() throws {
        #expect(!verifies(TrustStore.system))
        // A CA of the Debian bundle must be findable by its subject in the system store.
        let bundle = try Data(contentsOf: URL(fileURLWithPath: "/etc/ssl/certs/ca-certificates.crt"))
        let systemCA = try Certificate(pemData: bundle)
        let context = try #require(X509_STORE_CTX_new())
        defer { X509_STORE_CTX_free(context) }
        #expect(X509_STORE_CTX_init(context, TrustStore.system.store, nil, nil) == 1)
        let found = withExtendedLifetime(systemCA) { X509_STORE_CTX_get1_certs(context, X509_get_subject_name(systemCA.x509)) }
        let stack = try #require(found)
        defer { uvn_sk_X509_pop_free(stack) }
        #expect(uvn_sk_X509_num(stack) >= 1)
        #expect(TrustStore.system === TrustStore.system, "loaded once")
    }
}
