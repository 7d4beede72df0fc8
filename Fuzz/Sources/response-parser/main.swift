// Fuzzes UVHTTP1's ResponseParser (Sources/UVHTTP1/ResponseParser.swift) as a connection drives
// it. The event recorder is the tests' (ResponseParserEvents.swift, a link to
// Tests/UVHTTP1Tests/), so that both read the parser through the same adapter.
//
// Input: 4 option bytes, then the bytes a server sends.
//   byte 0  bit 0: the first request is a HEAD; bit 1: later requests alternate HEAD / not HEAD
//           bit 2: small head limit (byte 1); bit 3: body limit (byte 2)
//           bits 4, 5, 6: refuse bare LF, obs-fold, repeated Content-Length (each leniency
//           the client allows is on unless its bit is set; all three set is the strict default)
//   byte 1  maxHeaderBytes = 8 + 2 * byte 1, when bit 2 is set (else the 64 KiB default)
//   byte 2  maxBodyBytes = byte 2, when bit 3 is set (else none)
//   byte 3  seed for the read sizes of the split run
//
// Each run feeds the stream the way a connection would: feed every read, re-arm the decoder with
// expectResponse after each complete keep-alive response (at most 8), stop at an error or at a
// response that closes the connection, and call finish at the end of the stream.
// Three runs: one read, reads of pseudo-random sizes, and (inputs up to 512 bytes) one byte per read.
// One read again through the Event API (`feed(_:onEvent:)`, `finish()`), and, where it applies,
// `feed([UInt8])` on the whole stream: the same responses, events for events.
// The first two are repeated by a decoder that leaves every message to llhttp (no message replay,
// ResponseParser+MessageReplay.swift), which must deliver exactly the same: the same heads and
// body pieces from each feed, the same bytes consumed, the same errors (reason text included).
//
// Invariants (a violation traps with a message):
// - Each response's events follow `informational* head body* end`; bodies are never empty; `.end`
//   is the last event of its feed and leaves isComplete true; keepAlive is false before `.end`.
// - Exactly one terminal outcome per response: after `.end`, an empty feed consumes and emits
//   nothing (a non-empty one traps until the decoder is re-armed); after a throw, feed and finish
//   throw the same error and emit nothing.
// - feed consumes every byte unless the response completed during that call.
// - closedBeforeResponse exactly when no byte of the response was fed.
// - Limits: a response's body events total at most maxBodyBytes; each head (and the trailers) is
//   no larger than maxHeaderBytes, measured by a lower bound of its raw size.
// - Split invariance, response by response: the same heads (interim and final), the same body
//   bytes (concatenated), the same trailers and the same outcome, where an outcome is
//   "complete, with this keep-alive, ending at this stream offset" or "failed with this Kind at
//   this stream offset" (HTTP1ParseError.offset). For failures the error's Kind and offset, and
//   the heads and body bytes delivered before the error, must match; the reason text and the
//   number of bytes consumed before the error may differ.

import FuzzSupport
@testable import UVHTTP1

/// Ends the run when `condition` is false (FuzzSupport's check, under the name this file uses).
@inline(__always)
private func invariant(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                       line: UInt = #line) {
    fuzzCheck(condition(), message(), line: line)
}

/// Options decoded from the first four input bytes.
private struct FuzzOptions {
    var firstIsHEAD = false
    var alternateHEAD = false
    var limits = ResponseParser.Options.client()
    var seed: UInt32 = 1

    init(_ bytes: ArraySlice<UInt8>) {
        guard bytes.count >= 4 else { return }
        let base = bytes.startIndex
        let flags = bytes[base]
        firstIsHEAD = flags & 1 != 0
        alternateHEAD = flags & 2 != 0
        if flags & 4 != 0 { limits.maxHeaderBytes = 8 + 2 * Int(bytes[base + 1]) }
        if flags & 8 != 0 { limits.maxBodyBytes = Int(bytes[base + 2]) }
        if flags & 16 != 0 { limits.allowsBareLF = false }
        if flags & 32 != 0 { limits.allowsObsFold = false }
        if flags & 64 != 0 { limits.allowsRepeatedContentLength = false }
        seed = UInt32(bytes[base + 3]) &* 2_654_435_761 | 1
    }

    /// Whether response number `index` (from 0) answers a HEAD request.
    func isHEAD(_ index: Int) -> Bool {
        alternateHEAD && index % 2 == 1 ? !firstIsHEAD : firstIsHEAD
    }
}

/// How one response ended.
private enum Outcome: Equatable {
    case complete(keepAlive: Bool, endOffset: Int)
    case failed(HTTP1ParseError.Kind, offset: Int)
}

