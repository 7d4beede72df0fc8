import Foundation
import HTTPTypes

/// One request-response exchange of a task (a task that follows redirects has several), like
/// URLSessionTaskTransactionMetrics. Dates are wall-clock, taken on the loop thread as each
/// event happened; a phase that did not happen (DNS for an IP literal is still timed; nothing
/// for a reused connection) is nil.
public struct TransactionMetrics: Sendable, Hashable {
    /// The request's URL and method.
    public var url: URL
    public var method: HTTPRequest.Method
    /// When the task asked its pool for a connection for this exchange.
    public var fetchStartDate: Date
    public var domainLookupStartDate: Date?
    public var domainLookupEndDate: Date?
    public var connectStartDate: Date?
    public var connectEndDate: Date?
    /// The TLS handshake, with the trust evaluation (https on a new connection).
    public var secureConnectionStartDate: Date?
    public var secureConnectionEndDate: Date?
    /// The first and last request byte written.
    public var requestStartDate: Date?
    public var requestEndDate: Date?
    /// The response head arrived; the response ended.
    public var responseStartDate: Date?
    public var responseEndDate: Date?
    /// Bytes of request (head and body) written, and of response (head, framing and body, as
    /// received, before any content decoding) read; over TLS, the bytes inside the records.
    public var requestBytesSent: Int64
    public var responseBytesReceived: Int64
    /// Whether the exchange ran on a connection that had served an earlier one.
    public var isReusedConnection: Bool
    /// The server's address and port, or the proxy's when there is one.
    public var remoteAddress: String?
    public var remotePort: Int?
    /// The response's status, if a head arrived.
    public var statusCode: Int?
    /// The protocol the exchange spoke, by its ALPN name as URLSession reports it: "h2" or
    /// "http/1.1"; nil when no connection was assigned.
    public var networkProtocolName: String?
    /// Where the response came from, as URLSessionTaskTransactionMetrics says it: the network,
    /// or the session's cache (`SessionConfiguration.cache`) without a connection, its
    /// connection facts then nil and its byte counts 0. A 304 that revalidated a stored
    /// response is a network load.
    public var resourceFetchType: ResourceFetchType = .networkLoad

    /// Where an exchange's response came from.
    public enum ResourceFetchType: Sendable, Hashable {
        /// From the origin (or a proxy), over a connection.
        case networkLoad
        /// From the session's cache, without a request on the wire.
        case localCache
    }

    public init(url: URL, method: HTTPRequest.Method, fetchStartDate: Date, isReusedConnection: Bool = false) {
        self.url = url
        self.method = method
        self.fetchStartDate = fetchStartDate
        self.requestBytesSent = 0
        self.responseBytesReceived = 0
        self.isReusedConnection = isReusedConnection
    }
}
