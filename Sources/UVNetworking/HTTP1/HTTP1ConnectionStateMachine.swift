/// One HTTP/1.1 connection's life, as a value: whether it may carry another request once the
/// current exchange ends. The shell (`HTTP1Connection`) feeds it what the socket and the decoder
/// report and performs the returned action.
///
/// States and their legal moves:
/// - `connecting`: connected → `idle`; failure → `closed`.
/// - `idle`: in the pool, reading only to notice the server closing. execute → `active`;
///   peer close, error or close request → `closed`.
/// - `active`: one exchange in flight. It ends when the response has ended: → `idle` if the
///   request was written and both sides allow keep-alive, else → `closed` (a response that ends
///   before the request is written, see below). Any failure → `closed`.
/// - `closed`: terminal.
///
/// A streamed request body (`execute(streamingBody: true)`) is sent chunk by chunk while the
/// exchange is `active` (see `BodyStream`): the head is written while the first chunk is read,
/// then each chunk is written once it has been read and the previous write finished, and the
/// next read starts when a chunk starts being written. So at most one read is in flight and at
/// most two chunks exist (one being written, one read ahead). The request counts as written
/// when the last chunk is. A body that fails closes the connection.
///
/// A response that ends before the request is written (a 413 for a body the server will not
/// read) ends the exchange at once, whatever the body: no more reads, and the write in flight,
/// if any, is abandoned, since a server that does not read would hold it until a timeout. The
/// connection is closed, never reused: the server may still expect the rest of the body.
///
/// With `Expect: 100-continue` (`execute(streamingBody: true, expectsContinue: true)`) only the
/// head is written at first and no read starts: the body waits until the server's 100 arrives
/// or the shell's wait for it times out (`continueToBody`, like curl's one second). A final
/// response that comes instead (a 417, a 401) abandons the body before any byte of it is read
/// (`finalHeadReceived`); the exchange ends with that response and the connection is not
/// reused, since the server may still expect the announced body.
///
/// Pipelining (`pipeline`): while an exchange is active, more requests whose bodies go with
/// their heads may be written behind it; `pipelined` counts them. Responses come in request
/// order, so when the active one ends on a kept-alive connection the oldest pipelined request
/// becomes the active exchange (`exchangeFinishedWithNext`). Writes finish in order too
/// (`writeFinished`): first the active request's, then the pipelined ones'. A response that
/// ends the connection (`Connection: close`, or any failure) leaves the pipelined requests
/// unanswered: the shell hands them back to be sent again.
struct HTTP1ConnectionStateMachine: Sendable {
    enum State: Equatable, Sendable {
        case connecting
        case idle
        case active(requestWritten: Bool, responseEnded: Bool, keepAlive: Bool)
        case closed
    }

    /// Where a streamed request body is. Exists only while an exchange with one is active and
    /// its request is not yet written. One case per situation that can occur: at most one read
    /// (on a worker) and one write (the head or a chunk) are in flight, and at most one chunk
    /// waits between them.
    enum BodyStream: Equatable, Sendable {
        /// `Expect: 100-continue`: the body waits for the server's go-ahead; no read has started.
        /// `headInFlight`: the head is still being written.
        case awaitingContinue(headInFlight: Bool)
        /// A chunk is being read. `writing`: the head or the previous chunk is being written.
        case reading(writing: Bool)
        /// A chunk was read while the previous write runs, and waits for it; no read runs.
        /// `isLast`: the body ends with it. `failAfterWrite`: the stream had more bytes than its
        /// declared length: exactly the declared ones go out, then the exchange fails with
        /// `bodyStreamFailed`.
        case chunkReady(isLast: Bool, failAfterWrite: Bool)
        /// The last chunk is being written; nothing more is read.
        case writingLast(failAfterWrite: Bool)
        /// Every chunk is written (`bodyComplete` was returned); `requestWritten` ends it.
        case written
        /// No more reads or writes: a final response declined the body, or a write failed (the
        /// response, if the server sent one, still ends the exchange).
        case abandoned
    }

    enum Action: Equatable, Sendable {
        case none
        /// Connected: hand the connection to the pool.
        case connectionReady
        /// Write the request that was just assigned.
        case sendRequest
        /// Write the head of the request just assigned, and start reading its body's first chunk.
        case sendHeadAndReadBody
        /// Write the head of the request just assigned; its body waits for `100 Continue`. The
        /// shell starts the wait's timer.
        case sendHeadAwaitingContinue
        /// The wait for `100 Continue` is over: start reading the body's first chunk (the shell
        /// stops the wait's timer).
        case readFirstBodyChunk
        /// Write the chunk that was read (it waits in the shell); with `readNext`, start reading
        /// the next one.
        case writeBodyChunk(readNext: Bool)
        /// The last body chunk is written: the request is complete (feed `requestWritten`).
        case bodyComplete
        /// The exchange is over; the task completes. `reusable`: back to the pool, else close
        /// (and any pipelined requests go unanswered).
        case exchangeFinished(reusable: Bool)
        /// Write the request just pipelined behind the active exchange.
        case sendPipelinedRequest
        /// The write of the pipelined request at this position (0: the oldest still waiting
        /// for its response) finished.
        case pipelinedRequestWritten(position: Int)
        /// The exchange is over and the oldest pipelined request's response comes next: it is
        /// now the active exchange (its request written or not, as `state` says).
        case exchangeFinishedWithNext
        /// Fail the exchange in flight and close. The shell holds the error (the socket's, the
        /// decoder's or the body's): the machine only decides that the exchange fails.
        case failExchange
        /// Close the socket; no exchange is affected.
        case close
    }

