// Parsing through the public API only (no @testable): what a harness author can write.

import UVHTTP1

/// What a stream parsed to: its events (body pieces merged) and the error that ended it, if any.
struct PublicParse {
    var events: [ResponseParser.Event]
    var error: HTTP1ParseError?
}

/// Parses `input` fed in pieces cut at `cuts` (ascending offsets), responses one after another
/// (each to a non-HEAD request), then the end of the stream.
func parsePublicly(_ input: [UInt8], options: ResponseParser.Options = ResponseParser.Options(), cuts: [Int] = []) -> PublicParse {
    let parser = ResponseParser(options: options)
    var events: [ResponseParser.Event] = []
    let bounds = [0] + cuts + [input.count]
    do {
        try input.withUnsafeBytes { raw in
            for piece in 0..<(bounds.count - 1) {
                var start = bounds[piece]
                while start < bounds[piece + 1] {
                    if parser.isComplete { parser.expectResponse(toHEAD: false) }
                    start += try parser.feed(UnsafeRawBufferPointer(rebasing: raw[start..<bounds[piece + 1]])) { events.append($0) }
                }
            }
        }
        events += try parser.finish()
    } catch {
        return PublicParse(events: mergingBodies(events), error: error as? HTTP1ParseError)
    }
    return PublicParse(events: mergingBodies(events), error: nil)
}

func parsePublicly(_ input: String, options: ResponseParser.Options = ResponseParser.Options(), cuts: [Int] = []) -> PublicParse {
    parsePublicly(Array(input.utf8), options: options, cuts: cuts)
}

/// Adjacent body events joined: how a body is cut depends on the feeds.
func mergingBodies(_ events: [ResponseParser.Event]) -> [ResponseParser.Event] {
    var merged: [ResponseParser.Event] = []
    for event in events {
        if case .body(let more) = event, case .body(let some)? = merged.last {
            merged[merged.count - 1] = .body(some + more)
        } else {
            merged.append(event)
        }
    }
    return merged
}
