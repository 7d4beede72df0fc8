import Foundation
import Testing
import UVNetworking

/// RFC 9309: how a robots.txt file is read, which group applies to a crawler, and which rule
/// decides for a URL. Only the public API.
@Suite(.tags(.unit)) struct RobotsTxtTests {
    private func robots(_ text: String) -> RobotsTxt {
        RobotsTxt(parsing: Array(text.utf8))
    }

    private func allowed(_ text: String, _ path: String, agent: String = "uvfetch") -> Bool {
        robots(text).isAllowed(pathAndQuery: path, productToken: agent)
    }

    // MARK: The RFC's examples

    /// §5.1, decision by decision as its explanation gives them.
    @Test func theSimpleExampleOfSection5_1() {
        let file = robots("""
            User-Agent: *
            Disallow: *.gif$
            Disallow: /example/
            Allow: /publications/

            User-Agent: foobot
            Disallow:/
            Allow:/example/page.html
            Allow:/example/allowed.gif

            User-Agent: barbot
            User-Agent: bazbot
            Disallow: /example/page.html

            User-Agent: quxbot

            """)
        #expect(file.isAllowed(pathAndQuery: "/example/page.html", productToken: "foobot"))
        #expect(file.isAllowed(pathAndQuery: "/example/allowed.gif", productToken: "foobot"))
        #expect(!file.isAllowed(pathAndQuery: "/example/other.html", productToken: "foobot"))
        #expect(!file.isAllowed(pathAndQuery: "/", productToken: "foobot"))
        for bot in ["barbot", "bazbot"] {
            #expect(!file.isAllowed(pathAndQuery: "/example/page.html", productToken: bot))
            #expect(file.isAllowed(pathAndQuery: "/example/other.html", productToken: bot))
            #expect(file.isAllowed(pathAndQuery: "/image.gif", productToken: bot))
        }
        // quxbot's group has no rules: everything allowed, the * group does not apply.
        #expect(file.isAllowed(pathAndQuery: "/example/page.html", productToken: "quxbot"))
        #expect(file.isAllowed(pathAndQuery: "/image.gif", productToken: "quxbot"))
        // Everyone else: the * group.
        #expect(!file.isAllowed(pathAndQuery: "/image.gif", productToken: "otherbot"))
        #expect(!file.isAllowed(pathAndQuery: "/a/b/c.gif", productToken: "otherbot"))
        #expect(file.isAllowed(pathAndQuery: "/a/b/c.gif?size=2", productToken: "otherbot"))
        #expect(!file.isAllowed(pathAndQuery: "/example/", productToken: "otherbot"))
        #expect(file.isAllowed(pathAndQuery: "/publications/2022", productToken: "otherbot"))
        #expect(file.isAllowed(pathAndQuery: "/other", productToken: "otherbot"))
    }

    /// §5.2: the longest match wins, whatever the order.
    @Test func theLongestMatchExampleOfSection5_2() {
        for text in ["User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n",
                     "User-Agent: foobot\nDisallow: /example/page/disallowed.gif\nAllow: /example/page/\n"] {
            #expect(allowed(text, "/example/page/", agent: "foobot"))
            #expect(allowed(text, "/example/page/other.gif", agent: "foobot"))
            #expect(!allowed(text, "/example/page/disallowed.gif", agent: "foobot"))
        }
    }

    /// §2.2.1: groups naming the same agent are one group.
    @Test func groupsNamingTheSameAgentAreMerged() {
        let text = """
            user-agent: ExampleBot
            disallow: /foo
            disallow: /bar

            user-agent: *
            disallow: /everyone

            user-agent: examplebot
            disallow: /baz
            """
        for path in ["/foo", "/bar", "/baz/x"] { #expect(!allowed(text, path, agent: "ExampleBot")) }
        #expect(allowed(text, "/everyone", agent: "ExampleBot"))
        #expect(allowed(text, "/qux", agent: "ExampleBot"))
        #expect(robots(text).rules(for: "EXAMPLEBOT") == robots("user-agent: examplebot\ndisallow: /foo\ndisallow: /bar\ndisallow: /baz").rules(for: "examplebot"))
    }

    /// §2.2.2's table: each path, its encoded form, and what it matches.
    @Test(arguments: [
        ("/foo/bar?baz=quz", "/foo/bar?baz=quz"),
        ("/foo/bar/ツ", "/foo/bar/%E3%83%84"),
        ("/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84"),
        ("/foo/bar/%62%61%7A", "/foo/bar/baz"),
    ])
    func theEncodingTableOfSection2_2_2(pattern: String, path: String) {
        #expect(!allowed("user-agent: *\ndisallow: \(pattern)$", path))
        // Either way round: the URL is normalised as the pattern is.
        #expect(!allowed("user-agent: *\ndisallow: \(path)$", pattern.contains("ツ") ? "/foo/bar/%e3%83%84" : pattern))
    }

    /// §2.2.3: a pattern names "*" and "$" literally by their escapes.
    @Test func escapedSpecialCharactersMatchThemselvesLiterally() throws {
        let file = robots("user-agent: *\ndisallow: /path/file-with-a-%2A.html\ndisallow: /path/foo-%24\n")
        let star = try #require(URL(string: "https://www.example.com/path/file-with-a-*.html"))
        let dollar = try #require(URL(string: "https://www.example.com/path/foo-$"))
        #expect(!file.isAllowed(star, productToken: "uvfetch"))
        #expect(!file.isAllowed(dollar, productToken: "uvfetch"))
        #expect(file.isAllowed(pathAndQuery: "/path/file-with-a-x.html", productToken: "uvfetch"))
        #expect(file.isAllowed(pathAndQuery: "/path/foo-", productToken: "uvfetch"))
    }

    // MARK: Choosing the group

    @Test func theProductTokenIsMatchedWholeAndCaseInsensitively() {
        let text = "user-agent: uvfetch\ndisallow: /\n\nuser-agent: *\nallow: /\n"
        #expect(!allowed(text, "/a", agent: "uvfetch"))
        #expect(!allowed(text, "/a", agent: "UVFetch"))
        for other in ["uvfetch-extra", "uvfetchbot", "uv", "xuvfetch", "uvfetch/1.0", ""] {
            #expect(allowed(text, "/a", agent: other), "\(other) took uvfetch's group")
        }
        let longer = "user-agent: uvfetch-extra\ndisallow: /\n"
        #expect(allowed(longer, "/a", agent: "uvfetch"))
        #expect(!allowed(longer, "/a", agent: "uvfetch-extra"))
    }

    @Test func theStarGroupAppliesOnlyWhenNoGroupNamesTheToken() {
        let text = "user-agent: *\ndisallow: /\n\nuser-agent: uvfetch\ndisallow: /private\n"
        #expect(allowed(text, "/public", agent: "uvfetch"))
        #expect(!allowed(text, "/private", agent: "uvfetch"))
        #expect(!allowed(text, "/public", agent: "otherbot"))
    }

    @Test func withNeitherANamedGroupNorAStarGroupEverythingIsAllowed() {
        #expect(allowed("user-agent: otherbot\ndisallow: /\n", "/a"))
        #expect(allowed("", "/a"))
        #expect(allowed("# nothing but a comment\n\n", "/a"))
        #expect(robots("user-agent: otherbot\ndisallow: /\n").rules(for: "uvfetch") == RobotsRules.allowAll)
        #expect(RobotsTxt.allowAll == robots(""))
    }

    @Test func rulesBeforeAnyUserAgentLineAreIgnored() {
        #expect(allowed("disallow: /\nallow: /a\ncrawl-delay: 5\n", "/b"))
        #expect(robots("disallow: /\ncrawl-delay: 5\nuser-agent: *\n").crawlDelay(productToken: "uvfetch") == nil)
        #expect(allowed("disallow: /\nuser-agent: *\ndisallow: /x\n", "/b"))
    }

    @Test func aUserAgentLineAfterARuleStartsANewGroup() {
        let text = "user-agent: a\ndisallow: /x\nuser-agent: b\ndisallow: /y\n"
        #expect(!allowed(text, "/x", agent: "a"))
        #expect(allowed(text, "/y", agent: "a"))
        #expect(allowed(text, "/x", agent: "b"))
        // An empty disallow is a rule too: it ends the run of user-agent lines.
        #expect(allowed("user-agent: a\ndisallow:\nuser-agent: b\ndisallow: /\n", "/x", agent: "a"))
    }

    /// §2.2.4: other records do not end a run of user-agent lines.
    @Test(arguments: ["sitemap: https://example.com/sitemap.xml", "crawl-delay: 3", "host: example.com", "foo: bar", "no colon here", "", "# comment"])
    func otherLinesDoNotEndAGroupsUserAgentLines(line: String) {
        let text = "user-agent: a\n\(line)\nuser-agent: b\ndisallow: /x\n"
        #expect(!allowed(text, "/x", agent: "a"), "\(line.debugDescription) ended the group")
        #expect(!allowed(text, "/x", agent: "b"))
    }

    @Test func userAgentValuesNameTheirLeadingToken() {
        // "Bot/1.0" names "bot"; a value naming no token is skipped as if absent.
        #expect(!allowed("user-agent: UVFetch/1.0 (+https://example.com)\ndisallow: /\n", "/a"))
        #expect(!allowed("user-agent: a\nuser-agent:\ndisallow: /\n", "/x", agent: "a"))
        #expect(!allowed("user-agent: a\ndisallow: /x\nuser-agent: (bot)\ndisallow: /y\n", "/y", agent: "a"))
        // "*" alone, or before a space, is the star group; "*bot" names nothing.
        #expect(!allowed("user-agent: * everyone\ndisallow: /\n", "/a"))
        #expect(allowed("user-agent: *bot\ndisallow: /\n", "/a"))
    }

    // MARK: Rules

    @Test func anEmptyDisallowMatchesNothing() {
        #expect(allowed("user-agent: *\ndisallow:\n", "/a"))
        #expect(allowed("user-agent: *\ndisallow:   # comment\n", "/"))
        #expect(robots("user-agent: *\ndisallow:\n").rules(for: "x") == robots("user-agent: *\n").rules(for: "x"))
    }

    @Test func allowWinsATieAndTheLongerRuleWinsOtherwise() {
        #expect(allowed("user-agent: *\ndisallow: /a\nallow: /a\n", "/a/b"))
        #expect(allowed("user-agent: *\nallow: /a\ndisallow: /a\n", "/a/b"))
        #expect(!allowed("user-agent: *\nallow: /a\ndisallow: /a/\n", "/a/b"))
        #expect(allowed("user-agent: *\ndisallow: /a\nallow: /a/b\n", "/a/b"))
        // Wildcards and the anchor count as octets: "/*.php$" (7) beats "/page" (5).
        #expect(!allowed("user-agent: *\nallow: /page\ndisallow: /*.php$\n", "/page.php"))
        // Lengths are of the normalised pattern: "%7E" is "~", one octet, a tie with "/~a".
        #expect(allowed("user-agent: *\ndisallow: /~a\nallow: /%7Ea\n", "/~ab"))
        #expect(allowed("user-agent: *\ndisallow: /%7ea\nallow: /~a\n", "/~ab"))
    }

    @Test func theStarMatchesAnySequence() {
        let text = "user-agent: *\ndisallow: /a*b*c\n"
        for path in ["/abc", "/a/b/c", "/axxbyyc/z", "/abbbc", "/acbc"] { #expect(!allowed(text, path), "\(path)") }
        for path in ["/ab", "/acb", "/xabc", "/"] { #expect(allowed(text, path), "\(path)") }
        #expect(!allowed("user-agent: *\ndisallow: *\n", "/anything?at=all"))
        #expect(!allowed("user-agent: *\ndisallow: /a**b\n", "/axb"))
        #expect(!allowed("user-agent: *\ndisallow: /*\n", "/"))
    }

    @Test func aFinalDollarAnchorsAtTheEndOfThePath() {
        let text = "user-agent: *\ndisallow: /a$\ndisallow: /*.pdf$\n"
        #expect(!allowed(text, "/a"))
        #expect(allowed(text, "/ab"))
        #expect(allowed(text, "/a?x"))
        #expect(!allowed(text, "/docs/x.pdf"))
        #expect(allowed(text, "/docs/x.pdf?download"))
        #expect(allowed(text, "/docs/x.pdfs"))
        // A "$" elsewhere is a literal "$".
        #expect(!allowed("user-agent: *\ndisallow: /a$b\n", "/a$b/c"))
        #expect(allowed("user-agent: *\ndisallow: /a$b\n", "/a"))
        // "$" and "*$" after a star.
        #expect(!allowed("user-agent: *\ndisallow: /*$\n", "/x"))
        #expect(!allowed("user-agent: *\ndisallow: /a*$\n", "/abc"))
    }

    @Test func rulesMatchThePathAndTheQuery() throws {
        let text = "user-agent: *\ndisallow: /search?q=\ndisallow: /*?session=\n"
        #expect(!allowed(text, "/search?q=robots"))
        #expect(allowed(text, "/search"))
        #expect(!allowed(text, "/cart?session=1"))
        let file = robots(text)
        #expect(!file.isAllowed(try #require(URL(string: "https://example.com/search?q=a#top")), productToken: "x"))
        // A fragment is never matched.
        #expect(file.isAllowed(try #require(URL(string: "https://example.com/search#?q=a")), productToken: "x"))
        #expect(file.isAllowed(pathAndQuery: "/search#?q=a", productToken: "x"))
    }

    @Test func anEmptyPathIsTheRoot() throws {
        let file = robots("user-agent: *\ndisallow: /$\n")
        #expect(!file.isAllowed(try #require(URL(string: "https://example.com")), productToken: "x"))
        #expect(!file.isAllowed(try #require(URL(string: "https://example.com/")), productToken: "x"))
        #expect(!file.isAllowed(pathAndQuery: "", productToken: "x"))
        #expect(file.isAllowed(try #require(URL(string: "https://example.com?x=1")), productToken: "x"))
        #expect(!robots("user-agent: *\ndisallow: /?x\n").isAllowed(try #require(URL(string: "https://example.com?x=1")), productToken: "x"))
    }

    @Test func aPatternWithoutALeadingSlashGetsOne() {
        #expect(!allowed("user-agent: *\ndisallow: private\n", "/private/a"))
        #expect(allowed("user-agent: *\ndisallow: private\n", "/a/private"))
        #expect(!allowed("user-agent: *\ndisallow: *private\n", "/a/private"))
    }

    @Test func percentEncodingIsNormalisedOnBothSides() {
        // Unreserved characters decoded, hex digits in any case.
        #expect(!allowed("user-agent: *\ndisallow: /%7Euser\n", "/~user/a"))
        #expect(!allowed("user-agent: *\ndisallow: /~user\n", "/%7euser/a"))
        #expect(!allowed("user-agent: *\ndisallow: /%e3%83%84\n", "/%E3%83%84"))
        #expect(!allowed("user-agent: *\ndisallow: /ツ\n", "/%e3%83%84"))
        // Reserved characters are not: "%2F" is not "/", "%3F" is not "?".
        #expect(allowed("user-agent: *\ndisallow: /a%2Fb\n", "/a/b"))
        #expect(allowed("user-agent: *\ndisallow: /a/b\n", "/a%2fb"))
        #expect(!allowed("user-agent: *\ndisallow: /a%2fb\n", "/a%2Fb"))
        #expect(allowed("user-agent: *\ndisallow: /a%3Fb\n", "/a?b"))
        // Octets a URL never holds as they are: a space in a pattern is "%20".
        #expect(!allowed("user-agent: *\ndisallow: /a b\n", "/a%20b"))
        // Matching is case-sensitive.
        #expect(allowed("user-agent: *\ndisallow: /Private\n", "/private"))
    }

    @Test func robotsTxtItselfIsAlwaysAllowed() throws {
        let file = RobotsTxt.disallowAll
        #expect(file.isAllowed(pathAndQuery: "/robots.txt", productToken: "x"))
        #expect(file.isAllowed(pathAndQuery: "/robots.txt?v=2", productToken: "x"))
        #expect(file.isAllowed(pathAndQuery: "/%72obots.txt", productToken: "x"))
        #expect(file.isAllowed(try #require(URL(string: "https://example.com/robots.txt")), productToken: "x"))
        #expect(file.rules(for: "x").isAllowed(pathAndQuery: "/robots.txt"))
        #expect(!allowed("user-agent: *\ndisallow: /robots.txt\n", "/robots.txt/"))
        #expect(allowed("user-agent: *\ndisallow: /robots.txt\n", "/robots.txt"))
        #expect(!file.isAllowed(pathAndQuery: "/robots.TXT", productToken: "x"))
    }

    // MARK: Syntax

    @Test func keysAreCaseInsensitiveAndWhitespaceIsTolerated() {
        let plain = robots("user-agent: a\ndisallow: /x\n")
        #expect(robots("USER-AGENT: a\nDisAllow: /x\n") == plain)
        #expect(robots("  user-agent  :  a  \n\tdisallow\t:\t/x\t\n") == plain)
        #expect(robots("user-agent:a\ndisallow:/x") == plain)
        #expect(robots("user-agent: a # the bot\ndisallow: /x#y\n# the end\n") == plain)
        // Only the keys of the protocol: no misspellings, no key without a colon.
        #expect(allowed("user-agent: *\ndissallow: /\n", "/x"))
        #expect(allowed("user-agent: *\ndisallow /\n", "/x"))
        #expect(allowed("useragent: *\ndisallow: /\n", "/x"))
    }

    @Test(arguments: ["\n", "\r", "\r\n"])
    func linesEndWithLFCROrCRLF(ending: String) {
        let text = ["user-agent: a", "disallow: /x", "", "user-agent: b", "allow: /"].joined(separator: ending)
        #expect(robots(text) == robots("user-agent: a\ndisallow: /x\n\nuser-agent: b\nallow: /"))
        #expect(!allowed(text, "/x", agent: "a"))
    }

    @Test func aByteOrderMarkIsSkipped() {
        let file = RobotsTxt(parsing: [0xEF, 0xBB, 0xBF] + Array("user-agent: *\ndisallow: /\n".utf8))
        #expect(file == .disallowAll)
    }

    @Test func sitemapsAreReadAndBelongToNoGroup() {
        let file = robots("sitemap: https://example.com/a.xml\nuser-agent: *\nSitemap: https://example.com/b.xml\ndisallow: /x\n")
        #expect(file.sitemaps == ["https://example.com/a.xml", "https://example.com/b.xml"])
        #expect(file.rules(for: "x") == robots("user-agent: *\ndisallow: /x\n").rules(for: "x"))
    }

    @Test func invalidBytesNeverStopTheParser() {
        var bytes = Array("user-agent: *\ndisallow: /\u{0}\u{7F}".utf8) + [0xFF, 0xC3, 0x0A]
        bytes += Array("disallow: /é\n".utf8)
        let file = RobotsTxt(parsing: bytes)
        #expect(!file.isAllowed(pathAndQuery: "/%00%7F%FF%C3", productToken: "x"))
        #expect(!file.isAllowed(pathAndQuery: "/%C3%A9", productToken: "x"))
        #expect(file.isAllowed(pathAndQuery: "/a", productToken: "x"))
    }

    // MARK: What fetching /robots.txt gave

    @Test(arguments: [
        (200, true), (204, true), (299, true),
        (301, true), (302, true), (308, true),
        (400, true), (401, true), (403, true), (404, true), (410, true), (429, true), (499, true),
        (500, false), (502, false), (503, false), (599, false),
        (100, false), (199, false), (0, false), (600, false), (-1, false),
    ])
    func theStatusDecidesWhetherTheBodyIsRead(status: Int, allowsWithoutABody: Bool) {
        let empty = RobotsTxt(status: status, body: [UInt8]())
        #expect(empty.isAllowed(pathAndQuery: "/a", productToken: "x") == allowsWithoutABody)
        #expect(empty.isAllowed(pathAndQuery: "/robots.txt", productToken: "x"))
        // Only a 2xx body is read.
        let body = Array("user-agent: *\ndisallow: /a\n".utf8)
        let withBody = RobotsTxt(status: status, body: body)
        #expect(withBody == ((200...299).contains(status) ? RobotsTxt(parsing: body) : empty))
    }

    @Test func noResponseDisallowsEverything() {
        #expect(RobotsTxt(status: nil, body: Array("user-agent: *\nallow: /\n".utf8)) == .disallowAll)
        #expect(!RobotsTxt.disallowAll.isAllowed(pathAndQuery: "/", productToken: "anybot"))
        #expect(RobotsTxt.disallowAll == robots("User-agent: *\nDisallow: /"))
    }

    // MARK: Product tokens and Crawl-delay

    @Test(arguments: [
        ("MyBot/1.0 (+http://x)", "MyBot"),
        ("uvfetch/0.9", "uvfetch"),
        ("  Googlebot", "Googlebot"),
        ("curl 8.0", "curl"),
        ("Mozilla/5.0 (compatible; uvfetch/1.0)", "Mozilla"),
        ("plain", "plain"),
        ("", ""),
        ("/1.0", ""),
    ])
    func theProductTokenIsTheUserAgentUpToTheFirstSlashOrSpace(userAgent: String, token: String) {
        #expect(RobotsTxt.productToken(fromUserAgent: userAgent) == token)
    }

    @Test func crawlDelayComesFromTheGroupThatApplies() {
        let file = robots("""
            user-agent: *
            disallow: /private
            crawl-delay: 10

            user-agent: uvfetch
            crawl-delay: 2.5
            disallow: /x

            user-agent: quiet
            disallow: /
            """)
        #expect(file.crawlDelay(productToken: "uvfetch") == 2.5)
        #expect(file.crawlDelay(productToken: "other") == 10)
        #expect(file.crawlDelay(productToken: "quiet") == nil)
        #expect(file.rules(for: "UVFETCH").crawlDelay == 2.5)
        // Merged groups: the last valid value in file order.
        let merged = robots("user-agent: a\ncrawl-delay: 1\nuser-agent: b\ndisallow: /\n\nuser-agent: a\ncrawl-delay: 3\ncrawl-delay: x\n")
        #expect(merged.crawlDelay(productToken: "a") == 3)
        #expect(merged.crawlDelay(productToken: "b") == 1)
    }

    /// §2.2.4: a Crawl-delay line is another record, so it does not end a run of user-agent
    /// lines; the next user-agent line joins the group, and the delay is the whole group's.
    @Test func aCrawlDelayBetweenUserAgentLinesBelongsToTheGroupTheyStart() {
        let file = robots("user-agent: *\ncrawl-delay: 10\n\nuser-agent: uvfetch\ndisallow: /x\n")
        #expect(file.crawlDelay(productToken: "uvfetch") == 10)
        #expect(file.crawlDelay(productToken: "other") == 10)
        #expect(!file.isAllowed(pathAndQuery: "/x", productToken: "other"))
    }

    @Test(arguments: [("5", 5.0), ("0", 0.0), ("0.5", 0.5), (".5", 0.5), ("2.", 2.0), ("007", 7.0)])
    func validCrawlDelays(value: String, seconds: Double) {
        #expect(robots("user-agent: *\ncrawl-delay: \(value)\n").crawlDelay(productToken: "x") == seconds)
    }

    @Test(arguments: ["-1", "+5", "1e3", "inf", "nan", "five", "1.2.3", ".", "", "5 s", "0x10", String(repeating: "9", count: 400)])
    func invalidOrNegativeCrawlDelaysAreIgnored(value: String) {
        #expect(robots("user-agent: *\ncrawl-delay: \(value)\n").crawlDelay(productToken: "x") == nil)
    }

    // MARK: The 500 KiB limit

    /// A comment line that makes the file `length` bytes long before `rest`.
    private func padded(to length: Int, then rest: String) -> [UInt8] {
        let head = Array("user-agent: *\n".utf8)
        let filler = [UInt8(ascii: "#")] + [UInt8](repeating: UInt8(ascii: "x"), count: length - head.count - 2) + [UInt8(ascii: "\n")]
        return head + filler + Array(rest.utf8)
    }

    @Test func onlyTheFirst500KiBAreRead() {
        let limit = RobotsTxt.maximumParsedBytes
        #expect(limit == 512_000)
        // A rule whose line ends on the limit's last byte is read.
        let within = RobotsTxt(parsing: padded(to: limit - 12, then: "disallow: /\n"))
        #expect(!within.isAllowed(pathAndQuery: "/a", productToken: "x"))
        // Without its line end, the file also ends there: still read.
        #expect(RobotsTxt(parsing: padded(to: limit - 11, then: "disallow: /")) == within)
        // One byte past the limit, the rule is not read.
        let beyond = RobotsTxt(parsing: padded(to: limit, then: "disallow: /\n"))
        #expect(beyond.isAllowed(pathAndQuery: "/a", productToken: "x"))
        // A line the limit cuts is dropped, not read in part: "disallow: /a" of "/abc".
        let cut = RobotsTxt(parsing: padded(to: limit - 12, then: "disallow: /abc\n"))
        #expect(cut.isAllowed(pathAndQuery: "/a", productToken: "x"))
        #expect(cut.isAllowed(pathAndQuery: "/abc", productToken: "x"))
        // Bytes past the limit change nothing.
        let prefix = padded(to: limit - 5, then: "disallow: /a\n")
        #expect(RobotsTxt(parsing: prefix) == RobotsTxt(parsing: prefix + Array("\ndisallow: /\n".utf8)))
    }

    // MARK: Hostile files

    /// Inputs that would take an exponential matcher (or one quadratic in the file) longer than
    /// anyone waits: the test is that these complete, and decide right.
    @Test func hostileFilesAndPathsStayCheap() {
        let head = Array("user-agent: *\ndisallow: ".utf8)
        let stars = RobotsTxt(parsing: head + [UInt8](repeating: UInt8(ascii: "*"), count: RobotsTxt.maximumParsedBytes - head.count))
        #expect(!stars.isAllowed(pathAndQuery: "/" + String(repeating: "a", count: 10_000), productToken: "x"))
        // Backtracking over every "*" would take 2^n steps here.
        let alternating = robots("user-agent: *\ndisallow: /" + String(repeating: "*a", count: 200_000) + "*b\n")
        let path = "/" + String(repeating: "a", count: 100_000)
        #expect(alternating.isAllowed(pathAndQuery: path, productToken: "x"))
        #expect(!alternating.isAllowed(pathAndQuery: "/" + String(repeating: "a", count: 200_000) + "b", productToken: "x"))
        // A long piece that almost matches everywhere: quadratic for a naive search.
        let nearMiss = robots("user-agent: *\ndisallow: /*" + String(repeating: "a", count: 100_000) + "b\n")
        #expect(nearMiss.isAllowed(pathAndQuery: "/" + String(repeating: "a", count: 400_000), productToken: "x"))
        // Many groups naming many agents, many rules, and lines that are all line ends.
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        let agents = (0..<10_000).map { "user-agent: bot\(letters[$0 % 26])x\n" }.joined() + String(repeating: "disallow: /a*b\n", count: 15_000)
        #expect(robots(agents).isAllowed(pathAndQuery: "/" + String(repeating: "a", count: 1_000), productToken: "botbx"))
        #expect(RobotsTxt(parsing: [UInt8](repeating: UInt8(ascii: "\r"), count: 600 * 1024)) == .allowAll)
        #expect(RobotsTxt(parsing: [UInt8](repeating: UInt8(ascii: ":"), count: 600 * 1024)) == .allowAll)
    }

    // MARK: One decision, two ways

    @Test func rulesChosenOnceDecideAsTheFileDoes() throws {
        let text = "user-agent: *\ndisallow: /a\nallow: /a/b$\nuser-agent: uvfetch\nuser-agent: other\ndisallow: /*.gif$\nallow: /c\ndisallow: /c/d\n"
        let file = robots(text)
        for agent in ["uvfetch", "UVFETCH", "other", "nobody"] {
            let rules = file.rules(for: agent)
            for path in ["/", "/a", "/a/b", "/a/b/", "/x.gif", "/c/d.gif", "/c/d", "/c", "/robots.txt"] {
                #expect(rules.isAllowed(pathAndQuery: path) == file.isAllowed(pathAndQuery: path, productToken: agent), "\(agent) \(path)")
                let url = try #require(URL(string: "https://example.com\(path)"))
                #expect(rules.isAllowed(url) == rules.isAllowed(pathAndQuery: path))
                #expect(file.isAllowed(url, productToken: agent) == rules.isAllowed(url))
            }
            #expect(rules.crawlDelay == file.crawlDelay(productToken: agent))
        }
    }
}
