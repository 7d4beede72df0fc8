import CUV
import DequeModule
import Foundation
import UVHTTP1

/// The I/O shell of one HTTP/1.1 connection: an established transport (TCP, maybe a tunnel and
/// TLS: `TransportConnector` made it), a response decoder and the connection state machine.
/// Each callback feeds the machine and performs the action it returns; `perform` is the only
/// place that acts. The connection is its one exchange's `Exchange`.
///
/// Loop-confined. Owned by its pool from `start()` until it reports `connectionClosed`.
///
/// Stored properties opt out of runtime exclusivity checks: only the loop thread touches them,
/// and the state machines rule out re-entrant mutation. The checks cost more per request than
/// the work they guard.
final class HTTP1Connection {
    /// The pool's number for this connection.
    let id: Int
    private let loop: EventLoop
    /// Strong, though the pool holds its connections: the pool lets a connection go when it
    /// reports its close (or closes it in `closeAll`), which ends the cycle, and an unowned
    /// reference would cost a checked load at every report (one per request).
    private let owner: HTTP1ConnectionOwner
    /// The stack the connector established: TCP, a proxy's tunnel, TLS.
    @exclusivity(unchecked) private var transport: StreamTransport
    private let decoder: ResponseParser
    @exclusivity(unchecked) private var machine = HTTP1ConnectionStateMachine()
    @exclusivity(unchecked) private var timer: LoopTimer?
    /// When an idle connection should close (the pool's idle timeout).
    @exclusivity(unchecked) private var idleDeadline: UInt64 = .max
    /// When an idle connection gives its transport's spare memory back (TLS record buffers).
    @exclusivity(unchecked) private var memoryReleaseDeadline: UInt64 = .max
    /// The decoder handed on the response's end during the current feed or finish.
    @exclusivity(unchecked) private var decodedEnd = false
    @exclusivity(unchecked) private var reportedReady = false
    @exclusivity(unchecked) private var reportedEnd = false

    /// The task running on this connection, if any. A strong reference, cleared whenever the
    /// exchange ends, fails or is aborted (a weak one would cost a side table per task).
    @exclusivity(unchecked) private(set) var exchange: ExchangeDelegate?
    /// Whether the exchange in flight had received any response byte.
    @exclusivity(unchecked) private var responseStarted = false
    /// Copies the exchange's bytes for its request's `WireCapture`; nil (most exchanges) costs
    /// a check per write and read. Set by `record(with:)` just before `execute`, cleared when
    /// the exchange ends, so it is nil between exchanges.
    @exclusivity(unchecked) private var recorder: WireExchangeRecorder?

    // A streamed request body (nil / empty while the body goes with the head).
    /// Reads the exchange's body on worker threads; cancelled when the exchange ends.
    @exclusivity(unchecked) private var bodyReader: RequestBodyReader?
    /// A chunk read ahead, waiting for the write in flight (the machine's `chunkReady`).
    @exclusivity(unchecked) private var readyChunk: [UInt8] = []
    @exclusivity(unchecked) private var readyChunkBodyCount = 0
    /// Body bytes in the write in flight (0 while the head is written).
    @exclusivity(unchecked) private var writingBodyCount = 0
    /// Body bytes written so far, for upload progress.
    @exclusivity(unchecked) private var bodyBytesSent: Int64 = 0
    /// Why the body failed, for the machine's `failExchange`.
    @exclusivity(unchecked) private var bodyError: RequestBodyError?
    /// `Expect: 100-continue`: when the body stops waiting for the server's 100 and goes anyway
    /// (loop milliseconds); .max when no body waits.
    @exclusivity(unchecked) private var continueDeadline: UInt64 = .max
    /// How long a body waits for `100 Continue` before it is sent anyway: curl's one second. A
    /// server that knows the expectation answers at once; one that ignores it (HTTP/1.0, some
    /// proxies) would otherwise stall the request until a timeout.
    static let continueTimeoutMilliseconds: UInt64 = 1000