    private(set) var state: State = .connecting
    /// The streamed body of the exchange in flight; nil when its body went with the head.
    private(set) var body: BodyStream?
    /// How many requests this connection has been given, the current one included.
    private(set) var requestCount = 0
    /// Requests written (or being written) behind the active exchange, awaiting their responses.
    private(set) var pipelined = 0
    /// Of the pipelined requests, how many (the oldest) are fully written.
    private(set) var pipelinedWritten = 0

    /// Whether the exchange in flight runs on a connection that served an earlier request: the
    /// condition under which a failure before any response byte is worth retrying.
    var isReused: Bool { requestCount > 1 }
    /// Whether a request has run here (so the next one will be on a reused connection).
    var hasServedRequests: Bool { requestCount > 0 }

    mutating func connected() -> Action {
        guard state == .connecting else { return .none }
        state = .idle
        return .connectionReady
    }

    /// A request was assigned. `streamingBody`: its body follows the head in chunks;
    /// `expectsContinue`: only once the server said `100 Continue` (or the wait timed out).
    mutating func execute(streamingBody: Bool = false, expectsContinue: Bool = false) -> Action {
        precondition(state == .idle, "a request was assigned to a connection that is not idle: \(state)")
        requestCount += 1
        state = .active(requestWritten: false, responseEnded: false, keepAlive: true)
        guard streamingBody else { return .sendRequest }
        guard expectsContinue else {
            body = .reading(writing: true)
            return .sendHeadAndReadBody
        }
        body = .awaitingContinue(headInFlight: true)
        return .sendHeadAwaitingContinue
    }

    /// Another request, whose body goes with its head, is written behind the active exchange.
    /// Legal only while that exchange's body (if any) went with its head and its response has
    /// not ended a connection that must close.
    mutating func pipeline() -> Action {
        precondition(acceptsPipelinedRequest, "a request was pipelined onto a connection that cannot take one: \(state)")
        requestCount += 1
        pipelined += 1
        return .sendPipelinedRequest
    }

    /// Whether `pipeline` is legal now: an exchange is active, its body (if any) went with its
    /// head, and nothing said the connection closes.
    var acceptsPipelinedRequest: Bool {
        guard case .active(_, responseEnded: false, keepAlive: true) = state else { return false }
        return body == nil
    }

    /// A write of a request whose body went with its head finished. Writes finish in the order
    /// they were made: the active exchange's first, then the pipelined requests'.
    mutating func writeFinished() -> Action {
        if case .active(requestWritten: false, _, _) = state { return requestWritten() }
        guard pipelinedWritten < pipelined else { return .none }
        pipelinedWritten += 1
        return .pipelinedRequestWritten(position: pipelinedWritten - 1)
    }

    /// Whether the body waits for `100 Continue`.
    var isAwaitingContinue: Bool {
        if case .awaitingContinue = body { return true }
        return false
    }

    /// The server sent `100 Continue`, or the shell's wait for it timed out: the body may go.
    /// Ignored unless the body is waiting (a late 100, a second one, a timer racing the 100).
    mutating func continueToBody() -> Action {
        guard case .active(requestWritten: false, _, _) = state, case .awaitingContinue(let headInFlight) = body else { return .none }
        body = .reading(writing: headInFlight)
        return .readFirstBodyChunk
    }

    /// A final (not 1xx) response head arrived. While the body waits for `100 Continue` this is
    /// the server declining it: the body is abandoned unread and unsent, and the exchange ends
    /// when the response does (`responseEnded`).
    mutating func finalHeadReceived() -> Action {
        guard case .active(requestWritten: false, _, _) = state, case .awaitingContinue = body else { return .none }
        body = .abandoned
        return .none
    }

    /// The whole request is written (its one write finished, or `bodyComplete` was performed),
    /// or, after an early response, the request is given up.
    mutating func requestWritten() -> Action {
        guard case .active(_, let responseEnded, let keepAlive) = state else { return .none }
        body = nil
        state = .active(requestWritten: true, responseEnded: responseEnded, keepAlive: keepAlive)
        return responseEnded ? finish(keepAlive: keepAlive) : .none
    }

