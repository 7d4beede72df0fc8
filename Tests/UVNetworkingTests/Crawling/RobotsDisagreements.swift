/// The robots.txt files, URLs and product tokens `RobotsDifferentialTests` decides both with
/// ours and with Protego, and the decisions on which the two differ, each with its reason.
enum RobotsDisagreements {
    /// One robots.txt file, asked about each of its paths for each of its agents (and, when
    /// `delays`, for each agent's Crawl-delay).
    struct File {
        let name: String
        let bytes: [UInt8]
        let agents: [String]
        let paths: [String]
        var delays = false

        init(_ name: String, _ text: String, agents: [String] = ["uvfetch"], paths: [String], delays: Bool = false) {
            self.init(name, bytes: Array(text.utf8), agents: agents, paths: paths, delays: delays)
        }

        init(_ name: String, bytes: [UInt8], agents: [String] = ["uvfetch"], paths: [String], delays: Bool = false) {
            self.name = name
            self.bytes = bytes
            self.agents = agents
            self.paths = paths
            self.delays = delays
        }
    }

    /// One question: a path (then the URL is "http://example.com" and the path), or the
    /// Crawl-delay when `path` is nil. `key` names it in `table`.
    struct Question {
        let file: File
        let agent: String
        let path: String?

        var key: String { "\(file.name): \(agent) \(path ?? "Crawl-delay")" }
    }

    static var questions: [Question] {
        files.flatMap { file in
            file.agents.flatMap { agent in
                file.paths.map { Question(file: file, agent: agent, path: $0) }
                    + (file.delays ? [Question(file: file, agent: agent, path: nil)] : [])
            }
        }
    }