    /// When each phase of opening this connection happened (task metrics).
    @exclusivity(unchecked) private(set) var timings: ConnectTimings
    /// The remote address as text ("127.0.0.1"), made once per connection.
    var remoteAddressText: String? { timings.remoteAddressText() }
    /// For a session that logs or measures: who is told why it closes (ConnectionObserver.swift);
    /// nil otherwise.
    @exclusivity(unchecked) var observation: (any ConnectionObserver)?
    /// Bytes written and read for the exchange in flight (or the last one).
    @exclusivity(unchecked) private(set) var exchangeBytesWritten: Int64 = 0
    @exclusivity(unchecked) private(set) var exchangeBytesRead: Int64 = 0

    // Pipelining (`executePipelined`; nothing here is touched unless the pool pipelines).
    /// Requests pipelined behind the exchange in flight, oldest first: the order their responses
    /// come in.
    @exclusivity(unchecked) private var pipeline = Deque<HTTP1PipelinedExchange>()
    /// The exchange in flight when it is a pipelined one; nil when it is the connection's own.
    @exclusivity(unchecked) private var answering: HTTP1PipelinedExchange?
    /// What the pool was told about pipelining onto this connection.
    @exclusivity(unchecked) private var pipelining = PipeliningOffer.undecided
    /// The last response head said HTTP/1.1 (kept only until `pipelining` is decided).
    @exclusivity(unchecked) private var lastHeadIsHTTP11 = false
    /// A response to a pipelined request has ended here.
    @exclusivity(unchecked) private var answeredPipelined = false

    enum PipeliningOffer: UInt8 {
        /// No response has ended yet.
        case undecided
        /// The server answered with HTTP/1.1 and kept the connection: the pool may pipeline.
        case offered
        /// Never (an HTTP/1.0 server), or no longer (the connection is closing, or a pipelined
        /// request was abandoned).
        case withdrawn
    }

    /// Over `transport`, established (`TransportConnector`) and not yet reading.
    init(id: Int, loop: EventLoop, owner: HTTP1ConnectionOwner, transport: StreamTransport, timings: ConnectTimings,
         decoderLimits: ResponseParser.Options) {
        loop.assertInLoop()
        self.id = id
        self.loop = loop
        self.owner = owner
        self.transport = transport
        self.timings = timings
        self.decoder = ResponseParser(options: decoderLimits)
    }

    /// The TLS transport, for https connections (session and certificate facts for metrics).
    var tlsTransport: TLSTransport? { transport as? TLSTransport }

    /// Whether this connection has served a request before the one in flight.
    var isReused: Bool { machine.isReused }
    /// Whether the next request will be on a reused connection (before `execute`).
    var hasServedRequests: Bool { machine.hasServedRequests }
    var isClosed: Bool { machine.state == .closed }

    // MARK: Starting

    /// Takes over the transport and reads, idle too: that is how a server's close is noticed.
    func start() {
        transport.delegate = self
        timer = LoopTimer(loop: loop) { [unowned self] in self.timerFired() }
        perform(machine.connected())
    }

    private func timerFired() {
        switch machine.state {
        case .connecting:
            break
        case .idle:
            // The pool's idle timeout, unless this is an early firing left from an exchange.
            let now = LoopTimer.now(loop)
            if now >= memoryReleaseDeadline {
                memoryReleaseDeadline = .max
                transport.releaseIdleMemory()
            }
            if now >= idleDeadline {
                observation?.noteCloseReason("idle timeout")
                perform(machine.closeRequested())
            } else if min(idleDeadline, memoryReleaseDeadline) != .max {
                // (With no idle timeout, a release still to come needs the timer too.)
                timer?.arm(at: min(idleDeadline, memoryReleaseDeadline))
            }
        case .active:
            if continueDeadline != .max && LoopTimer.now(loop) >= continueDeadline {
                // No 100 in time: send the body anyway (RFC 9110 §10.1.1 lets a client).
                continueDeadline = .max
                perform(machine.continueToBody())
            }
            // One timer per connection serves the exchange's deadlines too: arming a live libuv
            // timer is a heap update, while a timer per task would be a handle per task.
            exchange?.exchangeTimerFired()
            // Pipelined requests have deadlines of their own (a walk over a copy: a deadline
            // that passed may close the connection and empty the queue).
            if !pipeline.isEmpty {
                for pipelined in Array(pipeline) { pipelined.delegate?.exchangeTimerFired() }
            }
            if continueDeadline != .max { timer?.armNoLaterThan(continueDeadline) }
        case .closed:
            break
        }
    }