/// Everything one response delivered.
private struct ResponseRecord: Equatable {
    var heads: [ResponseHead] = []
    var body: [UInt8] = []
    var trailers = ReceivedFields()
    var outcome: Outcome?
}

/// One step of a run, for comparing two runs feed by feed. Values, not text: describing every
/// feed's events as a string cost more than the decoding it checked.
private enum TraceStep: Equatable {
    case events([ResponseEvent])
    case consumed(Int)
    case failed(HTTP1ParseError)  // == compares the reason text too
}

/// Where a response is in the `informational* head body* end` grammar.
private enum Stage {
    case beforeFinalHead, inBody, ended
}

/// Feeds `stream` to a fresh decoder in reads ending at `bounds`, checking the per-run invariants.
private func decodeStream(_ stream: [UInt8], bounds: [Int], options: FuzzOptions, replaysMessages: Bool = true,
                          trace: UnsafeMutablePointer<[TraceStep]>? = nil) -> [ResponseRecord] {
    let limits = options.limits
    let decoder = ResponseParser(options: limits)
    decoder.replaysMessages = replaysMessages
    decoder.expectResponse(toHEAD: options.isHEAD(0))
    var records: [ResponseRecord] = []
    var record = ResponseRecord()
    var stage = Stage.beforeFinalHead
    var fedThisResponse = false

    /// Checks and records one batch of events from a single feed/finish call.
    func absorb(_ events: [ResponseEvent]) {
        trace?.pointee.append(.events(events))
        for (index, event) in events.enumerated() {
            switch event {
            case .informational(let head):
                invariant(stage == .beforeFinalHead, "informational after the final head")
                invariant(head.status >= 100 && head.status < 200 && head.status != 101, "informational status \(head.status)")
                checkSectionSize(statusLineReason: head.reason, head.headers, limits)
                record.heads.append(head)
            case .head(let head):
                invariant(stage == .beforeFinalHead, "second final head")
                invariant(head.status >= 200 && head.status <= 999, "final status \(head.status)")
                checkSectionSize(statusLineReason: head.reason, head.headers, limits)
                record.heads.append(head)
                stage = .inBody
            case .body(let bytes):
                invariant(stage == .inBody, "body outside a body")
                invariant(!bytes.isEmpty, "empty body event")
                record.body += bytes
                if let maxBody = limits.maxBodyBytes { invariant(record.body.count <= maxBody, "body beyond maxBodyBytes") }
            case .end(let trailers):
                invariant(stage == .inBody, "end without a final head")
                invariant(index == events.count - 1, "events after end in the same call")
                checkSectionSize(statusLineReason: nil, trailers, limits)
                record.trailers = trailers
                stage = .ended
            }
        }
        invariant((stage == .ended) == decoder.isComplete, "isComplete disagrees with the events")
        invariant(decoder.isComplete || !decoder.keepAlive, "keepAlive before the end")
    }

    /// Records a thrown error and checks that the decoder stays dead.
    func die(_ failure: HTTP1ParseError, _ all: UnsafeRawBufferPointer) {
        trace?.pointee.append(.failed(failure))
        invariant((failure.kind == .closedBeforeResponse) == !fedThisResponse, "closedBeforeResponse iff nothing was fed: \(failure)")
        invariant(!decoder.isComplete && !decoder.keepAlive, "a failed decoder reports completion")
        var events: [ResponseEvent] = []
        do throws(HTTP1ParseError) {
            _ = try decoder.feed(all, into: &events)
            invariant(false, "feed after an error did not throw")
        } catch {
            invariant(error == failure, "feed after an error threw \(error), not \(failure)")
        }
        do throws(HTTP1ParseError) {
            try decoder.finish(into: &events)
            invariant(false, "finish after an error did not throw")
        } catch {
            invariant(error == failure, "finish after an error threw \(error), not \(failure)")
        }
        invariant(events.isEmpty, "events after an error")
        record.outcome = .failed(failure.kind, offset: failure.offset)
        records.append(record)
    }

    return stream.withUnsafeBytes { all -> [ResponseRecord] in
        var start = 0
        for end in bounds where end > start {
            while start < end {
                var events: [ResponseEvent] = []
                let consumed: Int
                fedThisResponse = true
                do throws(HTTP1ParseError) {
                    consumed = try decoder.feed(UnsafeRawBufferPointer(rebasing: all[start..<end]), into: &events)
                } catch {
                    absorb(events)
                    die(error, all)
                    return records
                }
                invariant(consumed >= 0 && consumed <= end - start, "consumed \(consumed) of \(end - start)")
                trace?.pointee.append(.consumed(consumed))
                absorb(events)
                start += consumed
                guard decoder.isComplete else {
                    invariant(start == end, "an incomplete response left bytes unconsumed")
                    break
                }
                // Complete: an empty feed takes and emits nothing (a non-empty one before the
                // decoder is re-armed traps, the caller's mistake).
                var after: [ResponseEvent] = []
                let more = try? decoder.feed(UnsafeRawBufferPointer(rebasing: all[start..<start]), into: &after)
                invariant(more == 0 && after.isEmpty && decoder.isComplete, "the decoder went on after the end")
                record.outcome = .complete(keepAlive: decoder.keepAlive, endOffset: start)
                records.append(record)
                if !decoder.keepAlive || records.count == 8 { return records }
                decoder.expectResponse(toHEAD: options.isHEAD(records.count))
                record = ResponseRecord()
                stage = .beforeFinalHead
                fedThisResponse = false
            }
            start = end
        }
        var events: [ResponseEvent] = []
        do throws(HTTP1ParseError) {
            try decoder.finish(into: &events)
        } catch {
            absorb(events)
            die(error, all)
            return records
        }
        absorb(events)
        invariant(decoder.isComplete, "finish returned without completing")
        record.outcome = .complete(keepAlive: decoder.keepAlive, endOffset: stream.count)
        records.append(record)
        return records
    }
}

