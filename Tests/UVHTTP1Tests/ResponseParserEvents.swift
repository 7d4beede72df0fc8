// The decoder's output as a list, for tests and the fuzz harness (Fuzz/Sources/response-parser
// links to this file). The decoder itself hands each piece to its consumer as it decodes it; this
// adapter collects them into `ResponseEvent`s.

@testable import UVHTTP1

/// What the decoder produced from the bytes of one feed or finish, in wire order.
///
/// One response is `informational* head body* end`; an error can cut that sequence short.
enum ResponseEvent: Equatable, Sendable {
    /// 1xx other than 101; the decoder then waits for the final response.
    case informational(ResponseHead)
    /// The final response head.
    case head(ResponseHead)
    /// Consecutive body bytes of one feed merged into one event (never empty).
    case body([UInt8])
    /// The final response is complete; `trailers` is empty unless a chunked body carried some.
    case end(trailers: ReceivedFields)
}

/// A consumer that records what the decoder hands it as events, one `.body` per run of body
/// bytes (the decoder may hand the bytes of one read in several pieces).
final class ResponseEventCollector: ResponseParserConsumer {
    var events: [ResponseEvent] = []
    /// Body bytes not yet closed into a `.body` event.
    private var body: [UInt8] = []

    func parserReceivedInterim(_ head: ResponseHead) {
        events.append(.informational(head))
    }

    func parserReceivedHead(_ head: ResponseHead) {
        events.append(.head(head))
    }

    func parserReceivedBody(_ bytes: UnsafeRawBufferPointer) {
        precondition(!bytes.isEmpty, "the decoder handed an empty body")
        body.append(contentsOf: bytes)
    }

    func parserReceivedEnd(trailers: ReceivedFields) {
        flushBody()
        events.append(.end(trailers: trailers))
    }

    /// Closes the pending body bytes into one `.body` event.
    func flushBody() {
        guard !body.isEmpty else { return }
        events.append(.body(body))
        body = []
    }
}

extension ResponseParser {
    /// `feed(_:to:)`, appending the pieces as events (the body bytes of this call as one `.body`).
    func feed(_ bytes: UnsafeRawBufferPointer, into events: inout [ResponseEvent]) throws(HTTP1ParseError) -> Int {
        let collector = ResponseEventCollector()
        defer {
            collector.flushBody()
            events += collector.events
        }
        return try feed(bytes, to: collector)
    }

    /// `finish(to:)`, appending the pieces as events.
    func finish(into events: inout [ResponseEvent]) throws(HTTP1ParseError) {
        let collector = ResponseEventCollector()
        defer {
            collector.flushBody()
            events += collector.events
        }
        try finish(to: collector)
    }

    /// `feed(_:into:)` from an array, its error as a value (withUnsafeBytes does not carry a typed
    /// throw).
    func feed(_ bytes: [UInt8], into events: inout [ResponseEvent]) -> Result<Int, HTTP1ParseError> {
        bytes.withUnsafeBytes { raw in
            do throws(HTTP1ParseError) {
                return .success(try feed(raw, into: &events))
            } catch {
                return .failure(error)
            }
        }
    }
}

extension Array where Element == ResponseEvent {
    /// The events with each run of `.body` events joined into one, to compare runs that were fed
    /// in different pieces (reads of one byte make one body event per byte).
    var mergingBodies: [ResponseEvent] {
        var merged: [ResponseEvent] = []
        for event in self {
            if case .body(let more) = event, case .body(let bytes)? = merged.last {
                merged[merged.count - 1] = .body(bytes + more)
            } else {
                merged.append(event)
            }
        }
        return merged
    }

    /// The first head among the events (a response's final head, when no 1xx came first).
    var firstHead: ResponseHead? {
        for case .head(let head) in self { return head }
        return nil
    }

    /// Every body byte of the events, in order.
    var bodyBytes: [UInt8] {
        reduce(into: []) { bytes, event in if case .body(let piece) = event { bytes += piece } }
    }
}
