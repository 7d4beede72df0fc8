// A public-key infrastructure made at test time with OpenSSL's C API, so that nothing committed
// can expire: CAs, intermediates and leaves with chosen names, dates, keys and usages, written
// as PEM, PKCS#8 or PKCS#12 where a test needs files. EC P-256 keys: generating one takes well
// under a millisecond, where RSA takes tens.

#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import Foundation
@testable import UVNetworking

/// A private key made for a test.
struct TestKey: Sendable {
    /// Owns the EVP_PKEY. @unchecked Sendable: the key is never modified after generation, and
    /// OpenSSL 3 allows concurrent use of one key.
    final class Box: @unchecked Sendable {
        let key: OpaquePointer
        init(_ key: OpaquePointer) { self.key = key }
        deinit { EVP_PKEY_free(key) }
    }

    let box: Box
    /// The EVP_PKEY, valid while this value lives.
    var pkey: OpaquePointer { box.key }

    /// A new EC P-256 key pair.
    static func ecP256() -> TestKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { fatalError("EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
              EVP_PKEY_generate(context, &key) == 1, let key else { fatalError("EC key generation failed") }
        return TestKey(box: Box(key))
    }

    /// The private key as unencrypted PKCS#8 PEM.
    var pem: String {
        let output = MemoryBIO()
        guard PEM_write_bio_PrivateKey(output.bio, pkey, nil, nil, 0, nil, nil) == 1 else { fatalError("PEM_write_bio_PrivateKey") }
        return output.string
    }

    /// The private key as PKCS#8 PEM encrypted with AES-256-CBC under `password`.
    func encryptedPEM(password: String) -> String {
        let output = MemoryBIO()
        let written = password.withCString { passphrase in
            PEM_write_bio_PKCS8PrivateKey(output.bio, pkey, EVP_aes_256_cbc(), passphrase, Int32(strlen(passphrase)), nil, nil)
        }
        guard written == 1 else { fatalError("PEM_write_bio_PKCS8PrivateKey") }
        return output.string
    }
}

/// A certificate made for a test, with the key it was made for.
struct TestCertificate: Sendable {
    /// The certificate (it owns the X509).
    let certificate: Certificate
    /// The certificate's key pair.
    let key: TestKey

    /// The X509, valid while this value lives.
    var x509: OpaquePointer { certificate.x509 }
    /// The DER encoding.
    var der: Data { certificate.derData }
    /// The PEM encoding.
    var pem: String {
        let output = MemoryBIO()
        guard PEM_write_bio_X509(output.bio, x509) == 1 else { fatalError("PEM_write_bio_X509") }
        return output.string
    }
}

/// Makes test certificates.
enum TestPKI {
    /// The extended key usages a leaf can carry.
    enum Usage: Sendable {
        case serverAuth, clientAuth, both
        var extensionValue: String {
            switch self {
            case .serverAuth: "serverAuth"
            case .clientAuth: "clientAuth"
            case .both: "serverAuth,clientAuth"
            }
        }
    }

    /// A day, for validity periods.
    static let day: TimeInterval = 86_400

    /// A self-signed CA (basicConstraints CA:TRUE, keyCertSign).
    static func makeRoot(name: String, key: TestKey = .ecP256(), notBefore: Date = Date() - day,
                         notAfter: Date = Date() + 365 * day) -> TestCertificate {
        build(commonName: name, key: key, issuer: nil, notBefore: notBefore, notAfter: notAfter,
              extensions: caExtensions)
    }

    /// A CA certified by `issuer`.
    static func makeIntermediate(name: String, issuer: TestCertificate, key: TestKey = .ecP256(),
                                 notBefore: Date = Date() - day, notAfter: Date = Date() + 365 * day) -> TestCertificate {
        build(commonName: name, key: key, issuer: issuer, notBefore: notBefore, notAfter: notAfter,
              extensions: caExtensions)
    }

    /// An end-entity certificate certified by `issuer`.
    ///
    /// - Parameters:
    ///   - commonName: the subject CN; defaults to the first DNS name or IP address; "" leaves
    ///     the subject without a CN.
    ///   - key: reuse a key (a renewal that keeps the key); a new one by default.
    ///   - includeSAN: false makes a CN-only certificate without subjectAltName.
    static func makeLeaf(issuer: TestCertificate, dnsNames: [String] = [], ipAddresses: [String] = [],
                         commonName: String? = nil, notBefore: Date = Date() - day, notAfter: Date = Date() + 30 * day,
                         key: TestKey? = nil, includeSAN: Bool = true, extendedKeyUsage: Usage = .serverAuth) -> TestCertificate {
        build(commonName: commonName ?? dnsNames.first ?? ipAddresses.first ?? "leaf", key: key ?? .ecP256(),
              issuer: issuer, notBefore: notBefore, notAfter: notAfter,
              extensions: leafExtensions(dnsNames: dnsNames, ipAddresses: ipAddresses, includeSAN: includeSAN,
                                         usage: extendedKeyUsage))
    }

    /// A self-signed end-entity certificate, as a development server makes for itself.
    static func makeSelfSigned(dnsNames: [String] = [], ipAddresses: [String] = [], commonName: String? = nil,
                               notBefore: Date = Date() - day, notAfter: Date = Date() + 30 * day,
                               key: TestKey = .ecP256()) -> TestCertificate {
        build(commonName: commonName ?? dnsNames.first ?? ipAddresses.first ?? "self-signed", key: key, issuer: nil,
              notBefore: notBefore, notAfter: notAfter,
              extensions: leafExtensions(dnsNames: dnsNames, ipAddresses: ipAddresses, includeSAN: true, usage: .serverAuth))
    }