    /// A write of a streamed request (its head or a chunk) finished.
    mutating func bodyWriteFinished() -> Action {
        guard case .active(requestWritten: false, _, _) = state, let body else { return .none }
        switch body {
        case .awaitingContinue(headInFlight: true):
            self.body = .awaitingContinue(headInFlight: false)
            return .none
        case .reading(writing: true):
            // The next chunk is still being read.
            self.body = .reading(writing: false)
            return .none
        case .chunkReady(let isLast, let failAfterWrite):
            self.body = isLast ? .writingLast(failAfterWrite: failAfterWrite) : .reading(writing: true)
            return .writeBodyChunk(readNext: !isLast)
        case .writingLast(failAfterWrite: true):
            self.body = nil
            state = .closed
            return .failExchange
        case .writingLast(failAfterWrite: false):
            self.body = .written
            return .bodyComplete
        case .awaitingContinue(headInFlight: false), .reading(writing: false), .written, .abandoned:
            // No write was in flight, or a final response declined the body: nothing more is
            // written; the response's end ends the exchange.
            return .none
        }
    }

    /// A chunk of the streamed body was read. `isLast`: the body ends with it. `excess`: the
    /// stream went past its declared length; the chunk completes that length, then the exchange
    /// fails with `bodyStreamFailed`.
    mutating func bodyChunkRead(isLast: Bool, excess: Bool = false) -> Action {
        guard case .active(requestWritten: false, _, _) = state, case .reading(let writing) = body else { return .none }
        let failAfterWrite = isLast && excess
        if writing {
            body = .chunkReady(isLast: isLast, failAfterWrite: failAfterWrite)
            return .none
        }
        body = isLast ? .writingLast(failAfterWrite: failAfterWrite) : .reading(writing: true)
        return .writeBodyChunk(readNext: !isLast)
    }

    /// Writing the streamed request failed (the server closed or reset the connection, perhaps
    /// after answering early). Nothing more is written or read (a chunk read ahead is dropped);
    /// the exchange waits for the read side: a complete response still ends it
    /// (`responseEnded`), else EOF or an error fails it.
    mutating func bodyWriteFailed() -> Action {
        guard case .active(requestWritten: false, _, _) = state, body != nil else { return .none }
        body = .abandoned
        return .none
    }

    /// Reading the streamed body failed (the stream threw, or ended before its declared length).
    /// Fails the exchange, unless the response already ended it.
    mutating func bodyReadFailed() -> Action {
        guard case .active(requestWritten: false, _, _) = state, let body, body != .abandoned else { return .none }
        return failed()
    }

    /// Whether the chunk the shell holds is still wanted (the machine says `chunkReady`).
    var holdsReadyChunk: Bool {
        if case .chunkReady = body { return true }
        return false
    }

    /// The response ended. `keepAlive`: the response allows reuse (HTTP/1.1 without
    /// `Connection: close`, or 1.0 with keep-alive) and no stray bytes followed it.
    @inline(__always)
    mutating func responseEnded(keepAlive: Bool) -> Action {
        guard case .active(let requestWritten, _, _) = state else { return .none }
        // A response that ends before the request is fully written means the server did not want
        // the rest of the body. It is complete, so the exchange ends now: waiting for the write
        // in flight could mean waiting for a server that never reads. The stream is out of step,
        // so the connection is closed (Go's Transport makes the same call); closing abandons the
        // write, and a streamed body stops (a chunk read ahead is dropped, no read starts).
        if pipelined > 0 { return nextPipelinedResponse(reusable: keepAlive && requestWritten) }
        return finish(keepAlive: keepAlive && requestWritten)
    }

    /// `responseEnded` with requests pipelined behind: the next response is the oldest one's,
    /// unless the connection must close.
    @inline(never)
    private mutating func nextPipelinedResponse(reusable: Bool) -> Action {
        guard reusable else {
            clearPipeline()
            return finish(keepAlive: false)
        }
        pipelined -= 1
        let nextWritten = pipelinedWritten > 0
        if nextWritten { pipelinedWritten -= 1 }
        state = .active(requestWritten: nextWritten, responseEnded: false, keepAlive: true)
        return .exchangeFinishedWithNext
    }

    private mutating func finish(keepAlive: Bool) -> Action {
        body = nil
        state = keepAlive ? .idle : .closed
        return .exchangeFinished(reusable: keepAlive)
    }

    /// The connection ends: pipelined requests will get no response here.
    private mutating func clearPipeline() {
        pipelined = 0
        pipelinedWritten = 0
    }

    /// A socket error, a decoder error, a timeout or EOF that did not end the response.
    mutating func failed() -> Action {
        switch state {
        case .active:
            state = .closed
            body = nil
            clearPipeline()
            return .failExchange
        case .connecting, .idle:
            state = .closed
            return .close
        case .closed:
            return .none
        }
    }

    /// The pool or the task wants the connection gone (idle timeout, cancellation, shutdown).
    mutating func closeRequested() -> Action {
        guard state != .closed else { return .none }
        state = .closed
        body = nil
        clearPipeline()
        return .close
    }
}
