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
    /// who calls `expectResponse(toHEAD:)` and feeds them again; feeding them without that call
    /// traps (see `feed(_:to:)`). On throw, `onEvent` has had every event before the error.
    @discardableResult
    public func feed(_ bytes: UnsafeRawBufferPointer, onEvent: (Event) -> Void) throws(HTTP1ParseError) -> Int {
        let collector = EventCollector()
        defer { collector.events.forEach(onEvent) }
        return try feed(bytes, to: collector)
    }

    /// Parses `bytes` to their end and returns the events, in order. Several responses on one
    /// stream are parsed one after another: after an `.end`, the bytes that follow are taken
    /// as the response to a request that was not HEAD (`expectResponse(toHEAD: false)`), since
    /// bytes cannot tell: a response to HEAD announces a body it does not send, and read as the
    /// answer to another request it takes the responses after it as that body. So a stream
    /// with responses to HEAD goes through `feed(_:onEvent:)`, which stops at each end, with
    /// `expectResponse(toHEAD:)` before each response; use it too to see the events before an
    /// error.
    ///
    /// Precondition: the parser was armed for a HEAD response (`expectResponse(toHEAD: true)`)
    /// only if that response is all the stream holds. Bytes left after its end trap rather
    /// than be read as the answer to a request that was not HEAD, a guess this stream's caller
    /// has said may be wrong.
    public func feed(_ bytes: [UInt8]) throws(HTTP1ParseError) -> [Event] {
        var events: [Event] = []
        let outcome: Result<Void, HTTP1ParseError> = bytes.withUnsafeBytes { raw in
            var start = 0
            while start < raw.count {
                if isComplete {
                    precondition(!toHEAD, "ResponseParser.feed([UInt8]): bytes after a response to HEAD; feed a stream with responses to HEAD through feed(_:onEvent:), calling expectResponse(toHEAD:) before each response")
                    expectResponse(toHEAD: false)
                }
                do throws(HTTP1ParseError) {
                    start += try feed(UnsafeRawBufferPointer(rebasing: raw[start...])) { events.append($0) }
                } catch {
                    return .failure(error)
                }
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
