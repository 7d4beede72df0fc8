// From a recorded field section to its fields: the walk the request and response parsers share.
// Each parser reads the few fields it needs (framing, Expect, Date) in the same pass.

extension SectionRecord {
    /// Walks the recorded lines into `bounds` (each field's name and value as offsets into
    /// `bytes`), calling `visit` with every field's name, value, line start and index.
    ///
    /// A value continued by obs-fold is not contiguous in `bytes`: RFC 9112 §5.2 asks a user
    /// agent to replace each fold with SP, so its pieces (each trimmed, empty ones dropped) are
    /// joined with one SP into `folded`, and its bounds point past `bytes.count` into that.
    /// Lines llhttp refuses (no colon, a continuation with no field before it) are skipped.
    /// `bounds` and `folded` are emptied first and keep their storage.
    @inline(__always)
    package func walkFields(
        into bounds: inout ScratchList<ReceivedFields.Bounds>, folded: inout ByteAccumulator,
        _ visit: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>, _ lineStart: Int32, _ index: Int) -> Void
    ) {
        bounds.removeAll()
        // Sized by the section's lines, not a guess: an idle connection keeps this scratch.
        if bounds.capacity < lines.count { bounds.reserveCapacity(lines.count) }
        folded.removeAll()
        let section = bytes.bytes
        let lines = lines.elements
        var index = 0
        while index < lines.count {
            let line = lines[index]
            index += 1
            guard line.colon >= 0 else { continue }
            var value = Self.trimmed(section, from: Int(line.colon) + 1, to: Int(line.end))
            var valueBytes = UnsafeBufferPointer(rebasing: section[value])
            if index < lines.count && lines[index].colon == Line.continuation {
                let extraStart = folded.count
                if !value.isEmpty { folded.append(valueBytes) }
                while index < lines.count && lines[index].colon == Line.continuation {
                    let piece = Self.trimmed(section, from: Int(lines[index].start), to: Int(lines[index].end))
                    if !piece.isEmpty {
                        if folded.count > extraStart { folded.append(DecoderASCII.space) }
                        folded.append(UnsafeBufferPointer(rebasing: section[piece]))
                    }
                    index += 1
                }
                valueBytes = UnsafeBufferPointer(rebasing: folded.bytes[extraStart...])
                value = section.count + extraStart ..< section.count + folded.count
            }
            visit(UnsafeBufferPointer(rebasing: section[Int(line.start)..<Int(line.colon)]), valueBytes, line.start, bounds.count)
            bounds.append(ReceivedFields.Bounds(
                nameStart: line.start, nameEnd: line.colon,
                valueStart: Int32(truncatingIfNeeded: value.lowerBound), valueEnd: Int32(truncatingIfNeeded: value.upperBound)))
        }
    }

    /// section[start..<end] without leading and trailing SP/HTAB, as a range.
    private static func trimmed(_ section: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Range<Int> {
        var lower = start
        var upper = end
        while lower < upper && DecoderASCII.isWhitespace(section[lower]) { lower += 1 }
        while upper > lower && DecoderASCII.isWhitespace(section[upper - 1]) { upper -= 1 }
        return lower..<upper
    }
}
