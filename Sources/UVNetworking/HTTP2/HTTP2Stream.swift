import CNGHTTP2
import UVHTTP1

/// One request and its response on an HTTP/2 connection: the `Exchange` a task drives. Made by
/// the connection when the pool assigns it, opened on the wire at `execute`. Loop-confined.
///
/// Flow control is per stream: body bytes are handed to the task as they arrive, and the
/// stream's window reopens by what the task took, except while the task paused reading; then the
/// window stays shut and the server stops this stream only, while the connection's window
/// reopens at once for the other streams.
final class HTTP2Stream {
    private let connection: HTTP2Connection
    let isReused: Bool
    @exclusivity(unchecked) private(set) var streamID: Int32?
    @exclusivity(unchecked) private var delegate: ExchangeDelegate?
    @exclusivity(unchecked) private var isHEAD = false
    /// The exchange's deadline (loop milliseconds) for the connection's timer.
    @exclusivity(unchecked) var deadline: UInt64 = .max
    @exclusivity(unchecked) private var paused = false
    /// Body bytes taken while paused, whose window opens on resume.
    @exclusivity(unchecked) private var unconsumed = 0
    /// The stream's receive window, grown while the task keeps up.
    @exclusivity(unchecked) private var window = HTTP2StreamWindow(size: HTTP2StreamWindow.initial)
    @exclusivity(unchecked) private var headReceived = false
    /// Any head came, interim ones included: the server has processed the request, whatever a
    /// later GOAWAY or REFUSED_STREAM claims, so it is never replayed.
    @exclusivity(unchecked) private var answered = false
    @exclusivity(unchecked) private var ended = false
    /// Set by the connection: the server's GOAWAY says this stream was never processed.
    @exclusivity(unchecked) var neverProcessed = false
    /// Set by the connection: a GOAWAY with this error code came while the stream ran.
    @exclusivity(unchecked) var goAwayCode: UInt32?
    @exclusivity(unchecked) private var recorder: WireExchangeRecorder?
    // A streamed request body.
    @exclusivity(unchecked) private var bodyReader: RequestBodyReader?
    @exclusivity(unchecked) private var bodySource: HTTP2Session.BodySource?
    @exclusivity(unchecked) private var bodyReadInFlight = false
    @exclusivity(unchecked) private var bodyBytesRead: Int64 = 0
    @exclusivity(unchecked) private var bodyBytesReported: Int64 = 0
    @exclusivity(unchecked) private var requestWrittenReported = false
    @exclusivity(unchecked) private(set) var exchangeBytesWritten: Int64 = 0
    /// The connection's `bytesRead` when the stream opened, and when it ended (nil: running).
    @exclusivity(unchecked) private var bytesReadAtOpen: Int64 = 0
    @exclusivity(unchecked) private var bytesReadAtEnd: Int64?
    /// Bytes the connection read while the stream ran (the frames of other streams too, as
    /// URLSession counts a multiplexed transaction's).
    var exchangeBytesRead: Int64 { (bytesReadAtEnd ?? connection.bytesRead) - bytesReadAtOpen }

    /// A stream's body is read ahead at most this far beyond what was sent.
    static let bodyReadAhead = 256 << 10

    init(connection: HTTP2Connection, isReused: Bool) {
        self.connection = connection
        self.isReused = isReused
    }

    // MARK: From the connection

    func receivedHead(status: Int, block: HTTP2HeaderBlock, isFinal: Bool) {
        answered = true
        guard isFinal, !headReceived, let delegate else { return }
        headReceived = true
        connection.madeProgress = true
        let head = connection.heads.head(status: status, block: block, streams: connection.activeStreamCount)
        var length: Int64?
        if isHEAD || status == 204 || status == 304 {
            length = 0
        } else if block.known.contentLength >= 0 {
            // nghttp2 has checked it is digits and matches the DATA (RFC 9113 §8.1.1).
            length = head.headers.withField(at: block.known.contentLength) { _, value -> Int64 in
                var length: Int64 = 0
                for digit in value { length = length &* 10 &+ Int64(digit &- 0x30) }
                return length
            }
        }
        if let recorder { recorder.read(Self.http1Head(status: status, fields: head.headers)) }
        delegate.exchangeReceivedHead(head, bodyLength: length)
    }

