/// One `allow` or `disallow` line of a group, its pattern normalised (`RobotsPathNormalization`)
/// and ready to match a URL's normalised path and query.
///
/// Matching is linear in the pattern and the path: the pattern is cut at its wildcards into
/// literal pieces; the first must start the path, each later one is found at its leftmost place
/// after the one before (which is always right when "*" is the only wildcard: placing a piece
/// earlier never leaves less room for the next), and with "$" the last must end the path. The
/// leftmost search is Knuth-Morris-Pratt's, its tables made once here, so no input, however
/// hostile, costs more than a pass over the path per piece.
struct RobotsRule: Sendable, Equatable {
    /// Allow, or disallow.
    let isAllow: Bool
    /// RFC 9309 §2.2.2's "most octets": the normalised pattern's length as written, each "*"
    /// and the final "$" counted (as Google's matcher and Protego count them).
    let specificity: Int
    /// Ends with "$": the path must end where the pattern does.
    let isAnchored: Bool
    /// The normalised pattern without its anchor, runs of "*" made one. A "*" here is always a
    /// wildcard: a literal one is "%2A" on both sides.
    let pattern: [UInt8]
    /// Where each "*" is in `pattern`; empty for a plain prefix.
    let wildcards: [Int]
    /// For each byte of a piece after the first: the length of the longest proper prefix of
    /// the piece that ends there (KMP's failure function); empty for a plain prefix.
    let failure: [Int]

    /// Nil for an empty value, which matches nothing (RFC 9309 §2.2.2: "disallow:" allows all).
    /// A value that starts with neither "/" nor "*" is read with "/" before it, as Google reads
    /// it (RFC 9309's grammar requires the "/"; "Disallow: *.gif$" in its §5.1 example is the
    /// "*" case): "Disallow: private" then means "/private" rather than nothing.
    init?(isAllow: Bool, value: some Collection<UInt8>) {
        guard let first = value.first else { return nil }
        var written: [UInt8] = []
        written.reserveCapacity(value.count + 1)
        if first != UInt8(ascii: "/") && first != RobotsPathNormalization.asterisk {
            written.append(UInt8(ascii: "/"))
        }
        written.append(contentsOf: value)
        let anchored = written.last == RobotsPathNormalization.dollar
        if anchored { written.removeLast() }
        var normalized: [UInt8] = []
        normalized.reserveCapacity(written.count)
        RobotsPathNormalization.append(written, asPattern: true, to: &normalized)
        self.isAllow = isAllow
        self.isAnchored = anchored
        self.specificity = normalized.count + (anchored ? 1 : 0)
        var pattern: [UInt8] = []
        pattern.reserveCapacity(normalized.count)
        var wildcards: [Int] = []
        for byte in normalized where !(byte == RobotsPathNormalization.asterisk && pattern.last == byte) {
            if byte == RobotsPathNormalization.asterisk { wildcards.append(pattern.count) }
            pattern.append(byte)
        }
        self.pattern = pattern
        self.wildcards = wildcards
        self.failure = wildcards.isEmpty ? [] : Self.failureTable(pattern, wildcards: wildcards)
    }

    /// Whether the pattern matches `path`, a normalised path and query.
    func matches(_ path: [UInt8]) -> Bool {
        let firstEnd = wildcards.first ?? pattern.count
        guard path.count >= firstEnd, hasPiece(0..<firstEnd, at: 0, in: path) else { return false }
        if wildcards.isEmpty { return !isAnchored || path.count == firstEnd }
        var position = firstEnd
        for (number, star) in wildcards.enumerated() {
            let start = star + 1
            let end = number + 1 < wildcards.count ? wildcards[number + 1] : pattern.count
            if end == pattern.count && isAnchored {
                // The last piece ends the path, after what the earlier pieces took.
                let length = end - start
                return path.count - position >= length && hasPiece(start..<end, at: path.count - length, in: path)
            }
            if start == end { continue }
            guard let found = leftmost(start..<end, in: path, from: position) else { return false }
            position = found + (end - start)
        }
        return true
    }

    /// Whether `pattern[piece]` is at `offset` in `path` (which is long enough).
    private func hasPiece(_ piece: Range<Int>, at offset: Int, in path: [UInt8]) -> Bool {
        var index = offset
        for patternIndex in piece {
            if pattern[patternIndex] != path[index] { return false }
            index += 1
        }
        return true
    }

    /// Where `pattern[piece]` (not empty) first occurs in `path` at or after `from`.
    private func leftmost(_ piece: Range<Int>, in path: [UInt8], from: Int) -> Int? {
        let length = piece.count
        guard path.count - from >= length else { return nil }
        var matched = 0
        var index = from
        while index < path.count {
            let byte = path[index]
            while matched > 0 && pattern[piece.lowerBound + matched] != byte {
                matched = failure[piece.lowerBound + matched - 1]
            }
            if pattern[piece.lowerBound + matched] == byte { matched += 1 }
            if matched == length { return index + 1 - length }
            index += 1
        }
        return nil
    }

    /// KMP's failure function of each piece after a wildcard, stored at the piece's bytes.
    private static func failureTable(_ pattern: [UInt8], wildcards: [Int]) -> [Int] {
        var table = [Int](repeating: 0, count: pattern.count)
        for (number, star) in wildcards.enumerated() {
            let start = star + 1
            let end = number + 1 < wildcards.count ? wildcards[number + 1] : pattern.count
            guard end - start > 1 else { continue }
            var matched = 0
            for index in (start + 1)..<end {
                while matched > 0 && pattern[start + matched] != pattern[index] {
                    matched = table[start + matched - 1]
                }
                if pattern[start + matched] == pattern[index] { matched += 1 }
                table[index] = matched
            }
        }
        return table
    }

    /// Which of two matching rules RFC 9309 §2.2.2 uses: the most octets, then allow.
    func isMoreSpecific(than other: RobotsRule) -> Bool {
        specificity != other.specificity ? specificity > other.specificity : isAllow && !other.isAllow
    }
}
