// Fuzzes the robots.txt parser and matcher (RFC 9309), through the public API only.
//
// Input: an option byte, then a robots.txt file, any bytes. Bit 0x10 of the option byte reads
// the file instead as two patterns and a path for the model check; an option byte of 0x20 (one
// input in 256: it parses 1 MB, most of a run's time were it more often) adds the check of the
// 500 KiB limit.
//
// Invariants:
// - Nothing traps, whatever the bytes.
// - `/robots.txt` is allowed to every crawler, whatever the file says.
// - A decision is the same whether the group is chosen once (`rules(for:)`) or per call, for a
//   path and for a URL; so is the Crawl-delay, which is nil or a finite number of seconds >= 0.
// - Line endings (LF, CR or CRLF), a comment after every line and blank or comment lines
//   between them change nothing: the parsed files are equal.
// - Bytes past the 500 KiB limit change nothing.
// - On patterns of "a", "b", "/", "*" and "$" and paths of "a", "b" and "/", one allow and one
//   disallow rule decide as a model computed apart does: "*" any sequence, a final "$" the end,
//   any other "$" a literal (three octets, "%24"), the longer rule winning and allow a tie.

import Foundation
import FuzzSupport
import UVNetworking

let limit = RobotsTxt.maximumParsedBytes

/// The file's lines, without their ends (LF, CR or CRLF), and whether the last one had an end.
func lines(_ bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
    var result: [ArraySlice<UInt8>] = []
    var start = bytes.startIndex
    var index = start
    while index < bytes.endIndex {
        let byte = bytes[index]
        if byte == 0x0A || byte == 0x0D {
            result.append(bytes[start..<index])
            index += 1
            if byte == 0x0D, index < bytes.endIndex, bytes[index] == 0x0A { index += 1 }
            start = index
        } else {
            index += 1
        }
    }
    result.append(bytes[start..<bytes.endIndex])
    return result
}

func joined(_ lines: [ArraySlice<UInt8>], by ending: [UInt8], each: (ArraySlice<UInt8>) -> [UInt8] = { Array($0) }) -> [UInt8] {
    var out: [UInt8] = []
    for (number, line) in lines.enumerated() {
        if number > 0 { out += ending }
        out += each(line)
    }
    return out
}

/// What follows the first ":" of a line, trimmed: the paths and tokens the file speaks of.
func values(_ lines: [ArraySlice<UInt8>]) -> [String] {
    lines.prefix(16).compactMap { line in
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let text = String(decoding: line[(colon + 1)...], as: UTF8.self)
        return text.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
    }
}

func checkDecisions(_ robots: RobotsTxt, lines: [ArraySlice<UInt8>]) {
    let found = values(lines)
    let tokens = ["uvfetch", "*", ""] + found.prefix(6).map { RobotsTxt.productToken(fromUserAgent: $0) }
    let paths = ["/", "/a", "/a/b?c=d", "/robots.txt"] + found.prefix(10)
    // Parsed once: Foundation's URL parser would otherwise take most of the time.
    let urls = paths.compactMap { URL(string: "http://example.com" + $0) }
    for token in tokens {
        let rules = robots.rules(for: token)
        let delay = robots.crawlDelay(productToken: token)
        fuzzCheck(delay == rules.crawlDelay, "Crawl-delay \(String(describing: delay)) per call, \(String(describing: rules.crawlDelay)) chosen once, for \(token.debugDescription)")
        if let delay { fuzzCheck(delay.isFinite && delay >= 0, "Crawl-delay \(delay)") }
        fuzzCheck(rules.isAllowed(pathAndQuery: "/robots.txt") && robots.isAllowed(pathAndQuery: "/robots.txt", productToken: token), "/robots.txt disallowed to \(token.debugDescription)")
        for path in paths {
            let once = rules.isAllowed(pathAndQuery: path)
            fuzzCheck(once == robots.isAllowed(pathAndQuery: path, productToken: token), "\(path.debugDescription) for \(token.debugDescription): chosen once \(once), per call not")
        }
        for url in urls {
            fuzzCheck(rules.isAllowed(url) == robots.isAllowed(url, productToken: token), "\(url) for \(token.debugDescription): chosen once and per call differ")
        }
    }
}

