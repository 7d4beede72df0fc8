// The parser's output as values, for those who want them rather than a consumer's callbacks:
// harnesses, tools reading captured traffic, tests. Each event is copied out of the fed bytes
// (a body piece becomes an array), which the client's zero-copy consumer path never does.

extension ResponseParser {
    /// One piece of a parsed response, in wire order: `interim* head body* end` for each
    /// response; an error cuts that short.
    public enum Event: Equatable, Sendable {
        /// A 1xx other than 101 (version, status, reason and fields in the head); the final
        /// response follows.
        case interim(ResponseHead)
        /// The final response's head: `versionMajor`/`versionMinor`, `status`, `reason`, `fields`
        /// as received and `httpFields` as swift-http-types fields.
        case head(ResponseHead)
        /// Body bytes after chunked decoding, never empty. How a body is cut into events depends
        /// on how the stream was split into feeds; their concatenation does not.
        case body([UInt8])
        /// The final response is complete; `trailers` is empty unless a chunked body carried some.
        case end(trailers: ReceivedFields)
    }

    /// Parses `bytes`, calling `onEvent` with what they complete, in order, and returns how many
    /// were consumed. As `feed(_:to:)`: parsing stops right after the final response's `.end`,
    /// so that the bytes after it (a next response on the same stream) are left to the caller,
    /// who calls `expectResponse(toHEAD:)` and feeds them again. On throw, `onEvent` has had
    /// every event before the error.
    @discardableResult
    public func feed(_ bytes: UnsafeRawBufferPointer, onEvent: (Event) -> Void) throws(HTTP1ParseError) -> Int {
        let collector = EventCollector()
        defer { collector.events.forEach(onEvent) }
        return try feed(bytes, to: collector)
    }

    /// Parses `bytes` to their end and returns the events, in order. Several responses on one
    /// stream are parsed one after another: after an `.end`, the bytes that follow are taken
    /// as the response to a request that was not HEAD (`expectResponse(toHEAD: false)`). When a
    /// request was a HEAD, or to see the events before an error, use `feed(_:onEvent:)`, which
    /// stops at each end.
    public func feed(_ bytes: [UInt8]) throws(HTTP1ParseError) -> [Event] {
        var events: [Event] = []
        let outcome: Result<Void, HTTP1ParseError> = bytes.withUnsafeBytes { raw in
            var start = 0
            while start < raw.count {
                do throws(HTTP1ParseError) {
                    start += try feed(UnsafeRawBufferPointer(rebasing: raw[start...])) { events.append($0) }
                } catch {
                    return .failure(error)
                }
                if isComplete && start < raw.count { expectResponse(toHEAD: false) }
            }
            return .success(())
        }
        try outcome.get()
        return events
    }

    /// The stream ended (the peer closed): returns the `.end` of a body framed by the close,
    /// nothing when the response was already complete, or throws `.truncatedBody` (a message
    /// cut short) or `.closedBeforeResponse` (no byte of it came).
    public func finish() throws(HTTP1ParseError) -> [Event] {
        let collector = EventCollector()
        try finish(to: collector)
        return collector.events
    }
}

/// Collects a parser's output as events, each body piece copied.
private final class EventCollector: ResponseParserConsumer {
    var events: [ResponseParser.Event] = []

    func parserReceivedInterim(_ head: ResponseHead) { events.append(.interim(head)) }
    func parserReceivedHead(_ head: ResponseHead) { events.append(.head(head)) }
    func parserReceivedBody(_ bytes: UnsafeRawBufferPointer) { events.append(.body(Array(bytes))) }
    func parserReceivedEnd(trailers: ReceivedFields) { events.append(.end(trailers: trailers)) }
}
