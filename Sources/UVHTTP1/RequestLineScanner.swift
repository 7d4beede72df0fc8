// The request line's counterpart of `FieldSectionScanner`: it walks the raw bytes of a request
// line just ahead of llhttp, so that the checks llhttp lacks or cannot make split-independently
// come at the right byte: the head limit (the line counts towards it), the target limit, a bare
// CR, a bare LF (an error unless allowed; llhttp then gets a CR before it) and a line that is
// not three parts. The line is copied once into a buffer the parser reuses, so that the head
// event can point into it; the field lines that follow are `FieldSectionScanner`'s.

/// Walks one request line, and the empty lines RFC 9112 §2.2 lets a client send before it.
package struct RequestLineScanner {
    /// Where the walk stopped short: at a byte llhttp must not get (`problem`), or at a bare LF
    /// llhttp must get a CR before (no problem).
    package struct Stop {
        package var index: Int
        package var problem: RequestParseError?
    }

    /// At the start of a request (the next one, between requests).
    package static let start = RequestLineScanner()

    /// False once the request line's end has been scanned.
    package private(set) var isActive = true
    /// A byte other than the CR and LF of leading empty lines has been scanned: the request has
    /// begun (the end of the stream is no longer a clean end).
    package private(set) var hasBegun = false
    /// Head bytes so far: leading empty lines, the line and its end (for the head limit).
    package private(set) var byteCount = 0
    /// Bytes of the line's end once it ended: 2 for CRLF, 1 for a bare LF.
    package private(set) var lineEndLength = 0
    /// Spaces on the line so far (the method and the target end at one each).
    private var spaces = 0
    /// Bytes of the target so far.
    private var targetLength = 0
    private var sawCR = false
    /// The last byte scanned (in an earlier feed too) was a space.
    private var lastWasSpace = false

    private init() {}

    /// Scans from `start`, appending the line's bytes (without its end) to `line`, until the line
    /// ends (then `isActive` is false and the returned end is just past its LF), the bytes run
    /// out, or a stop. Returns the stop, if any, and the end of what was scanned.
    package mutating func scan(_ bytes: UnsafeRawBufferPointer, from start: Int, options: RequestParser.Options,
                               into line: inout ByteAccumulator) -> (stop: Stop?, end: Int) {
        var index = start
        let end = bytes.count
        var copyFrom = start
        defer {
            // The line's own bytes (never CR or LF: those end the copy first).
            if index > copyFrom, hasBegun, let base = bytes.baseAddress {
                line.append(UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self) + copyFrom, count: index - copyFrom))
            }
        }
        while index < end {
            let byte = bytes[index]
            if byteCount >= options.maxHeaderBytes {
                return (Stop(index: index, problem: problem(.headersTooLarge, "head larger than \(options.maxHeaderBytes) bytes")), index)
            }
            if sawCR {
                guard byte == DecoderASCII.lf else {
                    return (Stop(index: index, problem: problem(.malformed, "CR not followed by LF in the request line")), index)
                }
                byteCount += 1
                sawCR = false
                if hasBegun {
                    lineEndLength = 2
                    return lineEnded(at: index)
                }
                index += 1
                copyFrom = index
                continue
            }
            if byte == DecoderASCII.cr || byte == DecoderASCII.lf {
                if hasBegun && spaces != 2 {
                    return (Stop(index: index, problem: problem(.malformed, "request line is not method, target and version")), index)
                }
                if hasBegun && index > copyFrom, let base = bytes.baseAddress {
                    line.append(UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self) + copyFrom, count: index - copyFrom))
                }
                copyFrom = index
                if byte == DecoderASCII.cr {
                    byteCount += 1
                    sawCR = true
                    index += 1
                    copyFrom = index
                    continue
                }
                guard options.allowsBareLF else {
                    return (Stop(index: index, problem: problem(.malformed, "bare LF ending a line of the request head")), index)
                }
                byteCount += 1
                if hasBegun {
                    lineEndLength = 1
                    isActive = false
                }
                // llhttp gets a CR before this LF (it skips both before a request line).
                return (Stop(index: index, problem: nil), index + 1)
            }
            if !hasBegun {
                hasBegun = true
                copyFrom = index
            }
            byteCount += 1
            if byte == DecoderASCII.space {
                // RFC 9112 §3: one SP between the parts (llhttp 8.1 takes several after the method).
                if lastWasSpace {
                    return (Stop(index: index, problem: problem(.malformed, "more than one space between parts of the request line")), index)
                }
                spaces += 1
                lastWasSpace = true
                index += 1
                continue
            }
            lastWasSpace = false
            if spaces == 1 {
                targetLength += 1
                if let maxTarget = options.maxTargetBytes, targetLength > maxTarget {
                    return (Stop(index: index, problem: problem(.targetTooLong, "request target longer than \(maxTarget) bytes")), index)
                }
            }
            index += 1
        }
        return (nil, end)
    }

    /// The line's LF at `index` was counted: the line is done.
    private mutating func lineEnded(at index: Int) -> (stop: Stop?, end: Int) {
        isActive = false
        return (nil, index + 1)
    }

    /// An error whose offset the parser fills in.
    private func problem(_ kind: RequestParseError.Kind, _ reason: String) -> RequestParseError {
        RequestParseError(kind: kind, reason: reason, offset: 0)
    }
}