    /// A response head in HTTP/1.1 form, for a wire capture (web archives keep HTTP/2 exchanges
    /// so, with a `WARC-Protocol: h2` field).
    static func http1Head(status: Int, fields: ReceivedFields) -> [UInt8] {
        var bytes = Array("HTTP/1.1 \(status) \(reasonPhrases[status] ?? "")\r\n".utf8)
        for index in fields.indices {
            fields.withField(at: index) { name, value in
                bytes.append(contentsOf: name)
                bytes.append(contentsOf: ": ".utf8)
                bytes.append(contentsOf: value)
                bytes.append(contentsOf: "\r\n".utf8)
            }
        }
        bytes.append(contentsOf: "\r\n".utf8)
        return bytes
    }

    func receivedData(_ bytes: UnsafeRawBufferPointer) {
        guard let delegate, !ended else { return }
        if paused {
            unconsumed += bytes.count
        } else {
            connection.consume(self, bytes.count)
            if let grown = window.taken(bytes.count) { connection.setWindow(of: self, to: grown) }
        }
        recorder?.read(bytes)
        delegate.exchangeReceivedBody(bytes)
    }

    func receivedEnd() {
        guard !ended, let delegate else { return }
        guard headReceived else {
            finishFailed(.http2(.protocolViolation("the stream ended without a final response head")))
            return
        }
        ended = true
        bytesReadAtEnd = connection.bytesRead
        self.delegate = nil
        reportRequestWritten()
        endBody()
        recorder?.completed()
        recorder = nil
        delegate.exchangeFinished()
        // The server answered before our body was all sent: stop sending it.
        if bodySource != nil { connection.reset(self) }
    }

    func closed(errorCode: UInt32, byClient: Bool) {
        guard !ended, delegate != nil else { return }
        if byClient && errorCode != 0 {
            // nghttp2 reset the stream for us: the server's response broke RFC 9113 §8.1.1.
            finishFailed(.http2(.malformedStream(stream: streamID ?? 0, code: errorCode)))
        } else if neverProcessed || errorCode == NGHTTP2_REFUSED_STREAM.rawValue {
            // Refused (RFC 9113 §8.7) or above a GOAWAY's last stream (§6.8): never processed,
            // so sent again elsewhere; unless the server had already answered it.
            if answered {
                finishFailed(.http2(.protocolViolation("the server disowned stream \(streamID ?? 0) after answering it (RFC 9113 §6.8, §8.7)")))
            } else {
                finishFailed(.http2(.streamReset(code: errorCode)), neverProcessed: true)
            }
        } else if let goAwayCode {
            finishFailed(.http2(.goAway(code: goAwayCode)))
        } else {
            finishFailed(.http2(.streamReset(code: errorCode)))
        }
    }

    func connectionFailed(_ error: ExchangeError) {
        guard !ended else { return }
        if case .closedInsideResponse = error, !answered {
            // No byte of this stream's response came: as for an HTTP/1.1 request on a
            // connection the server closed, an idempotent one may be sent again.
            finishFailed(.closedWithoutResponse, neverProcessed: neverProcessed)
            return
        }
        finishFailed(error, neverProcessed: neverProcessed && !answered)
    }

    func timerFired() {
        delegate?.exchangeTimerFired()
    }

    /// The connection took output from the session: a streamed body may read on.
    func outputTaken() {
        readBodyIfRoom()
    }

    /// The connection handed its output to the transport. Returns whether the stream still
    /// has request bytes to send (and so wants to hear of the next write).
    func countWritten() -> Bool {
        reportRequestWritten()
        return !requestWrittenReported && !ended
    }

    private func finishFailed(_ error: ExchangeError, neverProcessed: Bool = false) {
        ended = true
        bytesReadAtEnd = bytesReadAtEnd ?? connection.bytesRead
        let delegate = self.delegate
        self.delegate = nil
        endBody()
        recorder = nil
        delegate?.exchangeFailed(error, context: ExchangeFailureContext(onReusedConnection: isReused, responseStarted: headReceived,
                                                                        neverProcessed: neverProcessed,
                                                                        connectionMadeProgress: connection.madeProgress))
    }

    // MARK: Request bodies

    private func reportRequestWritten() {
        guard !requestWrittenReported, streamID != nil else { return }
        if bodySource == nil || bodyReader == nil {
            guard bodySource == nil || bodySource!.remaining == 0 && !bodySource!.isOpen else { return }
            requestWrittenReported = true
            delegate?.exchangeRequestWritten()
            return
        }
        // Streamed: report what left so far; written once the source is drained and closed.
        if let source = bodySource {
            let sent = bodyBytesRead - Int64(source.remaining)
            if sent > bodyBytesReported {
                bodyBytesReported = sent
                delegate?.exchangeSentBody(totalBytes: sent)
            }
            if !source.isOpen && source.remaining == 0 {
                requestWrittenReported = true
                delegate?.exchangeRequestWritten()
            }
        }
    }

