import COpenSSL

/// The first problem OpenSSL found in a chain: its X509_V_ERR code, the depth of the
/// certificate concerned (0 = the leaf), and a reason for people.
struct ChainVerificationFailure: Equatable, CustomStringConvertible {
    /// The X509_V_ERR_* code.
    let code: Int32
    /// The position in the chain of the certificate concerned, leaf = 0.
    let depth: Int32
    /// OpenSSL's text for the code, with the certificate and, for date errors, the date.
    let reason: String

    init(code: Int32, depth: Int32, reason: String) {
        self.code = code
        self.depth = depth
        self.reason = reason
    }

    /// A failure reported for `certificate` (nil when OpenSSL names none, e.g. a missing
    /// issuer beyond the last certificate).
    init(code: Int32, depth: Int32, certificate: Certificate?) {
        var reason = String(cString: X509_verify_cert_error_string(Int(code)))
        var facts = ["depth \(depth)"]
        if let certificate {
            facts.append("\"\(certificate.subjectSummary)\"")
            // The dates are what a reader needs to tell a clock problem from a stale certificate.
            if code == X509_V_ERR_CERT_HAS_EXPIRED { facts.append("notAfter \(certificate.notAfterText)") }
            if code == X509_V_ERR_CERT_NOT_YET_VALID { facts.append("notBefore \(certificate.notBeforeText)") }
        }
        reason += " (\(facts.joined(separator: ", ")))"
        self.init(code: code, depth: depth, reason: reason)
    }

    /// The reason.
    var description: String { reason }
}