    /// Fires `exchangeTimerFired` at `deadline` (loop milliseconds) unless re-armed first.
    func armExchangeTimer(at deadline: UInt64) {
        armTimer(noLaterThan: deadline)
    }

    /// `timer?.armNoLaterThan(deadline)`, decided here: most requests' deadlines come after the
    /// one the timer holds (see `TaskRunner.armTimer`), and then neither the call nor the
    /// timer's retain for it happens.
    @inline(__always)
    private func armTimer(noLaterThan deadline: UInt64) {
        guard let armed = timer?.armedDeadline, deadline < armed else { return }
        timer?.arm(at: deadline)
    }

    // MARK: Exchanges

    /// Runs one request. `request` holds the encoded head and body, or, with `body`, only the
    /// head: the body then follows in chunks that `body` reads; with `expectsContinue`, only once
    /// the server answered `100 Continue` (or did not answer within a second).
    func execute(_ request: [UInt8], isHEAD: Bool, body: RequestBodyReader? = nil, expectsContinue: Bool = false,
                 for delegate: ExchangeDelegate) {
        loop.assertInLoop()
        // The timer may still be armed for the idle timeout; an early firing is re-checked.
        idleDeadline = .max
        memoryReleaseDeadline = .max
        exchange = delegate
        exchangeBytesWritten = Int64(request.count)
        exchangeBytesRead = 0
        responseStarted = false
        reportedEnd = false
        decoder.expectResponse(toHEAD: isHEAD)
        guard let body else {
            perform(machine.execute(), request: request)
            return
        }
        bodyReader = body
        bodyBytesSent = 0
        bodyError = nil
        body.onChunk = { [unowned self] chunk in self.bodyChunkArrived(chunk) }
        perform(machine.execute(streamingBody: true, expectsContinue: expectsContinue), request: request)
    }

    /// Records the next exchange's bytes (`execute`'s) with `recorder`. A separate call, made
    /// only for captured requests, so that `execute` takes and stores nothing more for others.
    func record(with recorder: WireExchangeRecorder) {
        self.recorder = recorder
    }

    /// Stops reading (the task was suspended); the kernel and TCP flow control hold the rest.
    func pauseReading() { transport.stopReading() }

    /// Reads again after `pauseReading`.
    func resumeReading() { if !isClosed { transport.startReading() } }

    /// Whether the body of the response in flight ends only when the connection does (no
    /// Content-Length, not chunked).
    var responseBodyEndsWithConnection: Bool { decoder.isReadingBodyUntilEOF }

    /// Abandons the exchange in flight (cancellation, timeout) and closes. The delegate is not
    /// told: the task that asked already knows.
    func abort() {
        observation?.noteCloseReason("its exchange was abandoned (cancelled, timed out, or a redirect's body not read)")
        exchange = nil
        answering?.delegate = nil
        recorder = nil
        perform(machine.closeRequested(), reset: responseStarted)
    }