    /// The files: RFC 9309's examples, each rule of it, and what servers send.
    static let files: [File] = [
        // §5.1 and §5.2.
        File("rfc-5.1", """
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

            """,
            agents: ["foobot", "barbot", "bazbot", "quxbot", "otherbot"],
            paths: ["/", "/example/page.html", "/example/allowed.gif", "/example/other.html", "/image.gif", "/a/b.gif?x=1", "/publications/x"]),
        File("rfc-5.2", "User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n",
             agents: ["foobot"], paths: ["/example/page/", "/example/page/disallowed.gif", "/example/pagex"]),
        // §2.2.1: choosing and merging groups.
        File("merge", "user-agent: ExampleBot\ndisallow: /foo\ndisallow: /bar\n\nuser-agent: *\ndisallow: /everyone\n\nuser-agent: examplebot\ndisallow: /baz\n",
             agents: ["examplebot", "ExampleBot", "other"], paths: ["/foo", "/bar", "/baz", "/everyone", "/qux"]),
        File("token-whole", "user-agent: uvfetch\ndisallow: /\n\nuser-agent: *\nallow: /\n",
             agents: ["uvfetch", "UVFetch", "uvfetchbot", "uvfetch-extra", "uv"], paths: ["/a"]),
        File("token-longer-group", "user-agent: uvfetch-extra\ndisallow: /\n", agents: ["uvfetch", "uvfetch-extra"], paths: ["/a"]),
        File("token-version", "user-agent: uvfetch/1.0\ndisallow: /\n", paths: ["/a"]),
        File("token-star-prefix", "user-agent: *bot\ndisallow: /\n", agents: ["uvfetch", "somebot"], paths: ["/a"]),
        File("token-one-letter", "user-agent: *\ndisallow: /\n\nuser-agent: a\nallow: /\n", agents: ["a", "b"], paths: ["/x"]),
        File("star-when-unnamed", "user-agent: *\ndisallow: /\n\nuser-agent: uvfetch\ndisallow: /private\n",
             agents: ["uvfetch", "other"], paths: ["/public", "/private"]),
        File("no-star", "user-agent: otherbot\ndisallow: /\n", paths: ["/a"]),
        File("empty", "", paths: ["/a"]),
        File("two-agents", "user-agent: a\nuser-agent: b\ndisallow: /x\n\nuser-agent: b\nallow: /x/y\n", agents: ["a", "b"], paths: ["/x", "/x/y"]),
        // §2.1: where groups start and end.
        File("before-agent", "disallow: /\nuser-agent: *\ndisallow: /x\n", paths: ["/a", "/x"]),
        File("empty-disallow", "user-agent: *\ndisallow:\n", paths: ["/", "/a"]),
        File("empty-disallow-ends-run", "user-agent: a\ndisallow:\nuser-agent: b\ndisallow: /\n", agents: ["a", "b"], paths: ["/x"]),
        File("empty-agent-line", "user-agent: a\ndisallow: /x\nuser-agent:\ndisallow: /y\n", agents: ["a"], paths: ["/x", "/y"]),
        File("sitemap-in-run", "user-agent: a\nsitemap: http://example.com/s.xml\nuser-agent: b\ndisallow: /x\n", agents: ["a", "b"], paths: ["/x"]),
        File("unknown-in-run", "user-agent: a\nfoo: bar\nuser-agent: b\ndisallow: /x\n", agents: ["a", "b"], paths: ["/x"]),
        File("crawl-delay-in-run", "user-agent: a\ncrawl-delay: 3\nuser-agent: b\ndisallow: /x\n", agents: ["a", "b"], paths: ["/x"], delays: true),
        // Syntax.
        File("no-colon", "user-agent: *\ndisallow /x\n", paths: ["/x"]),
        File("misspelt-key", "user-agent: *\ndissallow: /a\n", paths: ["/a"]),
        File("misspelt-agent-key", "useragent: *\ndisallow: /a\n", paths: ["/a"]),
        File("key-case", "USER-AGENT: *\nDisAllow: /x\n", paths: ["/x", "/y"]),
        File("whitespace", "  user-agent  :  *  \n\tdisallow\t:\t/x\t\n", paths: ["/x", "/y"]),
        File("comments", "user-agent: * # all\ndisallow: /x#y\n# disallow: /z\n", paths: ["/x", "/xy", "/z"]),
        File("cr-endings", "user-agent: a\rdisallow: /x\r\ruser-agent: b\rallow: /", agents: ["a", "b"], paths: ["/x"]),
        File("crlf-endings", "user-agent: a\r\ndisallow: /x\r\n\r\nuser-agent: b\r\nallow: /", agents: ["a", "b"], paths: ["/x"]),
        File("form-feed", "user-agent: *\u{0C}disallow: /x\n", paths: ["/x"]),
        File("no-break-space", "user-agent: *\ndisallow: /x\u{A0}\n", paths: ["/x", "/x%C2%A0"]),
        File("bom", "\u{FEFF}user-agent: *\ndisallow: /\n", paths: ["/x"]),
        // §2.2.2: rules.
        File("longest", "user-agent: *\ndisallow: /a\nallow: /a/b\ndisallow: /a/b/c\n", paths: ["/a", "/a/b", "/a/b/c", "/a/bc", "/b"]),
        File("tie-allow-first", "user-agent: *\nallow: /a\ndisallow: /a\n", paths: ["/a/x"]),
        File("tie-disallow-first", "user-agent: *\ndisallow: /a\nallow: /a\n", paths: ["/a/x"]),
        File("wildcards", "user-agent: *\ndisallow: /a*b*c\nallow: /a*b*c/ok\n", paths: ["/abc", "/a/b/c", "/acb", "/a/b/c/ok", "/xabc", "/acbc"]),
        File("wildcard-runs", "user-agent: *\ndisallow: /a**b\nallow: /*\n", paths: ["/axb", "/ab", "/ba"]),
        File("dollar", "user-agent: *\ndisallow: /a$\ndisallow: /*.pdf$\n", paths: ["/a", "/ab", "/a?x", "/x.pdf", "/x.pdf?dl=1", "/x.pdfs"]),
        File("dollar-inside", "user-agent: *\ndisallow: /a$b\n", paths: ["/a$b/c", "/a", "/a%24b"]),
        File("star-dollar", "user-agent: *\ndisallow: /*$\nallow: /ok\n", paths: ["/x", "/ok"]),
        File("query", "user-agent: *\ndisallow: /search?q=\ndisallow: /*?session=\n",
             paths: ["/search?q=x", "/search", "/cart?session=1", "/cart?a=1&session=2"]),
        File("empty-path", "user-agent: *\ndisallow: /$\n", paths: ["", "/", "?x=1", "/a"]),
        File("no-leading-slash", "user-agent: *\ndisallow: private\nallow: *public\n", paths: ["/private/a", "/a/private", "/x/public"]),
        File("fragment", "user-agent: *\ndisallow: /a$\n", paths: ["/a#b", "/a"]),
        File("robots-txt", "user-agent: *\ndisallow: /\n", paths: ["/robots.txt", "/robots.txt?x=1", "/x"]),
        File("index-html", "user-agent: *\ndisallow: /\nallow: /dir/index.html\n", paths: ["/dir/", "/dir/index.html", "/dir/x"]),
        // §2.2.2: percent-encoding.
        File("rfc-2.2.2-table", "user-agent: *\ndisallow: /foo/bar?baz=quz$\ndisallow: /foo/bar/ツ$\ndisallow: /foo/bar/%62%61%7A$\n",
             paths: ["/foo/bar?baz=quz", "/foo/bar/%E3%83%84", "/foo/bar/baz", "/foo/bar/%62%61%7A", "/foo/bar"]),
        File("rfc-2.2.3-special", "user-agent: *\ndisallow: /path/file-with-a-%2A.html\ndisallow: /path/foo-%24\n",
             paths: ["/path/file-with-a-*.html", "/path/file-with-a-%2A.html", "/path/foo-$", "/path/foo-x"]),
        File("unreserved-escapes", "user-agent: *\ndisallow: /%7Euser\ndisallow: /%e3%83%84\n",
             paths: ["/~user/a", "/%7euser", "/%E3%83%84", "/%e3%83%84", "/user"]),
        File("reserved-escapes", "user-agent: *\ndisallow: /a%2Fb\ndisallow: /c:d\ndisallow: /e%3Af\n",
             paths: ["/a/b", "/a%2Fb", "/a%2fb", "/c:d", "/c%3Ad", "/e:f", "/e%3Af"]),
        File("reserved-lengths", "user-agent: *\nallow: /*:::\ndisallow: /*abcde\n", paths: ["/abcde:::"]),
        File("non-ascii", "user-agent: *\ndisallow: /café\n", paths: ["/caf%C3%A9", "/caf%c3%a9", "/cafe"]),
        File("space", "user-agent: *\ndisallow: /a b\n", paths: ["/a%20b", "/a"]),
        File("query-non-ascii", "user-agent: *\ndisallow: /s?q=é\n", paths: ["/s?q=%C3%A9"]),
        File("query-unreserved", "user-agent: *\ndisallow: /s?q=~\n", paths: ["/s?q=%7E", "/s?q=~"]),
        // Crawl-delay.
        File("crawl-delay", "user-agent: *\ndisallow: /private\ncrawl-delay: 10\n\nuser-agent: uvfetch\ncrawl-delay: 2.5\ndisallow: /x\n\nuser-agent: quiet\ndisallow: /\n",
             agents: ["uvfetch", "other", "quiet"], paths: [], delays: true),
        File("crawl-delay-values", """
            user-agent: neg
            disallow: /n
            crawl-delay: -1

            user-agent: plus
            disallow: /p
            crawl-delay: +5

            user-agent: expo
            disallow: /e
            crawl-delay: 1e3

            user-agent: infinite
            disallow: /i
            crawl-delay: inf

            user-agent: word
            disallow: /w
            crawl-delay: five

            user-agent: half
            disallow: /h
            crawl-delay: .5

            user-agent: dotted
            disallow: /d
            crawl-delay: 2.

            user-agent: zero
            disallow: /z
            crawl-delay: 0
            """,
            agents: ["neg", "plus", "expo", "infinite", "word", "half", "dotted", "zero"], paths: [], delays: true),
        File("crawl-delay-merged", "user-agent: a\ncrawl-delay: 1\ndisallow: /\n\nuser-agent: a\ncrawl-delay: 3\ncrawl-delay: x\n",
             agents: ["a"], paths: [], delays: true),
        // §2.5: the limit.
        File("limit", bytes: Array("user-agent: *\ndisallow: /in\n#".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 520_000) + Array("\ndisallow: /out\n".utf8),
             paths: ["/in", "/out"]),
        // Wildcards that make a backtracking matcher slow, kept small enough for Protego's regex.
        File("wildcard-chain", "user-agent: *\ndisallow: /" + String(repeating: "*a", count: 10) + "*b\n",
             paths: ["/" + String(repeating: "a", count: 20), "/" + String(repeating: "a", count: 10) + "b"]),
    ]

