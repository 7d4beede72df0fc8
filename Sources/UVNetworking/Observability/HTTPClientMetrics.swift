import CoreMetrics

/// The OpenTelemetry HTTP client metrics of one engine, with their handles cached per set of
/// dimensions: a request looks its handles up in a dictionary rather than asking the factory
/// for new ones. Loop-confined.
final class HTTPClientMetrics {
    static let requestDuration = "http.client.request.duration"
    static let activeRequests = "http.client.active_requests"
    static let openConnections = "http.client.open_connections"
    static let connectionDuration = "http.client.connection.duration"

    let factory: any MetricsFactory
    /// A batch over many origins would grow the caches without end: past this many entries one
    /// is emptied (its handles stay valid for whoever holds them, and are made again if needed).
    static let cacheLimit = 512

    private struct DurationKey: Hashable {
        var method: String
        var status: Int
        var protocolVersion: String?
        var host: String
        var port: Int
        var errorType: String?
    }
    private struct OriginKey: Hashable {
        var method: String
        var host: String
        var port: Int
    }
    private var durations: [DurationKey: Timer] = [:]
    private var requests: [OriginKey: RequestMetrics] = [:]
    /// The last handles looked up: a batch sends the same method to the same origin over and
    /// over, and comparing with the last key (small strings compare as two words) is much
    /// cheaper than hashing it.
    private var lastDuration: (key: DurationKey, timer: Timer)?
    private var lastRequests: (key: OriginKey, metrics: RequestMetrics)?

    init(factory: any MetricsFactory) {
        self.factory = factory
    }

    /// Handles held in the caches (for tests).
    var cachedHandleCount: Int { durations.count + requests.count }

    /// `http.client.request.duration` (seconds) for these dimensions; `status` 0 and
    /// `protocolVersion` nil when no response came.
    func requestDuration(method: String, status: Int, protocolVersion: String? = nil, host: String, port: Int,
                         errorType: String?) -> Timer {
        let key = DurationKey(method: method, status: status, protocolVersion: protocolVersion, host: host, port: port,
                              errorType: errorType)
        if let last = lastDuration, last.key == key { return last.timer }
        if let timer = durations[key] {
            lastDuration = (key, timer)
            return timer
        }
        var dimensions = [("http.request.method", method)]
        if status > 0 { dimensions.append(("http.response.status_code", String(status))) }
        dimensions.append(("server.address", host))
        dimensions.append(("server.port", String(port)))
        if let errorType { dimensions.append(("error.type", errorType)) }
        // OpenTelemetry's name for what TransactionMetrics.networkProtocolName says in ALPN's
        // words: a dashboard splits HTTP/2 from HTTP/1.1 by it.
        if let protocolVersion { dimensions.append(("network.protocol.version", protocolVersion)) }
        let timer = Timer(label: Self.requestDuration, dimensions: dimensions, preferredDisplayUnit: .seconds, factory: factory)
        if durations.count >= Self.cacheLimit { durations.removeAll() }
        durations[key] = timer
        lastDuration = (key, timer)
        return timer
    }

    /// `http.client.active_requests` for a method and origin.
    func activeRequests(method: String, host: String, port: Int) -> Meter {
        requests(method: method, host: host, port: port).active
    }

    /// The request metrics of a method and origin, made on first use.
    func requests(method: String, host: String, port: Int) -> RequestMetrics {
        let key = OriginKey(method: method, host: host, port: port)
        if let last = lastRequests, last.key == key { return last.metrics }
        if let metrics = requests[key] {
            lastRequests = (key, metrics)
            return metrics
        }
        let metrics = RequestMetrics(method: method, host: host, port: port, metrics: self)
        if requests.count >= Self.cacheLimit { requests.removeAll() }
        requests[key] = metrics
        lastRequests = (key, metrics)
        return metrics
    }

    /// The connection metrics of one pool (made once per pool).
    func connections(host: String, port: Int) -> ConnectionMeters {
        let origin = [("server.address", host), ("server.port", String(port))]
        return ConnectionMeters(
            idle: Meter(label: Self.openConnections, dimensions: [("http.connection.state", "idle")] + origin, factory: factory),
            active: Meter(label: Self.openConnections, dimensions: [("http.connection.state", "active")] + origin, factory: factory),
            duration: Timer(label: Self.connectionDuration, dimensions: origin, preferredDisplayUnit: .seconds, factory: factory))
    }

    /// The OpenTelemetry `network.protocol.version` of a response's HTTP version: "2", "1.1" or
    /// "1.0" (literals, so a request's lookup allocates nothing).
    static func protocolVersion(major: Int, minor: Int) -> String {
        if major == 2 { return "2" }
        return minor == 0 ? "1.0" : "1.1"
    }

    /// The OpenTelemetry `error.type` of a finished request: the library's error code's name
    /// ("connectTimeout", "cancelled", ...), else the status code of a 4xx or 5xx response, else
    /// none.
    static func errorType(_ error: NetworkingError?, status: Int) -> String? {
        if let error { return error.code.description }
        return status >= 400 ? String(status) : nil
    }
}

/// One pool's `http.client.open_connections` (per state) and `http.client.connection.duration`.
struct ConnectionMeters {
    let idle: Meter
    let active: Meter
    let duration: Timer
}