/// The same stream, in one read, through the Event API (`feed(_:onEvent:)`, `finish()`),
/// re-armed as `decodeStream` re-arms: its records must be the consumer path's.
private func decodeWithEvents(_ stream: [UInt8], options: FuzzOptions) -> [ResponseRecord] {
    let parser = ResponseParser(options: options.limits)
    parser.expectResponse(toHEAD: options.isHEAD(0))
    var records: [ResponseRecord] = []
    var record = ResponseRecord()
    func absorb(_ event: ResponseParser.Event) {
        switch event {
        case .interim(let head), .head(let head): record.heads.append(head)
        case .body(let bytes): record.body += bytes
        case .end(let trailers): record.trailers = trailers
        }
    }
    return stream.withUnsafeBytes { all -> [ResponseRecord] in
        var start = 0
        do throws(HTTP1ParseError) {
            while start < all.count {
                start += try parser.feed(UnsafeRawBufferPointer(rebasing: all[start...]), onEvent: absorb)
                guard parser.isComplete else { break }
                record.outcome = .complete(keepAlive: parser.keepAlive, endOffset: start)
                records.append(record)
                if !parser.keepAlive || records.count == 8 { return records }
                parser.expectResponse(toHEAD: options.isHEAD(records.count))
                record = ResponseRecord()
            }
            for event in try parser.finish() { absorb(event) }
        } catch {
            record.outcome = .failed(error.kind, offset: error.offset)
            records.append(record)
            return records
        }
        record.outcome = .complete(keepAlive: parser.keepAlive, endOffset: all.count)
        records.append(record)
        return records
    }
}

/// `feed([UInt8])` then `finish()` on the whole stream, checked against the records of one read
/// where that call applies: every response answers a non-HEAD request (it re-arms so) and each
/// but the last keeps the connection (it parses on where a connection would stop).
private func checkWholeStreamEvents(_ stream: [UInt8], options: FuzzOptions, records: [ResponseRecord]) {
    var records = records
    // One read re-arms after a last keep-alive response; at the end of the stream that finds none.
    if records.count > 1, case .failed(.closedBeforeResponse, _)? = records.last?.outcome { records.removeLast() }
    guard !options.firstIsHEAD, !options.alternateHEAD, records.count < 8, let last = records.last else { return }
    for record in records.dropLast() {
        guard case .complete(keepAlive: true, _)? = record.outcome else { return }
    }
    if case .complete(_, let endOffset)? = last.outcome, endOffset != stream.count { return }
    let parser = ResponseParser(options: options.limits)
    let events: [ResponseParser.Event]
    do throws(HTTP1ParseError) {
        events = try parser.feed(stream) + parser.finish()
    } catch {
        return invariant(last.outcome == .failed(error.kind, offset: error.offset), "feed([UInt8]) threw \(error), one read ended \(String(describing: last.outcome))")
    }
    var expected: [ResponseParser.Event] = []
    for record in records {
        guard case .complete? = record.outcome else { return invariant(false, "feed([UInt8]) succeeded, one read ended \(String(describing: record.outcome))") }
        expected += record.heads.map { $0.status < 200 ? .interim($0) : .head($0) }
        if !record.body.isEmpty { expected.append(.body(record.body)) }
        expected.append(.end(trailers: record.trailers))
    }
    var merged: [ResponseParser.Event] = []
    for event in events {
        appendJoiningBodies(event, to: &merged, body: { if case .body(let bytes) = $0 { bytes } else { nil } },
                            makeBody: ResponseParser.Event.body)
    }
    invariant(merged == expected, "feed([UInt8]) gave other events than one read")
}

