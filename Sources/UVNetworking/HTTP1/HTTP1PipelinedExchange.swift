/// A request pipelined on an HTTP/1.1 connection: written behind the exchange in flight, its
/// response read once every earlier one has ended. The connection's first exchange is the
/// connection itself (no object per request on the common path); each pipelined one gets one
/// of these, so that the task holding it can pause, abort and measure its own exchange.
///
/// Loop-confined. The connection keeps it from `execute` until its response ends or the
/// connection gives up on it; the task keeps it while it runs.
final class HTTP1PipelinedExchange {
    /// Strong: the connection lets go of its pipelined exchanges when they end, and the task lets
    /// go of this one when its exchange ends.
    let connection: HTTP1Connection
    /// The task, until its exchange ends, fails or is abandoned.
    @exclusivity(unchecked) var delegate: ExchangeDelegate?
    @exclusivity(unchecked) var isHEAD = false
    /// Records the request's bytes and, once its turn comes, its response's.
    @exclusivity(unchecked) var recorder: WireExchangeRecorder?
    /// The task asked to stop reading before its response's turn: applied when it comes.
    @exclusivity(unchecked) var isPaused = false
    /// The task abandoned the exchange before its response's turn (cancelled, timed out): the
    /// connection cannot skip a response it has asked for, so it closes when the turn comes.
    @exclusivity(unchecked) var isAbandoned = false
    /// Bytes of the request, and of the response once it ended.
    @exclusivity(unchecked) var bytesWritten: Int64 = 0
    @exclusivity(unchecked) var bytesRead: Int64 = 0

    init(connection: HTTP1Connection) {
        self.connection = connection
    }
}

extension HTTP1PipelinedExchange: Exchange {
    func execute(_ request: [UInt8], isHEAD: Bool, body: RequestBodyReader?, expectsContinue: Bool, for delegate: ExchangeDelegate) {
        connection.executePipelined(self, request: request, isHEAD: isHEAD, body: body, expectsContinue: expectsContinue, for: delegate)
    }

    func record(with recorder: WireExchangeRecorder) { self.recorder = recorder }
    func pauseReading() { connection.pausePipelined(self) }
    func resumeReading() { connection.resumePipelined(self) }
    func abort() { connection.abortPipelined(self) }
    func armExchangeTimer(at deadline: UInt64) { connection.armExchangeTimer(at: deadline) }
    var responseBodyEndsWithConnection: Bool { connection.isAnswering(self) && connection.responseBodyEndsWithConnection }

    var connectionID: Int { connection.id }
    var protocolName: String { connection.protocolName }
    /// Pipelined behind another request: the connection has always carried one before.
    var isReused: Bool { true }
    var hasServedRequests: Bool { true }
    var timings: ConnectTimings { connection.timings }
    var remoteAddressText: String? { connection.remoteAddressText }
    var tlsTransport: TLSTransport? { connection.tlsTransport }
    var exchangeBytesWritten: Int64 { bytesWritten }
    var exchangeBytesRead: Int64 { connection.isAnswering(self) ? connection.exchangeBytesRead : bytesRead }
    var connectionObservation: (any ConnectionObserver)? { connection.observation }
}
