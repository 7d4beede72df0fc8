/// How a session speaks TLS: versions, the certificates it trusts, the identity it presents and
/// whether it resumes sessions. Which servers it trusts beyond that is the `SecurityPolicy`'s
/// business (on the manager, per host).
public struct TLSConfiguration: Sendable {
    /// A TLS protocol version.
    public enum Version: Sendable, Hashable {
        case v1_2, v1_3
    }

    /// The lowest version offered. TLS 1.2, as every current guideline asks; 1.0 and 1.1 are
    /// not available at all.
    public var minimumVersion: Version = .v1_2
    /// Whether the system's trust store (Debian's ca-certificates) is trusted.
    public var trustsSystemCAs = true
    /// PEM files of further trusted CA certificates (curl's --cacert).
    public var additionalTrustedCAFiles: [String] = []
    /// Directories of further trusted CA certificates, in OpenSSL's hashed layout (c_rehash;
    /// curl's --capath).
    public var additionalTrustedCADirectories: [String] = []
    /// The certificate and key presented to servers that ask for one (mutual TLS); nil presents
    /// none. Load it with `ClientIdentity.pem(...)` or `ClientIdentity.pkcs12(...)`.
    public var clientIdentity: ClientIdentity?
    /// Whether a new connection to an origin resumes the TLS session of an earlier one, which
    /// skips the certificate exchange and its public-key operations.
    public var resumesSessions = true

    /// TLS 1.2 or later, the system trust store, session resumption.
    public init() {}
}