    /// Every question on which the two disagree, with the reason ours answers as it does.
    static let table: [String: String] = [
        "token-whole: uvfetchbot /a": Reason.tokenMatchedWhole,
        "token-whole: uvfetch-extra /a": Reason.tokenMatchedWhole,
        "token-one-letter: a /x": Reason.namedGroupBeatsStar,
        "token-version: uvfetch /a": Reason.agentValueLeadingToken,
        "token-star-prefix: somebot /a": Reason.agentValueWithoutToken,
        "sitemap-in-run: a /x": Reason.otherRecordsKeepTheGroup,
        "unknown-in-run: a /x": Reason.otherRecordsKeepTheGroup,
        "crawl-delay-in-run: a /x": Reason.otherRecordsKeepTheGroup,
        "crawl-delay-in-run: b Crawl-delay": Reason.otherRecordsKeepTheGroup,
        "no-colon: uvfetch /x": Reason.onlyTheProtocolsKeys,
        "misspelt-key: uvfetch /a": Reason.onlyTheProtocolsKeys,
        "misspelt-agent-key: uvfetch /a": Reason.onlyTheProtocolsKeys,
        "form-feed: uvfetch /x": Reason.lineEnds,
        "no-break-space: uvfetch /x": Reason.whitespace,
        "bom: uvfetch /x": Reason.byteOrderMark,
        "robots-txt: uvfetch /robots.txt": Reason.robotsTxtAllowed,
        "robots-txt: uvfetch /robots.txt?x=1": Reason.robotsTxtAllowed,
        "fragment: uvfetch /a#b": Reason.noFragment,
        "index-html: uvfetch /dir/": Reason.noIndexHTMLRule,
        "rfc-2.2.2-table: uvfetch /foo/bar?baz=quz": Reason.anchorAfterTheQuery,
        "reserved-escapes: uvfetch /c%3Ad": Reason.reservedAsWritten,
        "reserved-escapes: uvfetch /e:f": Reason.reservedAsWritten,
        "reserved-lengths: uvfetch /abcde:::": Reason.reservedAsWritten,
        "query-non-ascii: uvfetch /s?q=%C3%A9": Reason.queryNormalised,
        "query-unreserved: uvfetch /s?q=%7E": Reason.queryNormalised,
        "crawl-delay-values: neg Crawl-delay": Reason.crawlDelayIsADecimal,
        "crawl-delay-values: plus Crawl-delay": Reason.crawlDelayIsADecimal,
        "crawl-delay-values: expo Crawl-delay": Reason.crawlDelayIsADecimal,
        "crawl-delay-values: infinite Crawl-delay": Reason.crawlDelayIsADecimal,
        "limit: uvfetch /out": Reason.parsingLimit,
    ]