/// Checks a lower bound of a field section's raw size against the limit: a status line is at
/// least "HTTP/1.1 200" plus " reason", each field is its name, ':' and value plus a line end,
/// and the section ends with a line end; a line end is at least one byte (a bare LF). The reason
/// counts Unicode scalars, not UTF-8 bytes, because each invalid byte became one U+FFFD; fields
/// are counted in raw bytes.
private func checkSectionSize(statusLineReason reason: String?, _ fields: ReceivedFields, _ limits: ResponseParser.Options) {
    var size = 1
    if let reason { size += 12 + (reason.isEmpty ? 0 : 1 + reason.unicodeScalars.count) + 1 }
    for index in fields.indices {
        size += fields.withField(at: index) { name, value in name.count + value.count } + 2
    }
    invariant(fields.sectionByteCount <= limits.maxHeaderBytes, "a recorded section of \(fields.sectionByteCount) bytes got past a limit of \(limits.maxHeaderBytes)")
    invariant(size <= limits.maxHeaderBytes, "a field section of at least \(size) bytes got past a limit of \(limits.maxHeaderBytes)")
}

/// Read sizes from a xorshift generator: 1 to 64 bytes each.
private func randomBounds(count: Int, seed: UInt32) -> [Int] {
    var state = seed
    var bounds: [Int] = []
    var position = 0
    let maxRead = Int(seed % 64) + 1
    while position < count {
        state ^= state << 13
        state ^= state >> 17
        state ^= state << 5
        position = min(count, position + 1 + Int(state % UInt32(maxRead)))
        bounds.append(position)
    }
    return bounds
}

/// Compares two runs response by response (see the invariants at the top of this file).
private func compare(_ a: [ResponseRecord], _ b: [ResponseRecord], _ label: String) {
    invariant(a.count == b.count, "\(label): \(a.count) responses vs \(b.count)")
    for (index, (x, y)) in zip(a, b).enumerated() {
        invariant(x.outcome == y.outcome, "\(label): response \(index) ended \(String(describing: x.outcome)) vs \(String(describing: y.outcome))")
        invariant(x.heads == y.heads, "\(label): response \(index) heads differ")
        invariant(x.body == y.body, "\(label): response \(index) body differs (\(x.body.count) vs \(y.body.count) bytes)")
        invariant(x.trailers == y.trailers, "\(label): response \(index) trailers differ")
    }
}

runFuzzer { bytes in
    let input = Array(bytes)
    let options = FuzzOptions(input[...])
    let stream = Array(input.dropFirst(4))
    let randomSplit = randomBounds(count: stream.count, seed: options.seed)
    // One read and the random reads, each traced feed by feed for the replay check below.
    var oneReadTrace: [TraceStep] = []
    var randomReadsTrace: [TraceStep] = []
    let oneRead = decodeStream(stream, bounds: [stream.count], options: options, trace: &oneReadTrace)
    let randomReads = decodeStream(stream, bounds: randomSplit, options: options, trace: &randomReadsTrace)
    compare(oneRead, randomReads, "one read vs random reads")
    compare(oneRead, decodeWithEvents(stream, options: options), "consumer vs Event API")
    checkWholeStreamEvents(stream, options: options, records: oneRead)
    // The replay against llhttp, feed by feed, in one read and in the random reads.
    for (bounds, replayedRecords, replayed) in [([stream.count], oneRead, oneReadTrace), (randomSplit, randomReads, randomReadsTrace)] {
        var byLlhttp: [TraceStep] = []
        let b = decodeStream(stream, bounds: bounds, options: options, replaysMessages: false, trace: &byLlhttp)
        compare(replayedRecords, b, "message replay vs llhttp")
        invariant(replayed == byLlhttp, "message replay vs llhttp: feeds differ\n\(replayed)\n\(byLlhttp)")
    }
    if stream.count <= 512 {
        let byteReads = decodeStream(stream, bounds: Array(stride(from: 1, through: stream.count, by: 1)), options: options)
        compare(oneRead, byteReads, "one read vs one byte per read")
    }
}
