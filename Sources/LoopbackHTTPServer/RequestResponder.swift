import UVHTTP1

/// Answers the requests of one connection: feeds what it reads to UVHTTP1's `RequestParser` and
/// writes the answer to each request into the loop's `OutputBuffer` as soon as the request ends.
///
/// The parser does the framing (pipelining, splits at any byte, Content-Length and chunked
/// bodies, the keep-alive verdict) and the checks; this type routes on the target and answers.
/// Body bytes are dropped as they come. Per request, only the target is copied, into storage
/// reused from one request to the next: nothing is allocated.
///
/// Loop-confined and not re-entrant; `ServerConnection` owns it.
final class RequestResponder: RequestParserConsumer {
    /// What the connection must do after a `feed`.
    enum Outcome {
        /// Keep reading: the connection stays open.
        case keepReading
        /// The last response is written (a request that closes, or a refusal): close once it is
        /// sent, and ignore anything the client sends after it.
        case close
    }

    /// Frames the requests; strict, with the server's head limit.
    let parser = RequestParser(options: .init(maxHeaderBytes: LoopbackHTTPServer.maximumHeadBytes))
    /// Where the responses go; the loop's shared buffer.
    let output: OutputBuffer

    // The current request, set at its head. Unchecked exclusivity: only the loop thread touches
    // it, and the parser never re-enters a callback.
    /// The request target, copied out of the parser's head (routing happens at the request's end).
    @exclusivity(unchecked) var target = OutputBuffer(capacity: 64)
    /// The request is HEAD: the answer has no body.
    @exclusivity(unchecked) var isHEAD = false
    /// How the response must treat the connection.
    @exclusivity(unchecked) var persistence = Response.Persistence.keepAlive

    /// Creates a responder whose answers go to `output`.
    init(output: OutputBuffer) {
        self.output = output
    }

    /// Parses `bytes`, appending the answer to every request they complete. After `.close`, do
    /// not feed again.
    func feed(_ bytes: UnsafeRawBufferPointer) -> Outcome {
        do {
            try parser.feed(bytes, to: self)
        } catch {
            Response.writeRefusal(status: error.kind == .headersTooLarge ? 431 : 400, into: output)
            return .close
        }
        // The parser stops after a request that closes the connection or switches protocols.
        return parser.isStopped ? .close : .keepReading
    }

    /// Notes what the answer depends on, and invites the body if the client waits for
    /// `100 Continue` before sending it.
    func parserReceivedHead(_ head: RequestHeadView) {
        target.removeAll()
        target.append(head.target)
        isHEAD = head.isHEAD
        // An upgrade (or CONNECT) is refused by answering normally and closing: whatever the
        // client sends next would be in another protocol.
        if !head.keepAlive || head.isUpgrade {
            persistence = .close
        } else {
            persistence = head.versionMinor == 0 ? .keepAliveForHTTP10 : .keepAlive
        }
        if head.expectsContinue && head.framing != .contentLength(0) {
            output.append(Response.continueHead)
        }
    }

    /// Body bytes are read and dropped.
    func parserReceivedBody(_ bytes: UnsafeRawBufferPointer) {}

    /// The request (body included) is complete: answer it.
    func parserReceivedEnd(trailers: ReceivedFields) {
        Response.write(Route.match(target.bytes), omitsBody: isHEAD, persistence: persistence, into: output)
    }
}