func checkLayout(_ robots: RobotsTxt, lines: [ArraySlice<UInt8>]) {
    for ending in [[0x0A], [0x0D], [0x0D, 0x0A]] as [[UInt8]] {
        fuzzCheck(RobotsTxt(parsing: joined(lines, by: ending)) == robots, "line ends \(ending) changed the file")
    }
    let commented = joined(lines, by: Array("\n\n# between\n \t\n".utf8)) { line in
        Array(line) + Array(" # after".utf8)
    }
    fuzzCheck(RobotsTxt(parsing: commented) == robots, "comments and blank lines changed the file")
}

func checkLimit(_ file: ArraySlice<UInt8>) {
    guard !file.isEmpty else { return }
    let kept = file.count / 2
    // A comment line puts the file's middle on the limit's last byte.
    let padding = [UInt8(ascii: "#")] + [UInt8](repeating: UInt8(ascii: "x"), count: limit - kept - 2) + [0x0A]
    let whole = RobotsTxt(parsing: padding + file)
    let other = RobotsTxt(parsing: padding + file.prefix(kept) + [0x0A] + file.reversed())
    fuzzCheck(whole == other, "bytes past the limit changed the file")
}

/// Whether `pattern` (with "*" and a final "$") matches `path` by the rules, by recursion with
/// memory: `pattern[p...]` against `path[s...]`.
func modelMatches(_ pattern: [UInt8], _ path: [UInt8]) -> Bool {
    let anchored = pattern.last == UInt8(ascii: "$")
    let body = anchored ? Array(pattern.dropLast()) : pattern
    var memo = [Bool?](repeating: nil, count: (body.count + 1) * (path.count + 1))
    func match(_ p: Int, _ s: Int) -> Bool {
        if let known = memo[p * (path.count + 1) + s] { return known }
        let result: Bool
        if p == body.count {
            result = !anchored || s == path.count
        } else if body[p] == UInt8(ascii: "*") {
            result = match(p + 1, s) || (s < path.count && match(p, s + 1))
        } else {
            result = s < path.count && body[p] == path[s] && match(p + 1, s + 1)
        }
        memo[p * (path.count + 1) + s] = result
        return result
    }
    return match(0, 0)
}

func modelLength(_ pattern: [UInt8]) -> Int {
    let inner = pattern.dropLast().filter { $0 == UInt8(ascii: "$") }.count
    return pattern.count + 2 * inner
}

func checkModel(_ input: inout FuzzInput) {
    let patternAlphabet = Array("ab/*$".utf8)
    let pathAlphabet = Array("ab/".utf8)
    func text(_ alphabet: [UInt8], _ count: UInt8) -> [UInt8] {
        [UInt8(ascii: "/")] + input.bytes(Int(count % 24)).map { alphabet[Int($0) % alphabet.count] }
    }
    let allow = text(patternAlphabet, input.byte())
    let disallow = text(patternAlphabet, input.byte())
    let path = text(pathAlphabet, input.byte())
    let file = Array("user-agent: *\nallow: ".utf8) + allow + Array("\ndisallow: ".utf8) + disallow + [0x0A]
    let allowMatches = modelMatches(allow, path)
    let disallowMatches = modelMatches(disallow, path)
    let expected = !disallowMatches || (allowMatches && modelLength(allow) >= modelLength(disallow))
    let decided = RobotsTxt(parsing: file).isAllowed(pathAndQuery: String(decoding: path, as: UTF8.self), productToken: "x")
    fuzzCheck(decided == expected, "allow \(String(decoding: allow, as: UTF8.self)), disallow \(String(decoding: disallow, as: UTF8.self)), path \(String(decoding: path, as: UTF8.self)): \(decided), the model \(expected)")
}

runFuzzer { bytes in
    var input = FuzzInput(bytes)
    let options = input.byte()
    if options & 0x10 != 0 {
        checkModel(&input)
        return
    }
    let file = input.remaining()
    let robots = RobotsTxt(parsing: file)
    let split = lines(file)
    checkDecisions(robots, lines: split)
    checkLayout(robots, lines: split)
    if options == 0x20 { checkLimit(file) }
}
