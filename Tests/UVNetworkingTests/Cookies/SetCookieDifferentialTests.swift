import Foundation
import Testing
@testable import UVNetworking

/// Our Set-Cookie parser against one no one here wrote: Python's `http.cookies.SimpleCookie`
/// (with `http.cookiejar.http2time` for Expires dates), run as a child process on the same lines.
///
/// SimpleCookie follows RFC 2109's quoting and reads a line as a Cookie header would be, not by
/// RFC 6265 §5.2, so the two disagree on purpose on some lines: every such line is in
/// `SetCookieDisagreements.table` with the RFC 6265 reason (docs/fuzzing.md
/// has the same table). The test fails on a disagreement not in the table, and on a row of the
/// table whose line no longer disagrees, so the table stays exact.
@Suite(.tags(.childProcess)) struct SetCookieDifferentialTests {
    /// Max-Age is relative: both sides are read against this instant.
    private static let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func everyDisagreementWithPythonsSimpleCookieHasAnRFC6265Reason() throws {
        let theirs = try Self.simpleCookie(SetCookieDisagreements.lines)
        try #require(theirs.count == SetCookieDisagreements.lines.count)
        var disagreeing: [String: String] = [:]
        for (line, python) in zip(SetCookieDisagreements.lines, theirs) {
            let ours = SetCookieParser.parse(line, now: Self.now).map(CookieFacts.init(ours:))
            if ours != python { disagreeing[line] = "ours \(ours.map(String.init(describing:)) ?? "ignored"), Python's \(python.map(String.init(describing:)) ?? "nothing")" }
        }
        for (line, detail) in disagreeing.sorted(by: { $0.key < $1.key }) where SetCookieDisagreements.table[line] == nil {
            Issue.record("a disagreement without a reason: \(line.debugDescription): \(detail)")
        }
        for line in SetCookieDisagreements.table.keys.sorted() where disagreeing[line] == nil {
            Issue.record("listed as a disagreement, but both agree now: \(line.debugDescription)")
        }
        #expect(Set(SetCookieDisagreements.table.keys).isSubset(of: Set(SetCookieDisagreements.lines)))
    }

    @Test func theComparisonSeesADifference() throws {
        // The check above is worth something only if a real difference shows: the same line
        // read by both must differ from a different line read by Python.
        let theirs = try Self.simpleCookie(["a=b; Path=/x; Secure", "a=c; Path=/x; Secure"])
        let ours = SetCookieParser.parse("a=b; Path=/x; Secure", now: Self.now).map(CookieFacts.init(ours:))
        #expect(ours == theirs[0])
        #expect(ours != theirs[1])
    }

    /// The first cookie SimpleCookie reads from each line, as facts; nil when it reads none.
    private static func simpleCookie(_ lines: [String]) throws -> [CookieFacts?] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", pythonReader, String(Int(now.timeIntervalSince1970))]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        // The lines are a few KiB, less than a pipe holds: written whole before reading.
        try input.fileHandleForWriting.write(contentsOf: JSONEncoder().encode(lines))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "python3 failed")
        return try JSONDecoder().decode([CookieFacts?].self, from: data)
    }

    /// Reads a JSON list of lines on stdin; writes, for each, the first cookie's facts or null.
    /// Python's representation is put in ours only where the two mean the same thing: a domain's
    /// case and leading dot, Max-Age as seconds or "expired", Expires as a time or nothing.
    private static let pythonReader = """
        import json, re, sys
        from http.cookies import SimpleCookie, CookieError
        from http.cookiejar import http2time
        now = int(sys.argv[1])
        out = []
        for line in json.load(sys.stdin):
            jar = SimpleCookie()
            try:
                jar.load(line)
            except CookieError:
                out.append(None)
                continue
            if not jar:
                out.append(None)
                continue
            name, m = next(iter(jar.items()))
            facts = {"name": name, "value": m.value, "secure": bool(m["secure"]), "httpOnly": bool(m["httponly"])}
            if m["domain"]:
                d = m["domain"].lower()
                facts["domain"] = d[1:] if d.startswith(".") else d
            if m["path"]:
                facts["path"] = m["path"]
            if m["samesite"]:
                facts["sameSite"] = m["samesite"].lower()
            age = str(m["max-age"])
            if age:
                if re.fullmatch(r"-?[0-9]+", age):
                    facts["maxAge"] = "expired" if int(age) <= 0 else age
                else:
                    facts["maxAge"] = age
            if m["expires"]:
                t = http2time(m["expires"])
                facts["expires"] = "unreadable" if t is None else str(int(t))
            out.append(facts)
        json.dump(out, sys.stdout)
        """
}

/// What both parsers say of a cookie, in one representation.
struct CookieFacts: Codable, Equatable, CustomStringConvertible {
    var name: String
    var value: String
    var domain: String?
    var path: String?
    var secure: Bool
    var httpOnly: Bool
    var sameSite: String?
    /// Seconds, or "expired" for zero or less.
    var maxAge: String?
    /// Seconds since 1970.
    var expires: String?

    init(ours cookie: SetCookie) {
        name = cookie.name
        value = cookie.value
        domain = cookie.domain
        path = cookie.path
        secure = cookie.isSecure
        httpOnly = cookie.isHTTPOnly
        sameSite = cookie.sameSite?.rawValue.lowercased()
        maxAge = cookie.maxAgeExpiry.map { expiry in
            expiry == .distantPast ? "expired" : String(Int(expiry.timeIntervalSince(Date(timeIntervalSince1970: 1_700_000_000))))
        }
        expires = cookie.expires.map { String(Int($0.timeIntervalSince1970)) }
    }

    var description: String {
        var parts = ["\(name)=\(value)"]
        if let domain { parts.append("Domain=\(domain)") }
        if let path { parts.append("Path=\(path)") }
        if secure { parts.append("Secure") }
        if httpOnly { parts.append("HttpOnly") }
        if let sameSite { parts.append("SameSite=\(sameSite)") }
        if let maxAge { parts.append("Max-Age=\(maxAge)") }
        if let expires { parts.append("Expires=\(expires)") }
        return parts.joined(separator: "; ")
    }
}
