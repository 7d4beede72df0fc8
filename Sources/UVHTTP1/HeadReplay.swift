// A server sends the same head response after response, its Date value aside. Once a head has
// been scanned and built, the next head that repeats its bytes needs neither the scan nor the
// build: two compares tell it apart, and the template's record of its lines, names, framing and
// Date position holds for it too. llhttp still validates every byte, unless the template's whole
// message can be replayed (`bodyLength`, ResponseParser+MessageReplay.swift). Only the standard
// library and libc are used here so that the fuzz harness can compile the decoder's files alone.

import Glibc

/// What the decoder keeps of its connection's template head (`ResponseParser.templateHead`) so
/// that a later head with the same bytes apart from Date's value can skip the scan.
///
/// The rule that makes the shortcut exact: a head whose bytes equal the template's everywhere but
/// inside the Date value, where it has printable ASCII that neither starts nor ends with a space,
/// has the same lines, names, colons, value bounds and framing fields as the template; it is the
/// head the full scan would have built, with the template as its template. Anything else (a
/// different length, a byte outside Date's value, a head split across reads, a template with a
/// bare LF or an obs-fold) takes the full scan.
///
/// A class: made once per template, then only referenced (a struct of this size would be copied,
/// with its references retained, at every head).
package final class HeadReplay {
    /// The template: a final head with no obs-fold and no bare LF.
    package let head: ResponseHead
    /// Its first Date field's index among its fields, -1 without one.
    package let dateIndex: Int
    /// Where that field's value lies in the raw head (an empty range without one).
    package let dateValue: Range<Int>
    /// What its framing fields said (the decoder's state after reading them).
    package let contentLength: UInt64?
    package let sawTransferEncoding: Bool
    package let transferCodingCount: Int
    package let transferCodingsAllChunked: Bool
    /// The template's body length when its whole message may be replayed without llhttp
    /// (`ResponseParser.replayMessage`): llhttp took the template as the final response to a
    /// request other than HEAD, kept alive, framed by Content-Length alone (no Transfer-Encoding,
    /// no upgrade or close, not 204 or 304). nil otherwise.
    package let bodyLength: Int?
    /// The last head replayed from this template. Once its task is done with it (the decoder's
    /// is then the only reference), the next replay writes its Date value over it and hands on
    /// the same object: no head is allocated or freed per response, and none is freed on the
    /// completion queue's thread, where it would go back to the loop's malloc arena under that
    /// arena's lock, which the loop takes too (measured as futex calls on both threads). While
    /// something else holds it, the next replay copies its fields into a new head.
    @exclusivity(unchecked) package var lastHead: ResponseHead?

    package init(head: ResponseHead, dateIndex: Int, dateValue: Range<Int>, contentLength: UInt64?, sawTransferEncoding: Bool,
         transferCodingCount: Int, transferCodingsAllChunked: Bool, bodyLength: Int?) {
        self.head = head
        self.dateIndex = dateIndex
        self.dateValue = dateValue
        self.contentLength = contentLength
        self.sawTransferEncoding = sawTransferEncoding
        self.transferCodingCount = transferCodingCount
        self.transferCodingsAllChunked = transferCodingsAllChunked
        self.bodyLength = bodyLength
    }

    /// The head of a message that repeats the template's bytes, its Date value at `date`:
    /// the last replayed head rewritten in place when nothing else holds it, else a new head
    /// whose fields are a copy (the template's and any live head's bytes never change).
    package func replayedHead(date: UnsafeRawPointer, keepAlive: Bool) -> ResponseHead {
        // Checked in place: taking it out and putting it back would cost a retain and a release.
        if lastHead != nil && isKnownUniquelyReferenced(&lastHead!) {
            let last = lastHead.unsafelyUnwrapped
            last.reuse(dateValue: dateValue, with: date, keepAlive: keepAlive)
            return last
        }
        var fields = lastHead?.headers ?? head.headers
        fields.overwriteSection(dateValue, with: date)
        let replayed = ResponseHead(versionMajor: head.versionMajor, versionMinor: head.versionMinor, status: head.status,
                                    reason: head.reason, headers: fields, keepAlive: keepAlive,
                                    template: head, dateIndex: dateIndex)
        lastHead = replayed
        return replayed
    }

    /// The raw head's length, final empty line included.
    package var byteCount: Int { head.headers.sectionByteCount }

    /// Whether `bytes[offset...]` starts with a head that repeats the template's bytes apart from
    /// Date's value (see the type's rule).
    package func matches(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Bool {
        let count = byteCount
        guard count > 0, bytes.count - offset >= count, let base = bytes.baseAddress else { return false }
        let incoming = (base + offset).assumingMemoryBound(to: UInt8.self)
        // Date changes once a second: most heads repeat the last replayed head whole, Date's value
        // included, which passed the check below already. One compare then does.
        if lastHead?.headers.withSectionBytes({ memcmp(incoming, $0.baseAddress!, count) == 0 }) == true { return true }
        return head.headers.withSectionBytes { template in
            let ours = template.baseAddress!
            // libc's memcmp compares in vector loads: half the instructions of a word loop here.
            guard memcmp(incoming, ours, dateValue.lowerBound) == 0,
                  memcmp(incoming + dateValue.upperBound, ours + dateValue.upperBound, count - dateValue.upperBound) == 0 else {
                return false
            }
            return Self.isPlainValue(UnsafeBufferPointer(start: incoming + dateValue.lowerBound, count: dateValue.count))
        }
    }

    /// Printable ASCII, not starting or ending with a space: a value the scan would have bounded
    /// exactly as the template's (and llhttp accepts), with no line end inside it.
    private static func isPlainValue(_ value: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = value.first, let last = value.last else { return true }
        guard first != DecoderASCII.space, last != DecoderASCII.space else { return false }
        let count = value.count
        guard count >= 8 else {
            for byte in value where byte < 0x20 || byte > 0x7E { return false }
            return true
        }
        // Eight bytes at a time (Date's 29 in four loads, the last overlapping the one before).
        let raw = UnsafeRawPointer(value.baseAddress!)
        var offset = 0
        while offset &+ 8 < count {
            if !isPrintable(raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) { return false }
            offset &+= 8
        }
        return isPrintable(raw.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self))
    }

    /// Whether each byte of `word` lies in 0x20...0x7E. A byte below 0x20 sets its high bit in
    /// `word - 0x20…` where it had none; a byte above 0x7E has its high bit set in `word + 0x01…`
    /// or already in `word` (neither sum carries across bytes where the test is false).
    @inline(__always)
    private static func isPrintable(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let below = (word &- ones &* 0x20) & ~word & highs
        let above = ((word & ~highs) &+ ones) | word
        return below == 0 && above & highs == 0
    }
}