    private func readBodyIfRoom() {
        guard let reader = bodyReader, let source = bodySource, source.isOpen, !bodyReadInFlight,
              source.remaining < Self.bodyReadAhead else { return }
        bodyReadInFlight = true
        reader.readNext()
    }

    private func bodyChunkArrived(_ chunk: RequestBodyReader.Chunk, chunked: Bool) {
        bodyReadInFlight = false
        guard let source = bodySource, !ended else { return }
        switch chunk {
        case .data(let bytes, let bodyCount, let isLast, let excess):
            if let excess {
                connection.reset(self)
                finishFailed(.requestBody(excess))
                return
            }
            if bodyCount > 0 {
                // The capture keeps the HTTP/1.1 form the head announced (chunked framing too).
                recorder?.wrote(bytes)
                if chunked {
                    // Our own chunked framing: the size line, then the data.
                    let start = (bytes.firstIndex(of: 0x0A) ?? -1) + 1
                    source.bytes.append(contentsOf: bytes[start..<(start + bodyCount)])
                } else {
                    source.bytes.append(contentsOf: bytes)
                }
                bodyBytesRead += Int64(bodyCount)
            }
            if isLast { source.isOpen = false }
            connection.bodyAppended(self)
            readBodyIfRoom()
        case .failed(let error):
            connection.reset(self)
            finishFailed(.requestBody(error))
        }
    }

    private func endBody() {
        if let bodyReader {
            bodyReader.cancel()
            connection.bodyEnded(self)
        }
        bodyReader = nil
        bodySource = nil
    }
}

extension HTTP2Stream: Exchange {
    func execute(_ request: [UInt8], isHEAD: Bool, body: RequestBodyReader?, expectsContinue: Bool, for delegate: ExchangeDelegate) {
        self.delegate = delegate
        self.isHEAD = isHEAD
        if let body {
            bodyReader = body
            let chunked = body.isChunked
            body.onChunk = { [unowned self] chunk in self.bodyChunkArrived(chunk, chunked: chunked) }
        }
        exchangeBytesWritten = Int64(request.count)
        bytesReadAtOpen = connection.bytesRead
        do {
            let opened = try connection.open(self, request: request, streamed: body != nil)
            streamID = opened.stream
            bodySource = opened.body
        } catch {
            endBody()
            // A head HTTP/2 cannot carry was never sent: no replay would fare better.
            if case .unsupportedRequest = error {
                finishFailed(.http2(error))
            } else {
                finishFailed(.http2(error), neverProcessed: true)
            }
            return
        }
        recorder?.wrote(request)
        if body != nil { connection.bodyStreams(self) }
        readBodyIfRoom()
    }

    func record(with recorder: WireExchangeRecorder) {
        self.recorder = recorder
    }

    func pauseReading() {
        paused = true
        window.consumerStopped()
    }

    func resumeReading() {
        guard paused else { return }
        paused = false
        if unconsumed > 0 {
            connection.consume(self, unconsumed)
            unconsumed = 0
        }
    }

    func abort() {
        guard !ended else { return }
        ended = true
        bytesReadAtEnd = connection.bytesRead
        delegate = nil
        endBody()
        recorder = nil
        connection.reset(self)
    }

    func armExchangeTimer(at deadline: UInt64) {
        if deadline < self.deadline { self.deadline = deadline }
        connection.armTimer(noLaterThan: deadline)
    }

    var responseBodyEndsWithConnection: Bool { false }
    var connectionID: Int { connection.id }
    var protocolName: String { "h2" }
    var hasServedRequests: Bool { isReused }
    var timings: ConnectTimings { connection.timings }
    var remoteAddressText: String? { connection.remoteAddressText }
    var tlsTransport: TLSTransport? { connection.tlsTransport }
    var connectionObservation: (any ConnectionObserver)? { connection.observation }
}

/// RFC 9110 §15's reason phrases for the common statuses, for HTTP/1.1-form captures of HTTP/2
/// responses (which carry none); others get an empty one, which HTTP/1.1 allows.
private let reasonPhrases: [Int: String] = [
    100: "Continue", 103: "Early Hints", 200: "OK", 201: "Created", 202: "Accepted", 204: "No Content", 206: "Partial Content",
    301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified", 307: "Temporary Redirect",
    308: "Permanent Redirect", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
    405: "Method Not Allowed", 408: "Request Timeout", 410: "Gone", 413: "Content Too Large", 416: "Range Not Satisfiable",
    429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
    504: "Gateway Timeout",
]