    /// Why ours differs, one per kind of disagreement (the rows of docs/fuzzing.md).
    enum Reason {
        static let tokenMatchedWhole = "§2.2.1: the product token is matched whole, case-insensitively; Protego takes a group whose name is any substring of the crawler's (\"uvfetch\" for \"uvfetchbot\")."
        static let namedGroupBeatsStar = "§2.2.1: a group naming the token applies, and the * group only when none does; Protego scores * and a one-letter name alike and takes the first group."
        static let agentValueLeadingToken = "§2.2.1: a product token is letters, \"_\" and \"-\"; ours reads the token a user-agent value starts with (\"uvfetch/1.0\" names uvfetch, as Google reads it), Protego matches the whole value."
        static let agentValueWithoutToken = "§2.1: \"*bot\" is neither \"*\" nor a product token, so the line is no startgroupline and is skipped; Protego drops the \"*\" and matches \"bot\" as a substring."
        static let otherRecordsKeepTheGroup = "§2.2.4: records other than user-agent, allow and disallow (sitemap, crawl-delay, unknown keys) MUST NOT interfere with the groups, and a sitemap line MUST NOT terminate one; Protego ends a run of user-agent lines at any of them."
        static let onlyTheProtocolsKeys = "§2.1: a line is key \":\" value, and the keys are user-agent, allow and disallow; Protego also reads a line without a colon and misspellings (\"dissallow\", \"useragent\"), which §2.2.4 allows only for other records."
        static let lineEnds = "§2.1: NL is CR, LF or CRLF; Python's splitlines also ends lines at FF, VT, FS, GS, RS, NEL, U+2028 and U+2029."
        static let whitespace = "§2.1: WS is space and tab; Python's strip also trims U+00A0 and the other Unicode spaces."
        static let byteOrderMark = "§2.1 reads the file as UTF-8, and RFC 3629 §6 lets a reader skip a leading byte order mark; Protego reads U+FEFF as part of the first key, which then names nothing."
        static let robotsTxtAllowed = "§2.2.2: the /robots.txt URI is implicitly allowed; Protego applies the rules to it."
        static let noFragment = "§2.2.2 matches the URI's path (and query); a fragment is never sent (RFC 9110 §7.1) and ours leaves it out; Protego matches it too."
        static let noIndexHTMLRule = "Not in RFC 9309: Protego reads an allow of \"…/index.html\" as also allowing \"…/\"."
        static let anchorAfterTheQuery = "§2.2.2's table and §2.2.3: \"/foo/bar?baz=quz$\" matches exactly that path and query; Protego moves the \"$\" in front of the query, so the pattern matches nothing."
        static let reservedAsWritten = "§2.2.2: a percent-encoded reserved character is not decoded, and its table keeps reserved characters as written (RFC 3986 §6.2.2.2: only unreserved escapes are equivalent); Protego encodes \":\" as \"%3A\" on both sides, which makes them one and lengthens its patterns."
        static let queryNormalised = "§2.2.2: the URI's octets are normalised, the query's as the path's; Protego percent-encodes and decodes only the path."
        static let crawlDelayIsADecimal = "Not in RFC 9309: ours reads only a plain decimal number of seconds, zero or more; Protego takes whatever Python's float() reads, negative numbers, signs, exponents and inf included."
        static let parsingLimit = "§2.5: a crawler may stop parsing after 500 KiB, and ours does; Protego reads every byte."
    }
}
