#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import Foundation

extension Certificate {
    /// The subject's common name, or the whole subject on one line when it has none; for
    /// descriptions and error details, never for host name checks.
    public var subjectSummary: String {
        guard let subject = X509_get_subject_name(x509) else { return "" }
        let index = X509_NAME_get_index_by_NID(subject, NID_commonName, -1)
        if index >= 0, let entry = X509_NAME_get_entry(subject, index),
           let value = X509_NAME_ENTRY_get_data(entry) {
            var utf8: UnsafeMutablePointer<UInt8>?
            let length = ASN1_STRING_to_UTF8(&utf8, value)
            if length >= 0, let utf8 {
                defer { uvn_OPENSSL_free(utf8) }
                return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
            }
            OpenSSLErrorQueue.drain()
        }
        // X509_NAME_oneline truncates to the buffer rather than failing, which suits a summary.
        var buffer = [CChar](repeating: 0, count: 512)
        guard X509_NAME_oneline(subject, &buffer, Int32(buffer.count)) != nil else { return "" }
        return Self.text(ofCString: buffer)
    }

    /// The DNS names and IP addresses of the certificate's subjectAltName extension, in order,
    /// as text ("localhost", "127.0.0.1", "::1"): what a host name is checked against, listed in
    /// a mismatch's failure reason. Other kinds of names (email, URI) are left out.
    var subjectAlternativeNames: [String] {
        guard let extensionValue = X509_get_ext_d2i(x509, NID_subject_alt_name, nil, nil) else {
            // Absent, or present but undecodable; either way there is nothing to match.
            OpenSSLErrorQueue.drain()
            return []
        }
        let names = OpaquePointer(extensionValue)
        defer { GENERAL_NAMES_free(names) }
        var result: [String] = []
        for index in 0..<uvn_sk_GENERAL_NAME_num(names) {
            var type: Int32 = 0
            guard let name = uvn_sk_GENERAL_NAME_value(names, index),
                  let value = GENERAL_NAME_get0_value(name, &type) else { continue }
            let string = value.assumingMemoryBound(to: ASN1_STRING.self)
            let bytes = UnsafeBufferPointer(start: ASN1_STRING_get0_data(string), count: Int(ASN1_STRING_length(string)))
            switch type {
            case GEN_DNS: result.append(String(decoding: bytes, as: UTF8.self))
            case GEN_IPADD: if let address = Self.ipAddressText(bytes) { result.append(address) }
            default: continue
            }
        }
        return result
    }

    /// The text of a NUL-terminated buffer OpenSSL or libc filled in.
    private static func text(ofCString buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// An iPAddress name's 4 or 16 bytes as text; nil for any other length.
    private static func ipAddressText(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let family: Int32
        switch bytes.count {
        case 4: family = AF_INET
        case 16: family = AF_INET6
        default: return nil
        }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(family, bytes.baseAddress, &text, socklen_t(text.count)) != nil else { return nil }
        return Self.text(ofCString: text)
    }
}