    /// Starts the idle timer (the pool parked this connection).
    func parkIdle(timeout: Double) {
        // Scratch that a large head grew goes back at once: the connection may idle for long.
        decoder.releaseIdleMemory()
        let now = LoopTimer.now(loop)
        idleDeadline = LoopDuration.deadline(now, plus: LoopDuration.clamped(timeout))
        var wake = idleDeadline
        if transport is TLSTransport {
            // A TLS connection keeps OpenSSL's record buffers (about 34 KiB) from one exchange
            // to the next, which saves allocating and freeing both per request; once it has
            // been idle for a while it gives them back, so idle connections stay small.
            memoryReleaseDeadline = LoopDuration.deadline(now, plus: Self.memoryReleaseDelay)
            wake = min(wake, memoryReleaseDeadline)
        }
        armTimer(noLaterThan: wake)
    }

    /// How long an idle connection keeps its transport's spare memory, in milliseconds: long
    /// enough to span the gap between a response and the next request of a busy client.
    static let memoryReleaseDelay: UInt64 = 1_000

    /// Closes an idle connection (pool shutdown or making room).
    func close() {
        perform(machine.closeRequested())
    }

    // MARK: Pipelining

    /// Whether no exchange runs here: the pool gives the connection itself to the next request;
    /// otherwise a request it adds is pipelined (`makePipelinedExchange`).
    var isIdle: Bool { machine.state == .idle }

    /// An exchange for a request pipelined behind the ones in flight.
    func makePipelinedExchange() -> HTTP1PipelinedExchange {
        HTTP1PipelinedExchange(connection: self)
    }

    /// Whether `pipelined`'s response is the one being read.
    func isAnswering(_ pipelined: HTTP1PipelinedExchange) -> Bool { answering === pipelined }

    /// Writes `pipelined`'s request behind those in flight; its response is read once theirs
    /// have ended. Only requests whose bodies go with their heads are pipelined.
    func executePipelined(_ pipelined: HTTP1PipelinedExchange, request: [UInt8], isHEAD: Bool, body: RequestBodyReader?,
                          expectsContinue: Bool, for delegate: ExchangeDelegate) {
        loop.assertInLoop()
        precondition(body == nil && !expectsContinue, "a request with a streamed body or an expectation was pipelined")
        guard machine.acceptsPipelinedRequest else {
            // The pool withdraws a closing connection before anyone hears of the close, so
            // this is not expected; answered as an unanswered request, which is sent again.
            delegate.exchangeFailed(.closedWithoutResponse,
                                    context: ExchangeFailureContext(onReusedConnection: true, responseStarted: false, unansweredInPipeline: true))
            return
        }
        pipelined.delegate = delegate
        pipelined.isHEAD = isHEAD
        pipelined.bytesWritten = Int64(request.count)
        pipeline.append(pipelined)
        perform(machine.pipeline(), request: request)
    }

    func pausePipelined(_ pipelined: HTTP1PipelinedExchange) {
        if answering === pipelined { pauseReading() } else { pipelined.isPaused = true }
    }

    func resumePipelined(_ pipelined: HTTP1PipelinedExchange) {
        if answering === pipelined { resumeReading() } else { pipelined.isPaused = false }
    }

    /// The task gave up on `pipelined`. Its response, when it is the one being read, goes with
    /// the connection (as for any exchange). Before its turn the connection cannot skip it:
    /// nothing more is pipelined here, the responses before it are still read, and the
    /// connection closes when its turn comes, sending those behind it elsewhere.
    func abortPipelined(_ pipelined: HTTP1PipelinedExchange) {
        if answering === pipelined {
            abort()
            return
        }
        guard pipelined.delegate != nil else { return }
        pipelined.delegate = nil
        pipelined.recorder = nil
        pipelined.isAbandoned = true
        withdrawPipelining()
    }

