/// One HTTP/1.1 connection's life, as a value: whether it may carry another request once the
/// current exchange ends. The shell (`HTTP1Connection`) feeds it what the socket and the decoder
/// report and performs the returned action.
///
/// States and their legal moves:
/// - `connecting`: connected → `idle`; failure → `closed`.
/// - `idle`: in the pool, reading only to notice the server closing. execute → `active`;
///   peer close, error or close request → `closed`.
/// - `active`: one exchange in flight. It ends when BOTH the request is written and the response
///   has ended (a server may answer before reading the whole body); then → `idle` if both sides
///   allow keep-alive, else → `closed`. Any failure → `closed`.
/// - `closed`: terminal.
struct HTTP1ConnectionStateMachine: Sendable {
    enum State: Equatable, Sendable {
        case connecting
        case idle
        case active(requestWritten: Bool, responseEnded: Bool, keepAlive: Bool)
        case closed
    }

    enum Action: Equatable, Sendable {
        case none
        /// Connected: hand the connection to the pool.
        case connectionReady
        /// Write the request that was just assigned.
        case sendRequest
        /// The exchange is over; the task completes. `reusable`: back to the pool, else close.
        case exchangeFinished(reusable: Bool)
        /// Fail the exchange in flight with this error and close.
        case failExchange(NetworkingError.Code)
        /// Close the socket; no exchange is affected.
        case close
    }

    private(set) var state: State = .connecting
    /// How many requests this connection has been given, the current one included.
    private(set) var requestCount = 0

    /// Whether the exchange in flight runs on a connection that served an earlier request: the
    /// condition under which a failure before any response byte is worth retrying.
    var isReused: Bool { requestCount > 1 }

    mutating func connected() -> Action {
        guard state == .connecting else { return .none }
        state = .idle
        return .connectionReady
    }

    mutating func execute() -> Action {
        precondition(state == .idle, "a request was assigned to a connection that is not idle: \(state)")
        requestCount += 1
        state = .active(requestWritten: false, responseEnded: false, keepAlive: true)
        return .sendRequest
    }

    mutating func requestWritten() -> Action {
        guard case .active(_, let responseEnded, let keepAlive) = state else { return .none }
        state = .active(requestWritten: true, responseEnded: responseEnded, keepAlive: keepAlive)
        return responseEnded ? finish(keepAlive: keepAlive) : .none
    }

    /// The response ended. `keepAlive`: the response allows reuse (HTTP/1.1 without
    /// `Connection: close`, or 1.0 with keep-alive) and no stray bytes followed it.
    mutating func responseEnded(keepAlive: Bool) -> Action {
        guard case .active(let requestWritten, _, _) = state else { return .none }
        // A response that ends before the request is fully written means the server did not want
        // the rest of the body: once the write finishes the stream is out of step, so the
        // connection is not reused (Go's Transport makes the same call).
        state = .active(requestWritten: requestWritten, responseEnded: true, keepAlive: keepAlive && requestWritten)
        return requestWritten ? finish(keepAlive: keepAlive) : .none
    }

    private mutating func finish(keepAlive: Bool) -> Action {
        state = keepAlive ? .idle : .closed
        return .exchangeFinished(reusable: keepAlive)
    }

    /// A socket error, a decoder error, a timeout or EOF that did not end the response.
    mutating func failed(_ code: NetworkingError.Code) -> Action {
        switch state {
        case .active:
            state = .closed
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
        return .close
    }
}
