import COpenSSL
import Foundation

/// An X.509 certificate: one a server sent, a pinned one, or a client's own.
///
/// Two certificates are equal when their DER encodings are equal, whatever they were parsed
/// from. The value is cheap to copy: copies share one parsed OpenSSL certificate.
public struct Certificate: Hashable, Sendable, CustomStringConvertible {
    private let reference: X509Reference
    /// The certificate's DER encoding, as OpenSSL writes the parsed certificate back.
    ///
    /// For DER input this is the input itself; for a BER quirk OpenSSL reads but DER forbids
    /// (say, set bits after a BIT STRING's end) it is the corrected encoding. Storing the
    /// re-encoding rather than the input keeps equality independent of where a certificate
    /// came from: a server's chain and PEM files are re-encoded too, so a pinned DER file with
    /// such a quirk would otherwise never equal the certificate the server sends. The readers
    /// refuse a certificate whose re-encoding OpenSSL does not read back to the same bytes.
    public let derData: Data

    /// Parses a DER-encoded certificate.
    ///
    /// - Throws: `.invalidCertificate` when the bytes are not exactly one DER certificate
    ///   (trailing bytes are refused: they would make two encodings of one certificate unequal),
    ///   or when OpenSSL cannot read back its own encoding of it.
    public init(derData: Data) throws(NetworkingError) {
        self = try NetworkingError.mapping { () throws(SecurityError) in try Certificate(der: derData) }
    }

    /// `init(derData:)` in the security layer's terms.
    init(der derData: Data) throws(SecurityError) {
        let parsed: OpaquePointer? = derData.withUnsafeBytes { raw in
            guard let start = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
            var cursor: UnsafePointer<UInt8>? = UnsafePointer(start)
            guard let x509 = d2i_X509(nil, &cursor, raw.count) else { return nil }
            guard cursor == UnsafePointer(start) + raw.count else {
                X509_free(x509)
                return nil
            }
            return x509
        }
        guard let parsed else {
            throw .notDERCertificate(byteCount: derData.count, openSSL: OpenSSLErrorQueue.drain())
        }
        self.init(owning: parsed)
        try checkReadsBack()
    }

    /// Throws unless OpenSSL reads `derData` back to the same bytes. Readers of a caller's input
    /// call it: OpenSSL accepts BER forms it then writes differently, and for some (a
    /// constructed end-of-contents as an algorithm's parameters) what it writes it cannot read,
    /// so such a certificate could never be sent, pinned or compared (found by the pem harness).
    func checkReadsBack() throws(SecurityError) {
        let readsBack = derData.withUnsafeBytes { raw -> Bool in
            guard let start = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
            var cursor: UnsafePointer<UInt8>? = UnsafePointer(start)
            guard let again = d2i_X509(nil, &cursor, raw.count) else { return false }
            defer { X509_free(again) }
            return cursor == UnsafePointer(start) + raw.count && Self.encode(again) == derData
        }
        OpenSSLErrorQueue.drain()
        guard readsBack else { throw .certificateDoesNotReadBack(subject: subjectSummary) }
    }

    /// Takes over one reference to `x509` (from a parser or `X509_up_ref`).
    init(owning x509: OpaquePointer) {
        reference = X509Reference(owning: x509)
        derData = Self.encode(x509)
    }

    /// Wraps a certificate OpenSSL owns (a peer's chain, a verified chain), taking a reference
    /// of its own so that the value outlives the borrowed pointer.
    init(x509 borrowed: OpaquePointer) {
        X509_up_ref(borrowed)
        self.init(owning: borrowed)
    }

    /// The OpenSSL certificate, borrowed: valid while this value (or a copy) lives. Callers
    /// that hand it to OpenSSL keep the value alive across the call (`withExtendedLifetime`).
    var x509: OpaquePointer { reference.x509 }

    private static func encode(_ x509: OpaquePointer) -> Data {
        let length = i2d_X509(x509, nil)
        // A parsed certificate always re-encodes; a negative length means memory ran out.
        precondition(length > 0, "i2d_X509 failed on a parsed certificate")
        var data = Data(count: Int(length))
        data.withUnsafeMutableBytes { raw in
            var cursor = raw.baseAddress?.assumingMemoryBound(to: UInt8.self)
            _ = i2d_X509(x509, &cursor)
        }
        return data
    }

    /// Whether both hold the same DER encoding.
    public static func == (lhs: Certificate, rhs: Certificate) -> Bool {
        lhs.derData == rhs.derData
    }

    /// Hashes the DER encoding.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(derData)
    }

    /// "Certificate(<subject summary>)".
    public var description: String { "Certificate(\(subjectSummary))" }
}
