import Foundation
import UVHTTP1

/// Builds the header block of a part, so that no name, filename or value can break it.
///
/// Choices (AFNetworking pasted names into the header as they were):
/// - Names and filenames are quoted-strings in which `"`, `\`, CR, LF, DEL and the other control
///   bytes but HTAB are percent-encoded (`"` -> %22, CR -> %0D, LF -> %0A as WHATWG's HTML
///   multipart/form-data encoding does; `\` -> %5C too, because a parser that honours RFC 9110
///   quoted-pairs would otherwise eat it, or read `"a\"` as an unterminated string). `%` itself
///   is left alone, as browsers do, so "%22" typed by a user reads the same as an escaped quote.
/// - Non-ASCII is sent as raw UTF-8, as browsers do. A filename with non-ASCII also gets an
///   RFC 8187 (was 5987) `filename*=UTF-8''...` parameter, as RFC 6266 does for downloads, and
///   its `filename="..."` becomes an ASCII fallback (accents dropped, other non-ASCII scalars
///   turned into "_"). RFC 7578 §4.2 says form-data senders should not use `filename*`; servers
///   that follow it ignore the parameter and read the plain ASCII fallback, which is why one is
///   always there.
/// - Header lines given by callers are never rewritten: a name that is not an HTTP token or a
///   value with CR, LF, NUL or another control byte is rejected, as the request encoder does.
enum MultipartHeaders {
    /// `Content-Disposition: form-data; name="n"` then the blank line.
    static func formField(name: String) -> Data {
        block([("Content-Disposition", "form-data; name=\"\(escaped(name))\"")])
    }

    /// `Content-Disposition` with name and filename, then `Content-Type`, then the blank line;
    /// throws when `mimeType` is not a valid header value.
    static func filePart(name: String, fileName: String, mimeType: String) throws(NetworkingError) -> Data {
        try validate(name: "Content-Type", value: mimeType)
        var disposition = "form-data; name=\"\(escaped(name))\"; filename=\"\(escaped(asciiFallback(fileName)))\""
        if !fileName.unicodeScalars.allSatisfy(\.isASCII) {
            disposition += "; filename*=UTF-8''\(extendedValue(fileName))"
        }
        return block([("Content-Disposition", disposition), ("Content-Type", mimeType)])
    }

    /// The caller's header lines as given, then the blank line; throws on the first bad one.
    static func custom(_ headers: [(name: String, value: String)]) throws(NetworkingError) -> Data {
        for header in headers { try validate(name: header.name, value: header.value) }
        return block(headers)
    }

    private static func validate(name: String, value: String) throws(NetworkingError) {
        guard !name.isEmpty, name.utf8.allSatisfy(RequestEncoder.isTokenByte) else {
            throw .multipart("multipart part header name \"\(name)\" is not an HTTP token")
        }
        guard value.utf8.allSatisfy(RequestEncoder.isValueByte) else {
            throw .multipart("the value of multipart part header \"\(name)\" contains CR, LF, NUL or another control byte")
        }
    }

    private static func block(_ headers: [(name: String, value: String)]) -> Data {
        var text = ""
        for header in headers { text += "\(header.name): \(header.value)\r\n" }
        text += "\r\n"
        return Data(text.utf8)
    }

    /// The text for inside a quoted-string: see the type's comment for which bytes are escaped.
    static func escaped(_ text: String) -> String {
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value == 0x22 || value == 0x5C || value == 0x7F || (value < 0x20 && value != 0x09) {
                result += percentEncoded(UInt8(value))
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// `fileName` in ASCII: accents dropped (é -> e), other non-ASCII scalars replaced by "_".
    static func asciiFallback(_ fileName: String) -> String {
        if fileName.unicodeScalars.allSatisfy(\.isASCII) { return fileName }
        var result = String.UnicodeScalarView()
        for scalar in fileName.decomposedStringWithCanonicalMapping.unicodeScalars {
            if scalar.isASCII {
                result.append(scalar)
            } else if scalar.properties.generalCategory != .nonspacingMark {
                result.append("_")
            }
        }
        return String(result)
    }

    /// RFC 8187 ext-value text after `UTF-8''`: attr-chars as they are, every other UTF-8 byte
    /// percent-encoded.
    static func extendedValue(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            if isAttrChar(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += percentEncoded(byte)
            }
        }
        return result
    }

    private static func isAttrChar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$&+-.^_`|~".utf8.contains(byte)
        }
    }

    private static func percentEncoded(_ byte: UInt8) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        return String(decoding: [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]], as: UTF8.self)
    }
}
