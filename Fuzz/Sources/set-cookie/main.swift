// Fuzzes the Set-Cookie parser (RFC 6265 §5.2, Sources/UVNetworking/Cookies/SetCookieParser.swift)
// and the store's limits behind it (CookieJar with CookieLimits).
//
// Input: 2 option bytes, then Set-Cookie lines separated by LF (any bytes; invalid UTF-8 arrives
// as U+FFFD, as from a head).
//   byte 0  how the first line's cookie is written back: attribute order (bits 0-2), name case
//           (bits 3-4: as usual, UPPER, lower, aLtErNaTiNg), white space around "=" and ";" (bit 5)
//   byte 1  the store's limits: cookies per domain 1 + (bits 0-1), cookies 1 + (bits 2-4),
//           name and value bytes 8 + 16 × (bits 5-7)
//
// Invariants:
// - Encode then parse: a parsed cookie written back as a Set-Cookie line (its attributes in any
//   order, names in any case, white space around "=" and ";") parses to the same cookie.
// - §5.2's ignorable parts change nothing: an unknown attribute, an empty one ("; ;"), white space
//   before the name. The last attribute wins: a "; Secure" or "; Path=/..." appended shows in it.
// - An attribute value longer than 1024 bytes is ignored; one of 1024 bytes is used.
// - The store keeps within its limits after every line: cookies in all, cookies per domain, name
//   and value bytes per cookie; its count is the sum of its domains' cookies; what it returns for
//   a request has not expired.

import Foundation
import FuzzSupport
@testable import UVNetworking

/// Max-Age anchors on this instant; whole seconds, so that expiry minus now is exact.
let now = Date(timeIntervalSince1970: 1_700_000_000)

/// The request URLs lines are stored for, taken in turn.
let requests = ["http://www.example.com/docs/page", "https://example.com/", "http://127.0.0.1/a/b", "https://a.b.example.com/x"]
    .map { CookieRequestURL(URL(string: $0)!)! }

/// `cookie` written back as a Set-Cookie line, in the form `style` chooses (see the header).
func setCookieLine(_ cookie: SetCookie, style: UInt8) -> String {
    var attributes: [(name: String, value: String?)] = []
    if let expires = cookie.expires { attributes.append(("Expires", imfFixdate(expires))) }
    if let expiry = cookie.maxAgeExpiry {
        let seconds = expiry == .distantPast ? "0"
            : expiry == .distantFuture ? String(repeating: "9", count: 30)
            : String(Int(expiry.timeIntervalSince(now)))
        attributes.append(("Max-Age", seconds))
    }
    if let domain = cookie.domain { attributes.append(("Domain", domainValue(domain))) }
    if let path = cookie.path { attributes.append(("Path", path)) }
    if cookie.isSecure { attributes.append(("Secure", nil)) }
    if cookie.isHTTPOnly { attributes.append(("HttpOnly", nil)) }
    if let sameSite = cookie.sameSite { attributes.append(("SameSite", sameSite.rawValue)) }
    if !attributes.isEmpty {
        let shift = Int(style & 7) % attributes.count
        attributes = Array(attributes[shift...] + attributes[..<shift])
    }
    let space = style & 0x20 != 0 ? " \t " : ""
    func cased(_ name: String) -> String {
        switch (style >> 3) & 3 {
        case 1: return name.uppercased()
        case 2: return name.lowercased()
        case 3: return String(name.enumerated().map { $0.offset % 2 == 0 ? Character($0.element.uppercased()) : Character($0.element.lowercased()) })
        default: return name
        }
    }
    var line = "\(space)\(cookie.name)\(space)=\(space)\(cookie.value)\(space)"
    for attribute in attributes {
        line += ";\(space)\(cased(attribute.name))"
        if let value = attribute.value { line += "\(space)=\(space)\(value)\(space)" }
    }
    return line
}

/// The Domain value that gives `domain`: "." + domain when the domain is empty or starts with
/// what the parser would drop (a dot, white space), else the domain as is, so that the value is
/// no longer than the one it came from.
func domainValue(_ domain: String) -> String {
    guard let first = domain.utf8.first, first != UInt8(ascii: "."), first != 0x20, first != 0x09 else { return "." + domain }
    return domain
}

