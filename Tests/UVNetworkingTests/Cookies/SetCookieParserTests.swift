import Foundation
import Testing
@testable import UVNetworking

/// RFC 6265 §5.2: how one Set-Cookie line is read.
@Suite(.tags(.unit)) struct SetCookieParserTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)

    private func parse(_ line: String) -> SetCookie? {
        SetCookieParser.parse(line, now: now)
    }

    // MARK: Name and value

    @Test func nameAndValueAreTrimmedOfSpacesAndTabs() throws {
        let cookie = try #require(parse(" \tsid = a b \t; Path=/"))
        #expect(cookie.name == "sid")
        #expect(cookie.value == "a b")
    }

    @Test func theValueRunsFromTheFirstEqualsSignToTheFirstSemicolon() throws {
        #expect(parse("a=b=c")?.value == "b=c")
        #expect(parse("a=")?.value == "")
        // Quotes are part of the value, and do not protect a semicolon.
        #expect(parse(#"a="x;y""#)?.value == #""x"#)
        #expect(parse("a=é")?.value == "é")
    }

    @Test(arguments: ["", "abc", "=b", " = b", ";a=b", "a\u{01}=b", "a=b\u{7F}", "a=b; Path=/\u{00}", "a=b\r\n"])
    func linesWithoutAUsableNameOrWithControlCharactersAreIgnored(_ line: String) {
        #expect(parse(line) == nil)
    }

    @Test func aLineWithOnlyAPairHasNoAttributes() throws {
        let cookie = try #require(parse("a=b"))
        #expect(cookie == SetCookie(name: "a", value: "b"))
        #expect(cookie.expiryTime == nil)
    }

    // MARK: Expires and Max-Age

    @Test func expiresIsReadWithTheCookieDateAlgorithm() throws {
        #expect(parse("a=b; Expires=Wed, 09 Jun 2021 10:18:14 GMT")?.expires == Date(timeIntervalSince1970: 1_623_233_894))
        // An invalid date leaves the attribute out; an earlier valid one stays.
        #expect(parse("a=b; Expires=soon")?.expires == nil)
        #expect(parse("a=b; Expires=Wed, 09 Jun 2021 10:18:14 GMT; expires=never")?.expires == Date(timeIntervalSince1970: 1_623_233_894))
    }

    @Test func maxAgeCountsFromNow() throws {
        #expect(parse("a=b; Max-Age=60")?.maxAgeExpiry == now.addingTimeInterval(60))
        #expect(parse("a=b; max-age=007")?.maxAgeExpiry == now.addingTimeInterval(7))
    }

    @Test(arguments: ["0", "-1", "-0", "-99999999999999999999999"])
    func maxAgeOfZeroOrLessIsTheEarliestDate(_ value: String) {
        #expect(parse("a=b; Max-Age=\(value)")?.maxAgeExpiry == .distantPast)
    }

    @Test func aHugeMaxAgeSaturatesAtTheLatestDate() {
        #expect(parse("a=b; Max-Age=99999999999999999999999999")?.maxAgeExpiry == .distantFuture)
    }

    @Test(arguments: ["", "+5", "5s", "1.5", "-", " ", "0x10", "--1"])
    func anInvalidMaxAgeIsIgnored(_ value: String) {
        #expect(parse("a=b; Max-Age=\(value)")?.maxAgeExpiry == nil)
    }

    @Test func maxAgeWinsOverExpiresInEitherOrder() throws {
        let before = try #require(parse("a=b; Max-Age=60; Expires=Thu, 01 Jan 1970 00:00:00 GMT"))
        let after = try #require(parse("a=b; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=60"))
        #expect(before.expiryTime == now.addingTimeInterval(60))
        #expect(after.expiryTime == now.addingTimeInterval(60))
        #expect(parse("a=b; Expires=Thu, 01 Jan 1970 00:00:00 GMT")?.expiryTime == Date(timeIntervalSince1970: 0))
    }

    // MARK: Domain and Path

    @Test func domainLosesOneLeadingDotAndIsLowercased() {
        #expect(parse("a=b; Domain=.Example.COM")?.domain == "example.com")
        #expect(parse("a=b; domain=example.com")?.domain == "example.com")
        #expect(parse("a=b; Domain=..example.com")?.domain == ".example.com")
        // "." alone leaves an empty domain, which the store treats as no attribute.
        #expect(parse("a=b; Domain=.")?.domain == "")
    }

    @Test func anEmptyDomainIsIgnoredAndTheLastOneWins() {
        #expect(parse("a=b; Domain=")?.domain == nil)
        #expect(parse("a=b; Domain=a.com; Domain=")?.domain == "a.com")
        #expect(parse("a=b; Domain=a.com; Domain=b.com")?.domain == "b.com")
    }

    @Test func aPathMustBeAbsoluteAndTheLastOneWins() {
        #expect(parse("a=b; Path=/docs")?.path == "/docs")
        #expect(parse("a=b; Path=/a; path=/b")?.path == "/b")
        // Empty or relative: the default path, even over an earlier valid one.
        #expect(parse("a=b; Path=")?.path == nil)
        #expect(parse("a=b; Path=/a; Path=docs")?.path == nil)
    }

    // MARK: Flags

    @Test func secureAndHttpOnlyAreCaseInsensitiveAndIgnoreValues() throws {
        let cookie = try #require(parse("a=b; secure; HTTPONLY"))
        #expect(cookie.isSecure && cookie.isHTTPOnly)
        #expect(parse("a=b; Secure=no")?.isSecure == true)
        #expect(parse("a=b; Securely")?.isSecure == false)
    }

    @Test func sameSiteTakesThreeValuesAndTheLastAttribute() {
        #expect(parse("a=b; SameSite=Strict")?.sameSite == .strict)
        #expect(parse("a=b; samesite=LAX")?.sameSite == .lax)
        #expect(parse("a=b; SameSite=None")?.sameSite == Cookie.SameSite.none)
        #expect(parse("a=b; SameSite=bogus")?.sameSite == nil)
        #expect(parse("a=b; SameSite=Lax; SameSite=bogus")?.sameSite == nil)
    }

    // MARK: Attribute syntax

    @Test func attributesAreTrimmedAndEmptyOrUnknownOnesSkipped() throws {
        let cookie = try #require(parse("a=b;;;  Path = /x ;Comment=hi; Version=1;\tSecure\t;"))
        #expect(cookie.path == "/x")
        #expect(cookie.isSecure)
        #expect(cookie.domain == nil)
    }

    @Test func attributeValuesOver1024BytesAreIgnored() {
        let long = "/" + String(repeating: "x", count: 1023)
        #expect(parse("a=b; Path=\(long)")?.path == long)
        #expect(parse("a=b; Path=\(long)x")?.path == nil)
    }
}
