import CWARC
import Foundation

/// The digests a WARC record carries (`WARC-Block-Digest`, `WARC-Payload-Digest`): SHA-1 written
/// as `sha1:` and the 32 base32 letters of RFC 4648, the form WARC readers (warcio, pywb,
/// Heritrix, wget) write and check.
enum WARCDigest {
    /// `sha1:` + base32 of the SHA-1 of `bytes`.
    static func sha1(_ bytes: some DataProtocol) -> String {
        "sha1:" + base32(sha1Bytes(bytes))
    }

    /// The 20 bytes of the SHA-1 of `bytes`, by OpenSSL.
    static func sha1Bytes(_ bytes: some DataProtocol) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        let contiguous = bytes as? Data ?? Data(bytes)
        let status = contiguous.withUnsafeBytes { buffer in
            digest.withUnsafeMutableBufferPointer { out in
                // EVP_Digest accepts a null pointer for no bytes only with a count of 0.
                EVP_Digest(buffer.baseAddress, buffer.count, out.baseAddress, &length, EVP_sha1(), nil)
            }
        }
        // SHA-1 over memory fails only if OpenSSL cannot allocate its context.
        precondition(status == 1 && length == 20, "OpenSSL's SHA-1 failed")
        return digest
    }

    /// RFC 4648 base32 (A-Z, 2-7), padded with `=` to a multiple of 8 letters.
    static func base32(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)
        var letters: [UInt8] = []
        letters.reserveCapacity((bytes.count + 4) / 5 * 8)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                letters.append(alphabet[Int((buffer >> UInt32(bits)) & 31)])
            }
        }
        if bits > 0 { letters.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        while letters.count % 8 != 0 { letters.append(UInt8(ascii: "=")) }
        return String(decoding: letters, as: UTF8.self)
    }
}
