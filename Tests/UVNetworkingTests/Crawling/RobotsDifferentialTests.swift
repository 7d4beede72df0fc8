import Foundation
import Testing
import UVNetworking

/// Our robots.txt decisions against those of a parser no one here wrote: Protego (Debian's
/// python3-protego 0.2.1, the one Scrapy uses), run by Debian's own /usr/bin/python3 as a child
/// process on the same files, URLs and product tokens.
///
/// Protego predates RFC 9309 and reads some things otherwise: every question on which the two
/// differ is in `RobotsDisagreements.table` with the reason ours answers as it does
/// (docs/fuzzing.md has the same table). The test fails on a disagreement not in the table, and on
/// a row of the table that no longer disagrees, so the table stays exact.
@Suite(.tags(.childProcess)) struct RobotsDifferentialTests {
    /// Debian's python3: the python3 first on PATH may be another (pyenv's) that cannot import
    /// Debian's dist-packages.
    static let python = "/usr/bin/python3"

    static let isProtegoImportable: Bool = {
        guard let process = try? run(["-c", "import protego"], input: Data()) else { return false }
        return process.status == 0
    }()

    @Test(.enabled(if: isProtegoImportable, "Protego is not importable by /usr/bin/python3: run scripts/install-deps.sh (make test does)"))
    func everyDisagreementWithProtegoHasAReason() throws {
        let questions = RobotsDisagreements.questions
        let theirs = try Self.protego(questions)
        try #require(theirs.count == questions.count)
        var disagreeing: [String: String] = [:]
        for (question, protego) in zip(questions, theirs) {
            let ours = try Self.ours(question)
            if ours != protego { disagreeing[question.key] = "ours \(ours), Protego's \(protego)" }
        }
        for (key, detail) in disagreeing.sorted(by: { $0.key < $1.key }) where RobotsDisagreements.table[key] == nil {
            Issue.record("a disagreement without a reason: \(key.debugDescription): \(detail)")
        }
        for key in RobotsDisagreements.table.keys.sorted() where disagreeing[key] == nil {
            Issue.record("listed as a disagreement, but both agree now: \(key.debugDescription)")
        }
        #expect(Set(RobotsDisagreements.table.keys).isSubset(of: Set(questions.map(\.key))))
        #expect(Set(questions.map(\.key)).count == questions.count, "two questions with one key")
    }

    @Test(.enabled(if: isProtegoImportable, "Protego is not importable by /usr/bin/python3"))
    func theComparisonSeesADifference() throws {
        // The check above is worth something only if a real difference shows: one file read by
        // both agrees, and a different one read by Protego does not.
        let same = RobotsDisagreements.File("same", "user-agent: *\ndisallow: /x\n", paths: ["/x/y"])
        let other = RobotsDisagreements.File("other", "user-agent: *\nallow: /\n", paths: ["/x/y"])
        let theirs = try Self.protego([.init(file: same, agent: "uvfetch", path: "/x/y"), .init(file: other, agent: "uvfetch", path: "/x/y")])
        let ours = try Self.ours(.init(file: same, agent: "uvfetch", path: "/x/y"))
        #expect(ours == theirs[0])
        #expect(ours != theirs[1])
    }

    /// Our answer, in the form Protego's is printed: "allowed", "disallowed", or the delay.
    private static func ours(_ question: RobotsDisagreements.Question) throws -> String {
        let rules = RobotsTxt(parsing: question.file.bytes).rules(for: question.agent)
        guard let path = question.path else { return rules.crawlDelay.map { "\($0)" } ?? "none" }
        let url = try #require(URL(string: "http://example.com" + path), "not a URL: \(path)")
        return rules.isAllowed(url) ? "allowed" : "disallowed"
    }

    /// Protego's answer to each question.
    private static func protego(_ questions: [RobotsDisagreements.Question]) throws -> [String] {
        let input = questions.map { question in
            ["robots": Data(question.file.bytes).base64EncodedString(), "agent": question.agent, "path": question.path]
        }
        let result = try run(["-c", reader], input: JSONEncoder().encode(input))
        try #require(result.status == 0, "python3 failed: \(String(decoding: result.output, as: UTF8.self))")
        return try JSONDecoder().decode([String].self, from: result.output)
    }

    /// Runs /usr/bin/python3; `input` goes to its standard input, whole, before its output is
    /// read (Python reads all of it before writing anything).
    private static func run(_ arguments: [String], input: Data) throws -> (status: Int32, output: Data) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = arguments
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        try stdin.fileHandleForWriting.write(contentsOf: input)
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    /// Reads a JSON list of questions on stdin (a base64 robots.txt, decoded as UTF-8 as a
    /// crawler would; an agent; a path, or null for the Crawl-delay) and writes Protego's
    /// answers: "allowed", "disallowed", the delay as Python writes a float, or "none".
    private static let reader = """
        import base64, json, sys
        from protego import Protego
        parsed = {}
        out = []
        for q in json.load(sys.stdin):
            robots = parsed.get(q["robots"])
            if robots is None:
                robots = Protego.parse(base64.b64decode(q["robots"]).decode("utf-8", "replace"))
                parsed[q["robots"]] = robots
            if q["path"] is None:
                delay = robots.crawl_delay(q["agent"])
                out.append("none" if delay is None else repr(delay))
            else:
                out.append("allowed" if robots.can_fetch("http://example.com" + q["path"], q["agent"]) else "disallowed")
        json.dump(out, sys.stdout)
        """
}
