import COpenSSL
import Foundation

extension Certificate {
    /// Parses the first certificate of PEM text ("-----BEGIN CERTIFICATE-----" blocks; other
    /// blocks before it, such as a private key, are skipped).
    ///
    /// - Throws: `.invalidCertificate` when the data holds no readable certificate block, or
    ///   when OpenSSL cannot read back its own encoding of the certificate.
    public init(pemData: Data) throws(NetworkingError) {
        self = try NetworkingError.mapping { () throws(SecurityError) in try Certificate(pem: pemData) }
    }

    /// `init(pemData:)` in the security layer's terms.
    init(pem pemData: Data) throws(SecurityError) {
        let input = MemoryBIO(pemData)
        guard let x509 = PEM_read_bio_X509(input.bio, nil, nil, nil) else {
            throw .noPEMCertificate(openSSL: OpenSSLErrorQueue.drain())
        }
        self.init(owning: x509)
        try checkReadsBack()
    }

    /// Parses every certificate of PEM text, in order (a chain file: leaf first).
    ///
    /// - Throws: `.invalidCertificate` when there is none, or when a certificate block is
    ///   damaged: a file cut short must not pass for a shorter chain; also when OpenSSL cannot
    ///   read back its own encoding of one of them.
    public static func certificates(fromPEM pemData: Data) throws(NetworkingError) -> [Certificate] {
        try NetworkingError.mapping { () throws(SecurityError) in try parseCertificates(fromPEM: pemData) }
    }

    /// `certificates(fromPEM:)` in the security layer's terms.
    static func parseCertificates(fromPEM pemData: Data) throws(SecurityError) -> [Certificate] {
        let input = MemoryBIO(pemData)
        var certificates: [Certificate] = []
        OpenSSLErrorQueue.drain()
        while let x509 = PEM_read_bio_X509(input.bio, nil, nil, nil) {
            certificates.append(Certificate(owning: x509))
        }
        // The reader stops with "no start line" when no block is left; any other last error
        // means it stopped at a damaged block.
        let last = ERR_peek_last_error()
        let reachedEnd = ERR_GET_LIB(last) == ERR_LIB_PEM && ERR_GET_REASON(last) == PEM_R_NO_START_LINE
        guard reachedEnd else {
            throw .damagedPEMCertificate(index: certificates.count + 1, openSSL: OpenSSLErrorQueue.drain())
        }
        OpenSSLErrorQueue.drain()
        guard !certificates.isEmpty else {
            throw .noPEMCertificate(openSSL: "")
        }
        for certificate in certificates { try certificate.checkReadsBack() }
        return certificates
    }

    /// Parses data that is either one DER certificate or PEM text with one or more.
    static func certificates(fromDEROrPEM data: Data) throws(SecurityError) -> [Certificate] {
        // A DER certificate starts with a SEQUENCE tag (0x30); PEM text never does.
        if data.first == 0x30 { return [try Certificate(der: data)] }
        return try parseCertificates(fromPEM: data)
    }
}
