import CoreMetrics

/// The request metrics of one method and origin (`HTTPClientMetrics.requests(method:host:port:)`):
/// its `http.client.active_requests` meter, and the `http.client.request.duration` timer it used
/// last, found again by status and error type alone (an integer and an optional compared)
/// instead of by a key of three strings and a copy of the cache's last entry: most requests to
/// an origin end alike. Loop-confined.
final class RequestMetrics {
    let method: String
    let host: String
    let port: Int
    /// `http.client.active_requests` for the method and origin.
    let active: Meter
    /// Whose duration timers these are; it keeps this object, so not a strong reference.
    private unowned let metrics: HTTPClientMetrics
    private var lastStatus = -1
    private var lastProtocolVersion: String?
    private var lastErrorType: String?
    private var lastTimer: Timer?

    init(method: String, host: String, port: Int, metrics: HTTPClientMetrics) {
        self.method = method
        self.host = host
        self.port = port
        self.metrics = metrics
        active = Meter(label: HTTPClientMetrics.activeRequests,
                       dimensions: [("http.request.method", method), ("server.address", host), ("server.port", String(port))],
                       factory: metrics.factory)
    }

    /// `http.client.request.duration` for a request that ended with `status` (0 for none) over
    /// `protocolVersion` (nil for no response) and `errorType`.
    func duration(status: Int, protocolVersion: String?, errorType: String?) -> Timer {
        if status == lastStatus, protocolVersion == lastProtocolVersion, errorType == lastErrorType, let lastTimer { return lastTimer }
        let timer = metrics.requestDuration(method: method, status: status, protocolVersion: protocolVersion, host: host,
                                            port: port, errorType: errorType)
        lastStatus = status
        lastProtocolVersion = protocolVersion
        lastErrorType = errorType
        lastTimer = timer
        return timer
    }
}
