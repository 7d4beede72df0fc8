// The parser's output as values, for those who want them rather than a consumer's callbacks:
// harnesses, tools reading captured traffic, tests. Each event is copied out of the fed bytes
// (a body piece becomes an array), which a server's zero-copy consumer never does.

extension RequestParser {
    /// One piece of a parsed stream, in wire order: `head body* end` for each request; an error
    /// cuts that short.
    public enum Event: Equatable, Sendable {
        /// A request head: method, target (bytes and String), version, fields as received and as
        /// swift-http-types fields, and the keep-alive, Expect and upgrade verdicts.
        case head(RequestHead)
        /// Body bytes after chunked decoding, never empty. How a body is cut into events depends
        /// on how the stream was split into feeds; their concatenation does not.
        case body([UInt8])
        /// The request is complete; `trailers` is empty unless a chunked body carried some.
        case end(trailers: ReceivedFields)
    }

    /// Parses `bytes`, calling `onEvent` with what they complete, in order, and returns how many
    /// were consumed (as `feed(_:to:)`). On throw, `onEvent` has had every event before the error.
    @discardableResult
    public func feed(_ bytes: UnsafeRawBufferPointer, onEvent: (Event) -> Void) throws(RequestParseError) -> Int {
        let collector = RequestEventCollector()
        defer { collector.events.forEach(onEvent) }
        return try feed(bytes, to: collector)
    }

    /// Parses `bytes` and returns the events they complete, in order. Bytes after a request that
    /// stops the parser (`isStopped`) are not consumed; `consumedByteCount` says how far it got.
    /// To see the events before an error, use `feed(_:onEvent:)`.
    public func feed(_ bytes: [UInt8]) throws(RequestParseError) -> [Event] {
        var events: [Event] = []
        let outcome: Result<Void, RequestParseError> = bytes.withUnsafeBytes { raw in
            do throws(RequestParseError) {
                try feed(raw) { events.append($0) }
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try outcome.get()
        return events
    }
}

/// Collects a request parser's output as events, each body piece copied.
private final class RequestEventCollector: RequestParserConsumer {
    var events: [RequestParser.Event] = []

    func parserReceivedHead(_ head: RequestHeadView) { events.append(.head(head.makeHead())) }
    func parserReceivedBody(_ bytes: UnsafeRawBufferPointer) { events.append(.body(Array(bytes))) }
    func parserReceivedEnd(trailers: ReceivedFields) { events.append(.end(trailers: trailers)) }
}