    /// Writes the certificates' PEM, in order, to one file.
    static func writePEM(_ certificates: [TestCertificate], to path: String) {
        write(certificates.map(\.pem).joined(), to: path)
    }

    /// Writes a key's unencrypted PEM to a file.
    static func writePEM(_ key: TestKey, to path: String) {
        write(key.pem, to: path)
    }

    /// A PKCS#12 archive of a certificate, its key and extra chain certificates, with OpenSSL 3's
    /// default encryption (AES-256-CBC, PBKDF2).
    static func pkcs12(_ certificate: TestCertificate, key: TestKey, chain: [TestCertificate] = [],
                       password: String) -> Data {
        guard let stack = uvn_sk_X509_new_null() else { fatalError("sk_X509_new_null") }
        defer { uvn_sk_X509_free(stack) }
        for extra in chain { _ = uvn_sk_X509_push(stack, extra.x509) }
        let archive = withExtendedLifetime((certificate, key, chain)) {
            PKCS12_create(password, "test identity", key.pkey, certificate.x509, stack, 0, 0, 0, 0, 0)
        }
        guard let archive else { fatalError("PKCS12_create: \(OpenSSLErrorQueue.drain())") }
        defer { PKCS12_free(archive) }
        let length = i2d_PKCS12(archive, nil)
        var data = Data(count: Int(length))
        data.withUnsafeMutableBytes { raw in
            var cursor = raw.baseAddress?.assumingMemoryBound(to: UInt8.self)
            _ = i2d_PKCS12(archive, &cursor)
        }
        return data
    }

    /// A new empty directory under the process's test directory.
    static func makeDirectory(_ name: String) -> String {
        let path = directory + "/" + name + "-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// This process's directory for PKI files, removed when the process exits.
    static let directory: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("uvnetworking-pki-\(getpid())").path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: TestPKI.directory) }
        return path
    }()

    private static func write(_ text: String, to path: String) {
        try! Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    private static let caExtensions: [(Int32, String)] = [
        (NID_basic_constraints, "critical,CA:TRUE"),
        (NID_key_usage, "critical,keyCertSign,cRLSign"),
    ]

    private static func leafExtensions(dnsNames: [String], ipAddresses: [String], includeSAN: Bool,
                                       usage: Usage) -> [(Int32, String)] {
        var extensions: [(Int32, String)] = [
            (NID_basic_constraints, "critical,CA:FALSE"),
            (NID_key_usage, "critical,digitalSignature"),
            (NID_ext_key_usage, usage.extensionValue),
        ]
        let names = dnsNames.map { "DNS:\($0)" } + ipAddresses.map { "IP:\($0)" }
        if includeSAN && !names.isEmpty {
            extensions.append((NID_subject_alt_name, names.joined(separator: ",")))
        }
        return extensions
    }

    /// Makes and signs one certificate; `issuer` nil makes it self-signed.
    private static func build(commonName: String, key: TestKey, issuer: TestCertificate?, notBefore: Date,
                              notAfter: Date, extensions: [(Int32, String)]) -> TestCertificate {
        guard let x509 = X509_new() else { fatalError("X509_new") }
        defer { X509_free(x509) }
        precondition(X509_set_version(x509, 2) == 1)   // v3
        precondition(ASN1_INTEGER_set_uint64(X509_get_serialNumber(x509), UInt64.random(in: 1...UInt64(Int64.max))) == 1)
        let subject = X509_get_subject_name(x509)
        precondition(X509_NAME_add_entry_by_txt(subject, "O", MBSTRING_UTF8, "UVNetworking Tests", -1, -1, 0) == 1)
        if !commonName.isEmpty {
            precondition(X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8, commonName, -1, -1, 0) == 1)
        }
        let issuerName = issuer.map { X509_get_subject_name($0.x509) } ?? subject
        precondition(X509_set_issuer_name(x509, issuerName) == 1)
        precondition(ASN1_TIME_set(X509_getm_notBefore(x509), time_t(notBefore.timeIntervalSince1970)) != nil)
        precondition(ASN1_TIME_set(X509_getm_notAfter(x509), time_t(notAfter.timeIntervalSince1970)) != nil)
        precondition(X509_set_pubkey(x509, key.pkey) == 1)

        // The key identifiers come first: the authority identifier is copied from the issuer's
        // subject identifier (for a self-signed certificate, from its own).
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer?.x509 ?? x509, x509, nil, nil, 0)
        let identifiers: [(Int32, String)] = [(NID_subject_key_identifier, "hash"),
                                              (NID_authority_key_identifier, "keyid:always")]
        for (nid, value) in identifiers + extensions {
            guard let ext = X509V3_EXT_nconf_nid(nil, &context, nid, value) else {
                fatalError("extension \(nid)=\(value): \(OpenSSLErrorQueue.drain())")
            }
            precondition(X509_add_ext(x509, ext, -1) == 1)
            X509_EXTENSION_free(ext)
        }
        let signer = issuer?.key ?? key
        withExtendedLifetime(issuer) {
            precondition(X509_sign(x509, signer.pkey, EVP_sha256()) > 0, "X509_sign: \(OpenSSLErrorQueue.drain())")
        }
        // Through DER, as a certificate arrives from a server.
        let length = i2d_X509(x509, nil)
        var der = Data(count: Int(length))
        der.withUnsafeMutableBytes { raw in
            var cursor = raw.baseAddress?.assumingMemoryBound(to: UInt8.self)
            _ = i2d_X509(x509, &cursor)
        }
        return TestCertificate(certificate: try! Certificate(derData: der), key: key)
    }
}
