import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PKI for the benchmark's HTTPS server, made with /usr/bin/openssl at bench time so
/// that no key is ever committed: a self-signed CA and a server certificate it signed (P-256,
/// subjectAltName DNS:localhost and IP:127.0.0.1). A chain of two, like a real site's, so that a
/// full handshake verifies a signature as it would in production, not a lone self-signed leaf.
public struct BenchCertificates: Sendable {
    /// The CA's certificate (PEM): what clients trust (`--cacert`, `additionalTrustedCAFiles`).
    public let caFile: String
    /// The server's certificate (PEM), then the server's key (PEM), for nginx.
    public let certificateFile: String
    public let keyFile: String

    /// Writes the files into `directory` (which must exist).
    public init(directory: String, openssl: String = "/usr/bin/openssl") throws {
        guard FileManager.default.isExecutableFile(atPath: openssl) else {
            throw BenchError("openssl not found at \(openssl) (it comes with ca-certificates)")
        }
        caFile = "\(directory)/ca.pem"
        certificateFile = "\(directory)/server.pem"
        keyFile = "\(directory)/server.key"
        let caKey = "\(directory)/ca.key"
        let request = "\(directory)/server.csr"
        let extensions = "\(directory)/server.ext"
        // Two days: long enough for any run, short enough to be worthless if it ever leaked.
        try Self.openssl(openssl, ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                   "-keyout", caKey, "-out", caFile, "-days", "2", "-subj", "/CN=uvbench throwaway CA"])
        try Self.openssl(openssl, ["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                   "-keyout", keyFile, "-out", request, "-subj", "/CN=localhost"])
        try """
        basicConstraints = critical, CA:FALSE
        keyUsage = critical, digitalSignature
        extendedKeyUsage = serverAuth
        subjectAltName = DNS:localhost, IP:127.0.0.1

        """.write(toFile: extensions, atomically: true, encoding: .utf8)
        try Self.openssl(openssl, ["x509", "-req", "-in", request, "-CA", caFile, "-CAkey", caKey, "-CAcreateserial",
                                   "-out", certificateFile, "-days", "2", "-extfile", extensions])
        // nginx's workers may run as another user when started as root: they read the key as the
        // master does (before dropping privileges), so the key can stay private to us.
        chmod(keyFile, 0o600)
    }

    private static func openssl(_ path: String, _ arguments: [String]) throws {
        let (status, output) = try runProgram(path, arguments, mergeStandardError: true)
        guard status == 0 else { throw BenchError("openssl \(arguments.prefix(2).joined(separator: " ")) failed (status \(status)):\n\(output)") }
    }
}