    /// The exchange in flight ended with the next pipelined response to come: the oldest
    /// pipelined request becomes the exchange in flight.
    private func answerNext() {
        if let finished = answering { endAnswering(finished) }
        let next = pipeline.removeFirst()
        answering = next
        guard let delegate = next.delegate, !next.isAbandoned else {
            answering = nil
            observation?.noteCloseReason("a pipelined request was abandoned before its response")
            perform(machine.closeRequested())
            return
        }
        exchange = delegate
        recorder = next.recorder
        exchangeBytesWritten = next.bytesWritten
        exchangeBytesRead = 0
        responseStarted = false
        reportedEnd = false
        decoder.expectResponse(toHEAD: next.isHEAD)
        if next.isPaused { transport.stopReading() } else { transport.startReading() }
        owner.connectionReleased(self)
    }

    /// `finished`'s response ended: its counts stay for its task, the connection forgets it.
    private func endAnswering(_ finished: HTTP1PipelinedExchange) {
        answeredPipelined = true
        finished.bytesRead = exchangeBytesRead
        finished.delegate = nil
        finished.recorder = nil
        answering = nil
    }

    /// The first response ended on a kept-alive connection: an HTTP/1.1 server may be sent
    /// pipelined requests (RFC 9112 §9.3.2); an HTTP/1.0 one is not.
    private func decidePipelining() {
        pipelining = lastHeadIsHTTP11 ? .offered : .withdrawn
        if pipelining == .offered { owner.connectionMayPipeline(self) }
    }

    /// No more requests are pipelined onto this connection.
    private func withdrawPipelining() {
        guard pipelining == .offered else {
            pipelining = .withdrawn
            return
        }
        pipelining = .withdrawn
        owner.connectionStopsPipelining(self)
    }

    // MARK: Acting

    private func perform(_ action: HTTP1ConnectionStateMachine.Action, request: [UInt8] = [], reset: Bool = false) {
        switch action {
        case .none:
            break
        case .connectionReady:
            reportedReady = true
            // Read while idle too: that is how a server's close of an idle connection is noticed.
            transport.startReading()
        case .sendRequest:
            recorder?.wrote(request)
            switch transport.write(request) {
            case .written:
                requestWritten()
            case .pending:
                break
            case .failed(let code):
                failed(.writeFailed(status: code))
            }
        case .sendHeadAndReadBody:
            // The first chunk is read while the head is written.
            bodyReader?.readNext()
            writingBodyCount = 0
            writeStreamed(request)
        case .sendHeadAwaitingContinue:
            writingBodyCount = 0
            continueDeadline = LoopTimer.now(loop) &+ Self.continueTimeoutMilliseconds
            timer?.armNoLaterThan(continueDeadline)
            writeStreamed(request)
        case .readFirstBodyChunk:
            continueDeadline = .max
            bodyReader?.readNext()
        case .writeBodyChunk(let readNext):
            if readNext { bodyReader?.readNext() }
            var chunk: [UInt8] = []
            swap(&chunk, &readyChunk)
            writingBodyCount = readyChunkBodyCount
            writeStreamed(chunk)
        case .bodyComplete:
            requestWritten()
        case .exchangeFinished(let reusable):
            let delegate = exchange
            exchange = nil
            if let recorder {
                self.recorder = nil
                recorder.completed()
            }
            endRequestBody()
            // Before the task hears of it: what it does next (a redirect) must not be
            // pipelined onto a connection that closes.
            if !reusable { withdrawPipelining() }
            delegate?.exchangeFinished()
            if let finished = answering { endAnswering(finished) }
            if reusable {
                // Idle, it reads (to notice a close), and its next exchange needs reading on:
                // a consumer's pause may have stopped it in the read that ended the response.
                transport.startReading()
                owner.connectionReleased(self)
                // After the release: a waiter takes the idle connection first, then others
                // may be pipelined behind it.
                if pipelining == .undecided && !isClosed { decidePipelining() }
            } else {
                observation?.noteCloseReason("the response did not allow keep-alive")
                tearDown(reset: false)
                reportClosed(madeProgress: true)
            }
        case .sendPipelinedRequest:
            writePipelined(request)
        case .pipelinedRequestWritten(let position):
            pipeline[position].delegate?.exchangeRequestWritten()
        case .exchangeFinishedWithNext:
            finishedWithNext()
        case .failExchange:
            // From the body (the socket's failures go through failed(_:), which has the error).
            failExchange(.requestBody(bodyError ?? .unexplained))
        case .close:
            tearDown(reset: reset)
            if reportedReady { reportClosed(madeProgress: false) }
        }
    }

