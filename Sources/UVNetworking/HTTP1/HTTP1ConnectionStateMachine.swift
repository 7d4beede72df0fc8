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
struct HTTP1ConnectionStateMachine: Sendable {
    enum State: Equatable, Sendable {
        case connecting
        case idle
        case active(requestWritten: Bool, responseEnded: Bool, keepAlive: Bool)
        case closed
    }

    /// Where a streamed request body is. Exists only while an exchange with one is active and
    /// its request is not yet written.
    struct BodyStream: Equatable, Sendable {
        /// A chunk is being read (on a worker).
        var readInFlight = true
        /// The head or a chunk is being written.
        var writeInFlight = true
        /// A chunk has been read and waits for the write in flight to finish.
        var chunkReady = false
        /// The last chunk has been read.
        var sourceEnded = false
        /// Fail the exchange with `bodyStreamFailed` once the last chunk is written (the stream had
        /// more bytes than its declared length: exactly the declared ones go out, then it fails).
        /// Plain flags keep this value trivially copyable, as the machine's other state.
        var failAfterLastWrite = false
        /// No more reads or writes: a final response declined the body, or a write failed (the
        /// response, if the server sent one, still ends the exchange).
        var abandoned = false
        /// `Expect: 100-continue`: the body waits for the server's go-ahead; no read has started.
        var awaitingContinue = false
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
        /// The exchange is over; the task completes. `reusable`: back to the pool, else close.
        case exchangeFinished(reusable: Bool)
        /// Fail the exchange in flight with this error and close.
        case failExchange(NetworkingError.Code)
        /// Close the socket; no exchange is affected.
        case close
    }

    private(set) var state: State = .connecting
    /// The streamed body of the exchange in flight; nil when its body went with the head.
    private(set) var body: BodyStream?
    /// How many requests this connection has been given, the current one included.
    private(set) var requestCount = 0

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
            body = BodyStream()
            return .sendHeadAndReadBody
        }
        body = BodyStream(readInFlight: false, awaitingContinue: true)
        return .sendHeadAwaitingContinue
    }

    /// Whether the body waits for `100 Continue`.
    var isAwaitingContinue: Bool { body?.awaitingContinue ?? false }

    /// The server sent `100 Continue`, or the shell's wait for it timed out: the body may go.
    /// Ignored unless the body is waiting (a late 100, a second one, a timer racing the 100).
    mutating func continueToBody() -> Action {
        guard case .active(requestWritten: false, _, _) = state, var body, body.awaitingContinue else { return .none }
        body.awaitingContinue = false
        body.readInFlight = true
        self.body = body
        return .readFirstBodyChunk
    }

    /// A final (not 1xx) response head arrived. While the body waits for `100 Continue` this is
    /// the server declining it: the body is abandoned unread and unsent, and the exchange ends
    /// when the response does (`responseEnded`).
    mutating func finalHeadReceived() -> Action {
        guard case .active(requestWritten: false, _, _) = state, var body, body.awaitingContinue else { return .none }
        body.awaitingContinue = false
        body.abandoned = true
        self.body = body
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
        guard case .active(requestWritten: false, _, _) = state, var body, body.writeInFlight else { return .none }
        body.writeInFlight = false
        if body.abandoned {
            // A final response declined the body: nothing more is written; its end ends the exchange.
            self.body = body
            return .none
        }
        if body.chunkReady {
            body.chunkReady = false
            body.writeInFlight = true
            let readNext = !body.sourceEnded
            body.readInFlight = readNext
            self.body = body
            return .writeBodyChunk(readNext: readNext)
        }
        self.body = body
        guard body.sourceEnded else { return .none }  // the next chunk is being read
        if body.failAfterLastWrite {
            self.body = nil
            state = .closed
            return .failExchange(.bodyStreamFailed)
        }
        return .bodyComplete
    }

    /// A chunk of the streamed body was read. `isLast`: the body ends with it. `excess`: the
    /// stream went past its declared length; the chunk completes that length, then the exchange
    /// fails with `bodyStreamFailed`.
    mutating func bodyChunkRead(isLast: Bool, excess: Bool = false) -> Action {
        guard case .active(requestWritten: false, _, _) = state, var body, body.readInFlight, !body.abandoned else { return .none }
        body.readInFlight = false
        if isLast {
            body.sourceEnded = true
            body.failAfterLastWrite = excess
        }
        if body.writeInFlight {
            body.chunkReady = true
            self.body = body
            return .none
        }
        body.writeInFlight = true
        body.readInFlight = !isLast
        self.body = body
        return .writeBodyChunk(readNext: !isLast)
    }

    /// Writing the streamed request failed (the server closed or reset the connection, perhaps
    /// after answering early). Nothing more is written; the exchange waits for the read side: a
    /// complete response still ends it (`responseEnded`), else EOF or an error fails it.
    mutating func bodyWriteFailed() -> Action {
        guard case .active(requestWritten: false, _, _) = state, var body else { return .none }
        body.writeInFlight = false
        body.abandoned = true
        body.chunkReady = false
        self.body = body
        return .none
    }

    /// Reading the streamed body failed (the stream threw, or ended before its declared length).
    /// Fails the exchange, unless the response already ended it.
    mutating func bodyReadFailed(_ code: NetworkingError.Code) -> Action {
        guard case .active(requestWritten: false, _, _) = state, let body, !body.abandoned else { return .none }
        return failed(code)
    }

    /// Whether the chunk the shell holds is still wanted (the machine says `chunkReady`).
    var holdsReadyChunk: Bool { body?.chunkReady ?? false }

    /// The response ended. `keepAlive`: the response allows reuse (HTTP/1.1 without
    /// `Connection: close`, or 1.0 with keep-alive) and no stray bytes followed it.
    mutating func responseEnded(keepAlive: Bool) -> Action {
        guard case .active(let requestWritten, _, _) = state else { return .none }
        // A response that ends before the request is fully written means the server did not want
        // the rest of the body. It is complete, so the exchange ends now: waiting for the write
        // in flight could mean waiting for a server that never reads. The stream is out of step,
        // so the connection is closed (Go's Transport makes the same call); closing abandons the
        // write, and a streamed body stops (a chunk read ahead is dropped, no read starts).
        return finish(keepAlive: keepAlive && requestWritten)
    }

    private mutating func finish(keepAlive: Bool) -> Action {
        body = nil
        state = keepAlive ? .idle : .closed
        return .exchangeFinished(reusable: keepAlive)
    }

    /// A socket error, a decoder error, a timeout or EOF that did not end the response.
    mutating func failed(_ code: NetworkingError.Code) -> Action {
        switch state {
        case .active:
            state = .closed
            body = nil
            return .failExchange(code)
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
        return .close
    }
}
