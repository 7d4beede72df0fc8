// Fuzzes UVHTTP1's RequestParser (Sources/UVHTTP1/RequestParser.swift) over a stream of pipelined
// requests, as a server reads a connection.
//
// Input: 4 option bytes, then the bytes a client sends.
//   byte 0  bits 0, 1, 2: allow bare LF, obs-fold, repeated Content-Length (off: the strict default)
//           bit 3: small head limit, 16 + 2 * byte 1; bit 4: body limit, byte 2;
//           bit 5: target limit, byte 1
//   byte 3  seed for the read sizes of the split run
//
// Each run feeds the stream in pieces with the event API, then ends it with finish(). Runs: one
// read, pseudo-random reads, and (streams up to 512 bytes) one byte per read.
//
// Invariants (a violation traps with a message):
// - Each request's events follow `head body* end`; a body event is never empty.
// - Every byte of a read is consumed unless the parser stopped (not keep-alive, an upgrade, a
//   CONNECT) during it; once stopped it consumes and emits nothing, and finish() is clean.
// - Exactly one terminal outcome: after a throw, feed and finish throw the same error and emit
//   nothing; the error's offset lies within the bytes fed.
// - Limits: a body's bytes total at most maxBodyBytes, a head's recorded field section at most
//   maxHeaderBytes, a target at most maxTargetBytes.
// - Split invariance: the same heads, body bytes (concatenated per request), trailers and outcome
//   (clean with the same bytes consumed, or the same error kind at the same offset).
// - Strictness only refuses: when the options accept the stream, the options with every leniency
//   on read it identically.

import FuzzSupport
@testable import UVHTTP1

/// One request as the events delivered it.
struct ParsedRequest: Equatable {
    var head: RequestHead
    var body: [UInt8] = []
    var trailers: ReceivedFields?
}

/// How a run ended.
enum Outcome: Equatable {
    case clean(consumed: Int, stopped: Bool)
    case failed(RequestParseError.Kind, offset: Int)
}

func options(from flags: UInt8, _ limitByte: UInt8, _ bodyByte: UInt8) -> RequestParser.Options {
    var options = RequestParser.Options()
    options.allowsBareLF = flags & 1 != 0
    options.allowsObsFold = flags & 2 != 0
    options.allowsRepeatedContentLength = flags & 4 != 0
    if flags & 8 != 0 { options.maxHeaderBytes = 16 + 2 * Int(limitByte) }
    if flags & 16 != 0 { options.maxBodyBytes = Int(bodyByte) }
    if flags & 32 != 0 { options.maxTargetBytes = Int(limitByte) }
    return options
}

func parse(_ stream: [UInt8], pieces: [Int], options: RequestParser.Options) -> (requests: [ParsedRequest], outcome: Outcome) {
    let parser = RequestParser(options: options)
    var requests: [ParsedRequest] = []
    var open = false

    func absorb(_ event: RequestParser.Event) {
        switch event {
        case .head(let head):
            fuzzCheck(!open, "a head inside a request")
            if let max = options.maxTargetBytes { fuzzCheck(head.targetBytes.count <= max, "target beyond its limit") }
            fuzzCheck(head.fields.sectionByteCount <= options.maxHeaderBytes, "head beyond its limit")
            requests.append(ParsedRequest(head: head))
            open = true
        case .body(let bytes):
            fuzzCheck(open && !bytes.isEmpty, "a body event outside a request, or empty")
            requests[requests.count - 1].body += bytes
            if let max = options.maxBodyBytes { fuzzCheck(requests[requests.count - 1].body.count <= max, "body beyond its limit") }
        case .end(let trailers):
            fuzzCheck(open, "an end without a head")
            fuzzCheck(trailers.sectionByteCount <= options.maxHeaderBytes, "trailers beyond the limit")
            requests[requests.count - 1].trailers = trailers
            open = false
        }
    }

    func dead(_ failure: RequestParseError, _ all: UnsafeRawBufferPointer, fed: Int) -> Outcome {
        fuzzCheck(failure.offset >= 0 && failure.offset <= fed, "error offset \(failure.offset) outside the \(fed) bytes fed")
        var more: [RequestParser.Event] = []
        do throws(RequestParseError) {
            try parser.feed(all) { more.append($0) }
            fuzzCheck(false, "feed after an error did not throw")
        } catch {
            fuzzCheck(error == failure, "feed after \(failure) threw \(error)")
        }
        do throws(RequestParseError) {
            try parser.finish()
            fuzzCheck(false, "finish after an error did not throw")
        } catch {
            fuzzCheck(error == failure, "finish after \(failure) threw \(error)")
        }
        fuzzCheck(more.isEmpty, "events after an error")
        return .failed(failure.kind, offset: failure.offset)
    }

    return stream.withUnsafeBytes { all in
        var start = 0
        for end in pieces where end > start {
            let piece = UnsafeRawBufferPointer(rebasing: all[start..<end])
            let wasStopped = parser.isStopped
            let consumed: Int
            do throws(RequestParseError) {
                consumed = try parser.feed(piece, onEvent: absorb)
            } catch {
                return (requests, dead(error, all, fed: end))
            }
            if wasStopped { fuzzCheck(consumed == 0, "a stopped parser consumed bytes") }
            fuzzCheck(consumed == piece.count || parser.isStopped, "consumed \(consumed) of \(piece.count) without stopping")
            start = end
        }
        do throws(RequestParseError) {
            try parser.finish()
        } catch {
            fuzzCheck(error.kind == .truncatedBody && error.offset == parser.consumedByteCount, "finish threw \(error)")
            return (requests, dead(error, all, fed: stream.count))
        }
        fuzzCheck(!open || parser.isStopped, "finish was clean inside a request")
        return (requests, .clean(consumed: parser.consumedByteCount, stopped: parser.isStopped))
    }
}

func compare(_ a: (requests: [ParsedRequest], outcome: Outcome), _ b: (requests: [ParsedRequest], outcome: Outcome), _ label: String) {
    fuzzCheck(a.outcome == b.outcome, "\(label): outcome \(a.outcome) vs \(b.outcome)")
    if case .clean = a.outcome {
        fuzzCheck(a.requests == b.requests, "\(label): the requests differ")
    } else {
        // An error may cut the last request short at a different event; the requests that ended
        // before it must agree.
        let ended = { (requests: [ParsedRequest]) in requests.filter { $0.trailers != nil } }
        fuzzCheck(ended(a.requests) == ended(b.requests), "\(label): the requests ended before the error differ")
    }
}

runFuzzer { bytes in
    var input = FuzzInput(bytes)
    let flags = input.byte(), limitByte = input.byte(), bodyByte = input.byte(), seed = input.byte()
    let stream = Array(input.remaining())
    let chosen = options(from: flags, limitByte, bodyByte)
    let whole = parse(stream, pieces: [stream.count], options: chosen)
    compare(whole, parse(stream, pieces: splitPoints(count: stream.count, seed: seed), options: chosen), "one read vs random reads")
    if stream.count <= 512 {
        compare(whole, parse(stream, pieces: Array(stride(from: 1, through: stream.count, by: 1)), options: chosen), "one read vs one byte per read")
    }
    if case .clean = whole.outcome {
        var lenient = chosen
        lenient.allowsBareLF = true
        lenient.allowsObsFold = true
        lenient.allowsRepeatedContentLength = true
        compare(whole, parse(stream, pieces: [stream.count], options: lenient), "the options vs every leniency on")
    }
}
