// INTERIM: minimal stand-ins for the security layer being built on branch `security`; replaced
// by it at merge. Not to be committed on main.
import COpenSSL
import Foundation
import Synchronization

public struct Certificate: Hashable, Sendable {
    final class Box: @unchecked Sendable {
        let x509: OpaquePointer
        let der: Data
        init(_ x509: OpaquePointer) {
            X509_up_ref(x509)
            self.x509 = x509
            var out: UnsafeMutablePointer<UInt8>? = nil
            let n = i2d_X509(x509, &out)
            der = Data(bytes: out!, count: Int(n))
            CRYPTO_free(out, #file, #line)
        }
        deinit { X509_free(x509) }
    }
    let box: Box
    init(x509 borrowed: OpaquePointer) { box = Box(borrowed) }
    var x509: OpaquePointer { box.x509 }
    public var derData: Data { box.der }
    public static func == (a: Certificate, b: Certificate) -> Bool { a.box.der == b.box.der }
    public func hash(into h: inout Hasher) { h.combine(box.der) }
}

final class TrustStore: @unchecked Sendable {
    let store: OpaquePointer
    init(trustsSystemCAs: Bool = true, caFiles: [String] = [], caDirectories: [String] = []) throws(NetworkingError) {
        store = X509_STORE_new()
        if trustsSystemCAs { X509_STORE_set_default_paths(store) }
        for file in caFiles where X509_STORE_load_file(store, file) != 1 {
            throw NetworkingError(.invalidURL, "cannot load CA file \(file)")
        }
        for dir in caDirectories { X509_STORE_load_path(store, dir) }
    }
    deinit { X509_STORE_free(store) }
}

public final class ServerTrust: @unchecked Sendable, Hashable {
    public let host: String
    public let certificates: [Certificate]
    let anchors: TrustStore
    init(host: String, certificates: [Certificate], anchors: TrustStore) {
        self.host = host
        self.certificates = certificates
        self.anchors = anchors
    }
    public static func == (a: ServerTrust, b: ServerTrust) -> Bool { a === b }
    public func hash(into h: inout Hasher) { h.combine(ObjectIdentifier(self)) }
}

struct TrustEvaluation: Sendable {
    var isTrusted: Bool
    var failureReason: String?
    var verifiedChain: [Certificate]
}

public struct SecurityPolicy: Sendable, Hashable {
    public enum PinningMode: Sendable, Hashable { case none, publicKey, certificate }
    public var pinningMode: PinningMode = .none
    public var allowInvalidCertificates = false
    public var validatesDomainName = true
    public static var `default`: SecurityPolicy { SecurityPolicy() }
    public init() {}
    public var hasPins: Bool { false }

    func evaluation(of trust: ServerTrust, forDomain domain: String?) -> TrustEvaluation {
        let ctx = X509_STORE_CTX_new()!
        defer { X509_STORE_CTX_free(ctx) }
        let untrusted = OPENSSL_sk_new_null()!
        defer { OPENSSL_sk_free(untrusted) }
        for c in trust.certificates { OPENSSL_sk_push(untrusted, UnsafeRawPointer(c.x509)) }
        X509_STORE_CTX_init(ctx, trust.anchors.store, trust.certificates[0].x509, untrusted)
        let ok = X509_verify_cert(ctx) == 1
        var chain: [Certificate] = []
        if let sk = X509_STORE_CTX_get0_chain(ctx) {
            for i in 0..<OPENSSL_sk_num(sk) {
                chain.append(Certificate(x509: OpaquePointer(OPENSSL_sk_value(sk, i))!))
            }
        }
        if !ok {
            let reason = String(cString: X509_verify_cert_error_string(Int(X509_STORE_CTX_get_error(ctx))))
            return TrustEvaluation(isTrusted: allowInvalidCertificates, failureReason: reason, verifiedChain: chain)
        }
        if validatesDomainName, let domain {
            let flags = UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS | X509_CHECK_FLAG_NEVER_CHECK_SUBJECT)
            let match = domain.contains(":") || domain.allSatisfy({ $0.isNumber || $0 == "." })
                ? X509_check_ip_asc(trust.certificates[0].x509, domain, flags)
                : X509_check_host(trust.certificates[0].x509, domain, domain.utf8.count, flags, nil)
            if match != 1 { return TrustEvaluation(isTrusted: false, failureReason: "host mismatch", verifiedChain: chain) }
        }
        return TrustEvaluation(isTrusted: true, failureReason: nil, verifiedChain: chain)
    }
}
