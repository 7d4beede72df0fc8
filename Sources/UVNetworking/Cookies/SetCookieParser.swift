import Foundation

/// One Set-Cookie line as parsed by RFC 6265 §5.2, before the store decides whether to keep it.
struct SetCookie: Equatable {
    var name: String
    var value: String
    /// The last valid Expires attribute.
    var expires: Date?
    /// The expiry the last valid Max-Age attribute gives (`Date.distantPast` for zero or less).
    var maxAgeExpiry: Date?
    /// The last Domain attribute: lowercased, its leading dot removed (so "" for "Domain=.");
    /// nil when there was none.
    var domain: String?
    /// The last Path attribute when it was valid; nil when there was none, or when the last one
    /// was empty or relative, both of which mean the request's default-path.
    var path: String?
    var isSecure = false
    var isHTTPOnly = false
    var sameSite: Cookie.SameSite?

    /// §5.3 step 3: Max-Age wins over Expires; nil for a session cookie.
    var expiryTime: Date? { maxAgeExpiry ?? expires }
}

/// The RFC 6265 §5.2 algorithm, which reads what servers send rather than what the grammar of
/// §4.1 allows: a line it cannot use is ignored (nil), never an error, and an attribute it cannot
/// use is skipped.
///
/// Two rules come from RFC 6265bis, because they protect this client: a line with a control
/// character other than HTAB is ignored (its value would later make every request to the
/// domain fail our header check), and an attribute value longer than 1024 bytes is ignored.
enum SetCookieParser {
    /// The longest attribute value used (RFC 6265bis §5.6).
    static let maximumAttributeValueBytes = 1024

    /// Parses `line`; `now` anchors Max-Age.
    static func parse(_ line: String, now: Date) -> SetCookie? {
        let bytes = Array(line.utf8)
        guard !bytes.contains(where: isControl) else { return nil }
        // Step 1: the name-value pair runs to the first ";".
        let pairEnd = bytes.firstIndex(of: semicolon) ?? bytes.endIndex
        // Step 2: no "=" means no cookie.
        guard let equals = bytes[..<pairEnd].firstIndex(of: equalsSign) else { return nil }
        // Steps 3 to 5.
        let name = trimmed(bytes[..<equals])
        guard !name.isEmpty else { return nil }
        var cookie = SetCookie(name: string(name), value: string(trimmed(bytes[(equals + 1)..<pairEnd])))
        // §5.2 (attributes): each "; av" in turn.
        var index = pairEnd
        while index < bytes.endIndex {
            let start = index + 1
            let end = bytes[start...].firstIndex(of: semicolon) ?? bytes.endIndex
            index = end
            let attribute = bytes[start..<end]
            let nameEnd = attribute.firstIndex(of: equalsSign) ?? attribute.endIndex
            let attributeName = trimmed(attribute[..<nameEnd])
            let attributeValue = nameEnd < attribute.endIndex ? trimmed(attribute[(nameEnd + 1)...]) : attribute[nameEnd...]
            guard attributeValue.count <= maximumAttributeValueBytes else { continue }
            apply(attributeName, attributeValue, to: &cookie, now: now)
        }
        return cookie
    }

    /// §5.2.1 to §5.2.6, plus SameSite (RFC 6265bis §5.4.7); unknown attributes are ignored.
    private static func apply(_ name: ArraySlice<UInt8>, _ value: ArraySlice<UInt8>, to cookie: inout SetCookie, now: Date) {
        if equalsIgnoringCase(name, "expires") {
            if let date = CookieDate.parse(string(value)) { cookie.expires = date }
        } else if equalsIgnoringCase(name, "max-age") {
            if let expiry = maxAgeExpiry(value, now: now) { cookie.maxAgeExpiry = expiry }
        } else if equalsIgnoringCase(name, "domain") {
            // An empty value: "the user agent SHOULD ignore the cookie-av entirely".
            guard let first = value.first else { return }
            let domain = first == UInt8(ascii: ".") ? value.dropFirst() : value
            cookie.domain = string(domain).lowercased()
        } else if equalsIgnoringCase(name, "path") {
            cookie.path = value.first == UInt8(ascii: "/") ? string(value) : nil
        } else if equalsIgnoringCase(name, "secure") {
            cookie.isSecure = true
        } else if equalsIgnoringCase(name, "httponly") {
            cookie.isHTTPOnly = true
        } else if equalsIgnoringCase(name, "samesite") {
            if equalsIgnoringCase(value, "strict") {
                cookie.sameSite = .strict
            } else if equalsIgnoringCase(value, "lax") {
                cookie.sameSite = .lax
            } else if equalsIgnoringCase(value, "none") {
                // Spelled out: `.none` alone would be Optional.none, no attribute.
                cookie.sameSite = Cookie.SameSite.none
            } else {
                // RFC 6265bis: an unknown value means "Default", which is no attribute.
                cookie.sameSite = nil
            }
        }
    }

    /// §5.2.2: a "-" or a digit first, digits after; zero or less is "the earliest
    /// representable date", more than the calendar holds is the latest.
    private static func maxAgeExpiry(_ value: ArraySlice<UInt8>, now: Date) -> Date? {
        guard let first = value.first, first == UInt8(ascii: "-") || isDigit(first) else { return nil }
        let digits = first == UInt8(ascii: "-") ? value.dropFirst() : value
        guard !digits.isEmpty, digits.allSatisfy(isDigit) else { return nil }
        if first == UInt8(ascii: "-") { return .distantPast }
        // Saturate: a server may send any number of digits.
        var seconds = 0
        for digit in digits {
            let (times10, overflow1) = seconds.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(digit - 0x30))
            guard !overflow1 && !overflow2 else { return .distantFuture }
            seconds = sum
        }
        if seconds == 0 { return .distantPast }
        let expiry = now.addingTimeInterval(TimeInterval(seconds))
        return min(expiry, .distantFuture)
    }

    // MARK: Bytes

    private static let semicolon = UInt8(ascii: ";")
    private static let equalsSign = UInt8(ascii: "=")

    /// %x00-08 / %x0A-1F / %x7F: the control characters other than HTAB.
    private static func isControl(_ byte: UInt8) -> Bool {
        (byte < 0x20 && byte != 0x09) || byte == 0x7F
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// Without leading and trailing WSP (SP and HTAB).
    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var slice = bytes
        while let first = slice.first, first == 0x20 || first == 0x09 { slice.removeFirst() }
        while let last = slice.last, last == 0x20 || last == 0x09 { slice.removeLast() }
        return slice
    }

    private static func string(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    /// ASCII case-insensitive equality with a lowercase literal.
    private static func equalsIgnoringCase(_ bytes: ArraySlice<UInt8>, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        return zip(bytes, expected).allSatisfy { pair in
            let byte = pair.0
            let lowered = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            return lowered == pair.1
        }
    }
}