    /// Writes the request just pipelined (`sendPipelinedRequest`).
    @inline(never)
    private func writePipelined(_ request: [UInt8]) {
        pipeline.last?.recorder?.wrote(request)
        switch transport.write(request) {
        case .written:
            perform(machine.writeFinished())
        case .pending:
            break
        case .failed(let code) where code == UVError.brokenPipe || code == UVError.connectionReset:
            // The server closed or reset the connection (nginx does when a keep-alive limit
            // ends it with requests unread). Its answers to earlier requests may still wait in
            // the kernel's buffer: nothing more is written here, and the read side takes them;
            // the end of the connection, which it is bound to see, hands back what stays
            // unanswered, this one too.
            withdrawPipelining()
        case .failed(let code):
            failed(.writeFailed(status: code))
        }
    }

    /// The exchange in flight ended and the oldest pipelined request's response comes next
    /// (`exchangeFinishedWithNext`).
    @inline(never)
    private func finishedWithNext() {
        let delegate = exchange
        exchange = nil
        if let recorder {
            self.recorder = nil
            recorder.completed()
        }
        delegate?.exchangeFinished()
        answerNext()
    }

    private func requestWritten() {
        exchange?.exchangeRequestWritten()
        perform(machine.requestWritten())
    }

    /// Tells the pool the connection is closed, then hands back the pipelined requests that
    /// will get no response here (after, so that none is pipelined onto this one again).
    /// `madeProgress`: the exchange in flight finished.
    private func reportClosed(madeProgress: Bool) {
        owner.connectionClosed(self)
        guard !pipeline.isEmpty else { return }
        let unanswered = pipeline
        pipeline.removeAll()
        // Exchanges that finished here before: the connection served them, so the server is
        // making progress and sending these again is no loop.
        let finished = machine.requestCount - unanswered.count - (madeProgress ? 0 : 1)
        for pipelined in unanswered {
            guard let delegate = pipelined.delegate else { continue }
            pipelined.delegate = nil
            pipelined.recorder = nil
            delegate.exchangeFailed(.closedWithoutResponse,
                                    context: ExchangeFailureContext(onReusedConnection: true, responseStarted: false,
                                                                    unansweredInPipeline: true, connectionMadeProgress: finished > 0))
        }
    }

    /// Fails the exchange in flight (if any) with `error` and closes.
    private func failed(_ error: ExchangeError) {
        observation?.noteCloseReason(error)
        // The server broke off, or sent what could not be decoded, with pipelined requests
        // outstanding and none answered yet: it may not handle pipelining, so its origin gets
        // no more. One that answered some before (a keep-alive request limit, as nginx's
        // keepalive_requests, can end a connection with requests in flight) keeps it.
        if (answering != nil || !pipeline.isEmpty) && !answeredPipelined { owner.connectionMisbehavedWhilePipelining(self) }
        let action = machine.failed()
        switch action {
        case .failExchange:
            failExchange(error)
        case .close:
            tearDown(reset: false)
            reportClosed(madeProgress: false)
        default:
            perform(action)
        }
    }

    /// Tells the exchange it failed with `error`, and closes.
    private func failExchange(_ error: ExchangeError) {
        let delegate = exchange
        exchange = nil
        recorder = nil
        // A pipelined request with no byte of its response is as unanswered as those behind it;
        // and being pipelined, it came after an exchange this connection finished.
        let unanswered = answering != nil && !responseStarted
        tearDown(reset: false)
        delegate?.exchangeFailed(error, context: ExchangeFailureContext(onReusedConnection: machine.isReused, responseStarted: responseStarted,
                                                                        unansweredInPipeline: unanswered,
                                                                        connectionMadeProgress: unanswered))
        reportClosed(madeProgress: false)
    }