/// What parsing `setCookieLine(cookie)` must give: the cookie itself, but for a Domain that
/// lowercasing made longer than the attribute limit.
func expectedAfterRoundTrip(_ cookie: SetCookie) -> SetCookie {
    var expected = cookie
    if let domain = cookie.domain, domainValue(domain).utf8.count > SetCookieParser.maximumAttributeValueBytes {
        expected.domain = nil
    }
    return expected
}

func checkLine(_ line: String, style: UInt8) {
    let parsed = SetCookieParser.parse(line, now: now)
    fuzzCheck(SetCookieParser.parse(line + "; X-Fuzz-Unknown=1", now: now) == parsed, "an unknown attribute changed \(line.debugDescription)")
    fuzzCheck(SetCookieParser.parse(line + "; ;", now: now) == parsed, "empty attributes changed \(line.debugDescription)")
    fuzzCheck(SetCookieParser.parse(" \t" + line, now: now) == parsed, "white space before the name changed \(line.debugDescription)")
    guard let parsed else { return }
    fuzzCheck(!parsed.name.isEmpty, "an empty name from \(line.debugDescription)")

    var secure = parsed
    secure.isSecure = true
    fuzzCheck(SetCookieParser.parse(line + ";secure", now: now) == secure, "a last Secure did not show in \(line.debugDescription)")
    let longest = "/" + String(repeating: "p", count: SetCookieParser.maximumAttributeValueBytes - 1)
    fuzzCheck(SetCookieParser.parse(line + "; Path=\(longest)", now: now)?.path == longest, "a 1024-byte Path was not used")
    fuzzCheck(SetCookieParser.parse(line + "; Path=\(longest)p", now: now) == parsed, "a 1025-byte Path was not ignored")

    let written = setCookieLine(parsed, style: style)
    let again = SetCookieParser.parse(written, now: now)
    fuzzCheck(again == expectedAfterRoundTrip(parsed), "\(line.debugDescription) parsed to \(parsed), written back as \(written.debugDescription), which parses to \(String(describing: again))")
}

func checkStore(_ lines: [String], limitBits: UInt8) {
    let limits = CookieLimits(cookiesPerDomain: 1 + Int(limitBits & 3), cookies: 1 + Int((limitBits >> 2) & 7),
                              nameAndValueBytes: 8 + 16 * Int(limitBits >> 5))
    var jar = CookieJar(limits: limits)
    for (index, line) in lines.enumerated() {
        guard let parsed = SetCookieParser.parse(line, now: now) else { continue }
        let request = requests[index % requests.count]
        jar.store(parsed, from: request, now: now)
        fuzzCheck(jar.count <= limits.cookies, "\(jar.count) cookies in a store limited to \(limits.cookies)")
        fuzzCheck(jar.entries.values.reduce(0) { $0 + $1.count } == jar.count, "the store's count disagrees with its domains")
        for (domain, entries) in jar.entries {
            fuzzCheck(entries.count <= limits.cookiesPerDomain, "\(entries.count) cookies for \(domain), limited to \(limits.cookiesPerDomain)")
            for entry in entries {
                fuzzCheck(entry.cookie.name.utf8.count + entry.cookie.value.utf8.count <= limits.nameAndValueBytes, "a cookie of more than \(limits.nameAndValueBytes) bytes was kept")
                fuzzCheck(entry.cookie.domain == domain, "a cookie for \(entry.cookie.domain) filed under \(domain)")
            }
        }
        for cookie in jar.cookies(for: request, now: now) {
            fuzzCheck(!cookie.isExpired(at: now), "an expired cookie \(cookie) was returned")
        }
    }
}

runFuzzer { bytes in
    var input = FuzzInput(bytes)
    let style = input.byte()
    let limitBits = input.byte()
    let text = String(decoding: input.remaining(), as: UTF8.self)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).prefix(64).map(String.init)
    if let first = lines.first { checkLine(first, style: style) }
    checkStore(lines, limitBits: limitBits)
}
