import Foundation
import UVHTTP1

/// Basic credentials (RFC 7617) from the userinfo of a URL, `scheme://user:password@host/`, as
/// curl, wget and URLSession send them; also the proxy URL's, for `Proxy-Authorization`.
///
/// The userinfo is written percent-escaped in the URL; each escape is decoded to its byte
/// (a byte that is not UTF-8 is sent as that byte, as curl does), and a `%` not followed by two
/// hex digits stays as it is. A user without a password sends an empty password.
enum URLCredentials {
    /// The `Basic ...` value for `userinfo` as written in a URL (escaped); nil when it is empty.
    static func basic(userinfo: some StringProtocol) -> String? {
        guard !userinfo.isEmpty else { return nil }
        var octets = percentDecoded(userinfo)
        if !userinfo.utf8.contains(UInt8(ascii: ":")) { octets.append(UInt8(ascii: ":")) }
        return "Basic " + Data(octets).base64EncodedString()
    }

    /// The `Basic ...` value for a URL's user and password, both as written (escaped).
    static func basic(user: String, password: String?) -> String {
        "Basic " + Data(percentDecoded(user) + [UInt8(ascii: ":")] + percentDecoded(password ?? "")).base64EncodedString()
    }

    /// `text`'s bytes with every `%XX` escape replaced by the byte it stands for.
    static func percentDecoded(_ text: some StringProtocol) -> [UInt8] {
        let bytes = Array(text.utf8)
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
               let high = hexDigitValue(bytes[index + 1]), let low = hexDigitValue(bytes[index + 2]) {
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return decoded
    }
}
