// The one walk over a field section's raw bytes: it checks what llhttp lets through, and records
// the bytes and where each line, name and value lies, so that the decoder builds the head from
// that record without any per-field callback from llhttp.

/// Where a scanner stopped llhttp: a problem at `index`, or (no problem) a bare LF there that
/// llhttp must get a CR before.
package struct ScanStop {
    package var index: Int
    package var problem: HTTP1ParseError?
}

/// The raw bytes of the field section being received, copied once as the scanner walks them,
/// and where its lines lie. Its storage is reused from one section to the next.
package struct SectionRecord: ~Copyable {
    /// One field line: offsets in `bytes`.
    package struct Line: BitwiseCopyable {
        /// The line's first byte.
        package var start: Int32
        /// The colon after the name; `Line.continuation` for an obs-fold continuation line,
        /// `Line.noColon` for a line llhttp will refuse.
        package var colon: Int32
        /// The CR or LF that ends the line.
        package var end: Int32

        package static let continuation: Int32 = -1
        package static let noColon: Int32 = -2
    }

    /// Storage sizes a decoder starts with: room for a usual head (nginx's is about 250 bytes in
    /// 8 lines) that grows once per connection when its server's heads are longer. An idle
    /// connection keeps each of them, up to `keptBytes` / `keptLines` (see `shrinkIfGrown`).
    package static let initialBytes = 512
    package static let initialLines = 16
    package static let keptBytes = 4096
    package static let keptLines = 128

    /// The section's bytes as received (a bare LF stays bare: llhttp's CR is not recorded).
    package var bytes = ByteAccumulator(capacity: SectionRecord.initialBytes)
    /// The field lines, in order.
    package var lines = ScratchList<Line>(capacity: SectionRecord.initialLines)
    /// Where the status line ends (the CR or LF), for a head.
    package var statusLineEnd: Int32 = 0
    /// Some line is an obs-fold continuation.
    package var hasFold = false
    /// Some line ended in a bare LF (llhttp was fed a CR for it).
    package var hasBareLF = false

    package init() {}

    /// Forgets the section and gives back storage that a large section grew past what a usual
    /// one needs (an idle connection should not hold a 64 KiB head's buffer).
    package mutating func shrinkIfGrown() {
        bytes.removeAll(shrinkingPast: Self.keptBytes, to: Self.initialBytes)
        if lines.capacity > Self.keptLines {
            lines = ScratchList(capacity: Self.initialLines)
        } else {
            lines.removeAll()
        }
        statusLineEnd = 0
        hasFold = false
        hasBareLF = false
    }

    /// Forgets the section, keeping the storage.
    package mutating func removeAll() {
        bytes.removeAll()
        lines.removeAll()
        statusLineEnd = 0
        hasFold = false
        hasBareLF = false
    }
}