    private func tearDown(reset: Bool) {
        withdrawPipelining()
        answering?.delegate = nil
        answering = nil
        endRequestBody()
        timer?.close()
        timer = nil
        transport.close(reset: reset)
    }

    // MARK: Streamed request bodies

    /// Writes the head or a chunk of a streamed request; its end feeds `bodyWriteFinished`.
    private func writeStreamed(_ bytes: [UInt8]) {
        if writingBodyCount > 0 { exchangeBytesWritten += Int64(bytes.count) }
        if bytes.isEmpty {
            bodyWriteFinished()
            return
        }
        recorder?.wrote(bytes)
        switch transport.write(bytes) {
        case .written:
            bodyWriteFinished()
        case .pending:
            break
        case .failed:
            // A server that answers early (a 413, a 501) and closes makes the write fail before
            // its response is read; the kernel still holds that response. So writing stops and
            // the read side decides: the response if it is complete, else EOF or reset fails the
            // exchange (the timeouts bound the wait).
            perform(machine.bodyWriteFailed())
        }
    }

    private func bodyWriteFinished() {
        if writingBodyCount > 0 {
            bodyBytesSent += Int64(writingBodyCount)
            writingBodyCount = 0
            exchange?.exchangeSentBody(totalBytes: bodyBytesSent)
        }
        perform(machine.bodyWriteFinished())
    }

    private func bodyChunkArrived(_ chunk: RequestBodyReader.Chunk) {
        switch chunk {
        case .data(let bytes, let bodyCount, let isLast, let excess):
            readyChunk = bytes
            readyChunkBodyCount = bodyCount
            if let excess { bodyError = excess }
            perform(machine.bodyChunkRead(isLast: isLast, excess: excess != nil))
            // Written now, or kept for after the write in flight, or no longer wanted.
            if !machine.holdsReadyChunk { readyChunk = [] }
        case .failed(let error):
            bodyError = error
            perform(machine.bodyReadFailed())
        }
    }

    /// Stops the body's reads (the exchange ended) and drops what it had read ahead.
    private func endRequestBody() {
        continueDeadline = .max
        guard let reader = bodyReader else { return }
        bodyReader = nil
        reader.cancel()
        readyChunk = []
        bodyError = nil
    }
}

extension HTTP1Connection: ResponseParserConsumer {
    // Called by the decoder from inside `feed`/`finish`: each piece goes straight to the exchange
    // (which may abort the connection meanwhile: `exchange` is then nil and the rest is dropped).
    // The end only sets a flag, acted on once the decoder has returned.

    func parserReceivedInterim(_ head: ResponseHead) {
        // Other 1xx (102, 103) say nothing about the body.
        if head.status == 100 { perform(machine.continueToBody()) }
    }

    func parserReceivedHead(_ head: ResponseHead) {
        if pipelining == .undecided { lastHeadIsHTTP11 = head.versionMinor >= 1 }
        if machine.isAwaitingContinue {
            // The server answered without a 100: it does not want the body.
            continueDeadline = .max
            perform(machine.finalHeadReceived())
        }
        exchange?.exchangeReceivedHead(head, bodyLength: decoder.announcedBodyLength)
    }

    func parserReceivedBody(_ bytes: UnsafeRawBufferPointer) {
        exchange?.exchangeReceivedBody(bytes)
    }

    func parserReceivedEnd(trailers: ReceivedFields) {
        decodedEnd = true
    }
}

extension HTTP1Connection: TransportDelegate {
    func transportDidConnect(_ transport: StreamTransport) {
        // Established before the connection took it over.
    }

    func transport(_ transport: StreamTransport, didFailToConnect code: Int32) {
        failed(.socketFailed(status: code))
    }

    func transport(_ transport: StreamTransport, didRead bytes: UnsafeRawBufferPointer) {
        guard exchange != nil, !reportedEnd else {
            // Bytes nobody asked for: the stream is out of step, so the connection cannot be
            // trusted with another request.
            failed(.bytesOutsideResponse(count: bytes.count))
            return
        }
        let consumed = feedResponse(bytes)
        if consumed < bytes.count { beginNextResponses(UnsafeRawBufferPointer(rebasing: bytes[consumed...])) }
    }

    /// Feeds `bytes` to the response in flight and acts on its end. Returns how many bytes it
    /// took: all of them, unless the response ended with bytes left over (which begin the next
    /// pipelined response, or belong to no request).
    @inline(__always)
    private func feedResponse(_ bytes: UnsafeRawBufferPointer) -> Int {
        responseStarted = true
        exchangeBytesRead &+= Int64(bytes.count)
        let consumed: Int
        decodedEnd = false
        do {
            consumed = try decoder.feed(bytes, to: self)
        } catch {
            // What could not be decoded was still received: an archive shows it.
            recorder?.read(bytes)
            failed(.decoding(error))
            return bytes.count
        }
        // Only this response's bytes: any left over belong to the next response or none.
        if let recorder { recorder.read(UnsafeRawBufferPointer(rebasing: bytes[0..<consumed])) }
        guard decodedEnd else { return bytes.count }
        reportedEnd = true
        guard consumed < bytes.count else {
            perform(machine.responseEnded(keepAlive: decoder.keepAlive))
            return bytes.count
        }
        exchangeBytesRead -= Int64(bytes.count - consumed)
        // Leftover bytes with no pipelined request behind belong to no request: do not reuse
        // the connection. With one, they begin its response.
        perform(machine.responseEnded(keepAlive: decoder.keepAlive && !pipeline.isEmpty))
        return consumed
    }

    /// Bytes left after a response: the responses to pipelined requests, one after another,
    /// while the next one is in flight.
    @inline(never)
    private func beginNextResponses(_ bytes: UnsafeRawBufferPointer) {
        var rest = bytes
        while exchange != nil, !reportedEnd {
            let consumed = feedResponse(rest)
            guard consumed < rest.count else { return }
            rest = UnsafeRawBufferPointer(rebasing: rest[consumed...])
        }
    }

    func transportDidReadEOF(_ transport: StreamTransport, cleanly: Bool) {
        if !cleanly && exchange != nil && !reportedEnd && decoder.isReadingBodyUntilEOF {
            // Without close_notify, the end of the connection proves nothing about the end of
            // the body: anyone on the path can send a FIN.
            failed(.uncleanTLSEnd)
            return
        }
        guard exchange != nil, !reportedEnd else {
            // The server closed an idle connection (or after a response we already have).
            failed(.closedWithoutResponse)
            return
        }
        decodedEnd = false
        do {
            try decoder.finish(to: self)
        } catch {
            failed(.decoding(error))
            return
        }
        if decodedEnd {
            reportedEnd = true
            perform(machine.responseEnded(keepAlive: false))
        } else {
            failed(.closedInsideResponse)
        }
    }

    func transport(_ transport: StreamTransport, didFailWith code: Int32) {
        failed(.socketFailed(status: code))
    }

    func transport(_ transport: StreamTransport, didFail error: TransportError) {
        failed(.transport(error))
    }

    func transportDidFinishWriting(_ transport: StreamTransport) {
        if bodyReader != nil {
            bodyWriteFinished()
        } else if pipeline.isEmpty {
            requestWritten()
        } else if case .active(requestWritten: false, _, _) = machine.state {
            // Writes finish in order: the exchange in flight's before those pipelined behind.
            requestWritten()
        } else {
            perform(machine.writeFinished())
        }
    }
}

extension HTTP1Connection: PooledConnection, Exchange {
    var protocolName: String { "http/1.1" }
    var connectionID: Int { id }
    var connectionObservation: (any ConnectionObserver)? { observation }
}