/// Walks the raw bytes of one field section (a head, or a trailer section) ahead of llhttp.
///
/// It exists because strict llhttp 8.1 skips CR/LF before a status line, accepts status codes
/// of 1, 2 or 4 digits, accepts an empty field name, and takes a bare LF as a line end only in
/// some places (after the status line, as the final empty line) while refusing it after a field;
/// because a limit counted on raw bytes reads the same whatever the read sizes were; to find each
/// bare LF, so that llhttp gets a CR in front of it; and to record the section (`SectionRecord`)
/// so that llhttp need not call back for every name and value.
package struct FieldSectionScanner {
    /// Scanning a head, whose first line is a status line.
    package static let head = FieldSectionScanner(isActive: true, onStatusLine: true)
    /// Scanning a trailer section.
    package static let trailers = FieldSectionScanner(isActive: true, onStatusLine: false)
    /// Not in a field section (body, or between messages).
    package static let inactive = FieldSectionScanner(isActive: false, onStatusLine: false)

    /// False once the section's empty line has been seen.
    package private(set) var isActive: Bool
    /// Bytes of the section scanned so far (also the offset of the next byte in the record).
    package private(set) var byteCount = 0
    private var onStatusLine: Bool
    /// Bytes on the current line so far, CR excluded.
    private var column = 0
    private var sawCR = false
    /// Where the current line starts in the record.
    private var lineStart = 0
    /// Still inside the current field line's name (before its colon).
    private var inName: Bool
    /// The current field line's colon (or `Line.continuation`), once known.
    private var colon = SectionRecord.Line.noColon

    private init(isActive: Bool, onStatusLine: Bool) {
        self.isActive = isActive
        self.onStatusLine = onStatusLine
        inName = isActive && !onStatusLine
    }

    /// Scans from `start` until the section ends, the bytes run out, or a line ends in a bare LF
    /// (the scanner is then past it), appending what it scanned to `record`. Returns where llhttp
    /// must stop: before a byte that must not reach it, with the error it causes, or before a
    /// bare LF; nil if neither came.
    /// A bare LF, or an obs-fold line, is a problem unless `allowsBareLF` / `allowsObsFold`.
    package mutating func scan(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int, allowsBareLF: Bool,
                               allowsObsFold: Bool, into record: inout SectionRecord) -> ScanStop? {
        let (stop, scannedEnd) = scanLines(bytes, from: start, limit: limit, allowsBareLF: allowsBareLF,
                                           allowsObsFold: allowsObsFold, into: &record)
        if scannedEnd > start, let base = bytes.baseAddress {
            record.bytes.append(UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self) + start, count: scannedEnd - start))
        }
        return stop
    }

    /// `scan` without the copy; also returns the end of the bytes it went past.
    private mutating func scanLines(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int, allowsBareLF: Bool,
                                    allowsObsFold: Bool, into record: inout SectionRecord) -> (ScanStop?, Int) {
        var index = start
        let end = bytes.count
        while index < end {
            if !sawCR {
                if !onStatusLine {
                    if inName {
                        let stop = min(end, index + (limit - byteCount))
                        if column == 0 && index < stop {
                            let first = bytes[index]
                            // RFC 9110 §5.1: a name is a token, never empty (llhttp 8.1 takes ": value").
                            if first == DecoderASCII.colon { return (ScanStop(index: index, problem: .malformed("empty field name")), index) }
                            if DecoderASCII.isWhitespace(first) {
                                if !allowsObsFold {
                                    return (ScanStop(index: index, problem: .malformed("obs-fold (a line starting with whitespace) in a field section")), index)
                                }
                                // An obs-fold continuation line: no name, its value joins the previous one.
                                colon = SectionRecord.Line.continuation
                                inName = false
                            }
                        }
                        if inName {
                            // The name ends at its colon; a CR or LF first makes a line llhttp refuses.
                            let next = Self.nextNameEnd(bytes, from: index, before: stop)
                            column += next - index
                            byteCount += next - index
                            index = next
                            if index < stop && bytes[index] == DecoderASCII.colon {
                                colon = Int32(truncatingIfNeeded: byteCount)
                                inName = false
                                column += 1
                                byteCount += 1
                                index += 1
                            }
                        }
                        if index == end { return (nil, end) }
                    }
                    // Inside a field line only CR, LF and the limit matter: skip to the next of them.
                    let next = Self.nextLineByte(bytes, from: index, before: min(end, index + (limit - byteCount)))
                    column += next - index
                    byteCount += next - index
                    index = next
                    if index == end { return (nil, end) }
                } else if column == 0 && end - index >= 12 && limit - byteCount >= 12
                            && Self.isStatusLinePrefix(bytes, at: index) {
                    // The usual case, a whole "HTTP/1.1 200" at hand: check it at once.
                    column = 12
                    byteCount += 12
                    index += 12
                    if index == end { return (nil, end) }
                }
            }
            let byte = bytes[index]
            if byteCount >= limit {
                return (ScanStop(index: index, problem: HTTP1ParseError(kind: .headersTooLarge, reason: "field section larger than \(limit) bytes")), index)
            }
            byteCount += 1
            if sawCR {
                guard byte == DecoderASCII.lf else { return (ScanStop(index: index, problem: .malformed("CR not followed by LF in a field section")), index) }
                sawCR = false
                if lineEnded(at: byteCount - 2, into: &record) { return (nil, index + 1) }
            } else if byte == DecoderASCII.lf {
                // A bare LF ends the line too (RFC 9112 §2.2); llhttp must get a CR before it.
                if onStatusLine && column < 12 { return (ScanStop(index: index, problem: .malformed("status line too short")), index) }
                if !allowsBareLF { return (ScanStop(index: index, problem: .malformed("bare LF ending a line of a field section")), index) }
                record.hasBareLF = true
                _ = lineEnded(at: byteCount - 1, into: &record)
                return (ScanStop(index: index, problem: nil), index + 1)
            } else if byte == DecoderASCII.cr {
                // "HTTP/1.1 200" is the shortest status line; this also refuses CRLF before it.
                if onStatusLine && column < 12 { return (ScanStop(index: index, problem: .malformed("status line too short")), index) }
                if index + 1 < end && bytes[index + 1] == DecoderASCII.lf && byteCount < limit {
                    // The usual CRLF, both at hand and within the limit: what the next turn
                    // would do for the LF, without the turn.
                    byteCount += 1
                    if lineEnded(at: byteCount - 2, into: &record) { return (nil, index + 2) }
                    index += 2
                    continue
                }
                sawCR = true
            } else {
                if onStatusLine && !(column > 12 && Self.isReasonByte(byte)), let problem = Self.statusLineProblem(byte, at: column) {
                    return (ScanStop(index: index, problem: .malformed(problem)), index)
                }
                column += 1
            }
            index += 1
        }
        return (nil, end)
    }

    /// A line ended at record offset `lineEnd` (its LF was counted). Records it, and returns true
    /// when it was the empty line that ends the section: llhttp takes it from there.
    private mutating func lineEnded(at lineEnd: Int, into record: inout SectionRecord) -> Bool {
        if column == 0 {
            isActive = false
            return true
        }
        if onStatusLine {
            record.statusLineEnd = Int32(truncatingIfNeeded: lineEnd)
        } else {
            if colon == SectionRecord.Line.continuation { record.hasFold = true }
            record.lines.append(SectionRecord.Line(start: Int32(truncatingIfNeeded: lineStart), colon: colon,
                                                   end: Int32(truncatingIfNeeded: lineEnd)))
        }
        column = 0
        onStatusLine = false
        lineStart = byteCount
        inName = true
        colon = SectionRecord.Line.noColon
        return false
    }

    /// The index of the first CR or LF in bytes[start..<stop], or `stop`.
    private static func nextLineByte(_ bytes: UnsafeRawBufferPointer, from start: Int, before stop: Int) -> Int {
        nextByte(bytes, from: start, before: stop, orColon: false)
    }

    /// The index of the first colon, CR or LF in bytes[start..<stop], or `stop`.
    private static func nextNameEnd(_ bytes: UnsafeRawBufferPointer, from start: Int, before stop: Int) -> Int {
        nextByte(bytes, from: start, before: stop, orColon: true)
    }

    /// The index of the first CR or LF (or colon, with `orColon`) in bytes[start..<stop], or
    /// `stop`. Eight bytes at a time: the lowest byte a word's mask flags is the first match, so
    /// no byte is looked at twice. Inlined into both callers, where `orColon` is a constant.
    @inline(__always)
    private static func nextByte(_ bytes: UnsafeRawBufferPointer, from start: Int, before stop: Int, orColon: Bool) -> Int {
        guard let base = bytes.baseAddress else { return stop }
        var index = start
        while index &+ 8 <= stop {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            var found = zeroBytes(word ^ crs) | zeroBytes(word ^ lfs)
            if orColon { found |= zeroBytes(word ^ colons) }
            if found != 0 { return index &+ found.trailingZeroBitCount &>> 3 }
            index &+= 8
        }
        while index < stop {
            let byte = base.load(fromByteOffset: index, as: UInt8.self)
            if byte == DecoderASCII.cr || byte == DecoderASCII.lf || (orColon && byte == DecoderASCII.colon) { return index }
            index &+= 1
        }
        return stop
    }

    private static let crs: UInt64 = 0x0D0D_0D0D_0D0D_0D0D
    private static let lfs: UInt64 = 0x0A0A_0A0A_0A0A_0A0A
    private static let colons: UInt64 = 0x3A3A_3A3A_3A3A_3A3A

    /// The high bit of each zero byte of `word` set. A byte above a zero one may be flagged too
    /// (the borrow runs upward), never one below: the lowest flag is exact, which is all the
    /// callers read.
    @inline(__always)
    private static func zeroBytes(_ word: UInt64) -> UInt64 {
        (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080
    }

    /// Whether bytes[index..<index+12] is `HTTP/d.d ddd`.
    private static func isStatusLinePrefix(_ bytes: UnsafeRawBufferPointer, at index: Int) -> Bool {
        bytes[index] == UInt8(ascii: "H") && bytes[index + 1] == UInt8(ascii: "T") && bytes[index + 2] == UInt8(ascii: "T")
            && bytes[index + 3] == UInt8(ascii: "P") && bytes[index + 4] == UInt8(ascii: "/") && DecoderASCII.isDigit(bytes[index + 5])
            && bytes[index + 6] == UInt8(ascii: ".") && DecoderASCII.isDigit(bytes[index + 7]) && bytes[index + 8] == DecoderASCII.space
            && DecoderASCII.isDigit(bytes[index + 9]) && DecoderASCII.isDigit(bytes[index + 10]) && DecoderASCII.isDigit(bytes[index + 11])
    }

    /// Whether a reason phrase may hold `byte`: reason-phrase = 1*( HTAB / SP / VCHAR / obs-text ).
    @inline(__always)
    private static func isReasonByte(_ byte: UInt8) -> Bool {
        byte == DecoderASCII.tab || (byte >= 0x20 && byte != 0x7F)
    }

    /// Checks one byte of `HTTP/d.d SP ddd [SP reason]` (RFC 9112 §4) at `column`.
    private static func statusLineProblem(_ byte: UInt8, at column: Int) -> String? {
        switch column {
        case 0:
            return byte == UInt8(ascii: "H") ? nil : "status line does not start with HTTP/"
        case 1, 2:
            return byte == UInt8(ascii: "T") ? nil : "status line does not start with HTTP/"
        case 3:
            return byte == UInt8(ascii: "P") ? nil : "status line does not start with HTTP/"
        case 4:
            return byte == UInt8(ascii: "/") ? nil : "status line does not start with HTTP/"
        case 5, 7:
            return DecoderASCII.isDigit(byte) ? nil : "malformed HTTP version"
        case 6:
            return byte == UInt8(ascii: ".") ? nil : "malformed HTTP version"
        case 8, 12:
            return byte == DecoderASCII.space ? nil : "status line fields not separated by one space"
        case 9...11:
            return DecoderASCII.isDigit(byte) ? nil : "status code is not three digits"
        default:
            return isReasonByte(byte) ? nil : "control character in the reason phrase"
        }
    }
}

