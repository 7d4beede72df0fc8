import Foundation

extension UVNetworkingTransport {
    /// What the transport sets on every request it sends (the session's own settings, such as
    /// connect timeouts, proxies and TLS, are its `SessionConfiguration`'s).
    public struct Configuration: Sendable {
        /// The inactivity timeout of each request, in seconds (`Request.timeoutInterval`): the
        /// request fails with `requestTimeout` when no byte moves for this long. Time the
        /// response body waits for its consumer does not count.
        public var timeoutInterval: TimeInterval
        /// The longest a request may take, from sending to its last response byte, in seconds
        /// (`Request.totalTimeoutInterval`); nil sets no limit. It covers reading the body too.
        public var totalTimeoutInterval: TimeInterval?
        /// Whether the session's cookie store (if it has one) sends and stores cookies.
        public var httpShouldHandleCookies: Bool
        /// The most bytes of a request body held in memory before it is sent (a stop-gap until
        /// request bodies stream): a larger body fails the request with
        /// `requestSerializationFailed` before anything is sent.
        public var maximumRequestBodyBytes: Int

        /// The defaults: 60 s of inactivity, no total limit, cookies handled, bodies up to 16 MiB.
        public init(timeoutInterval: TimeInterval = 60, totalTimeoutInterval: TimeInterval? = nil,
                    httpShouldHandleCookies: Bool = true, maximumRequestBodyBytes: Int = 16 << 20) {
            self.timeoutInterval = timeoutInterval
            self.totalTimeoutInterval = totalTimeoutInterval
            self.httpShouldHandleCookies = httpShouldHandleCookies
            self.maximumRequestBodyBytes = maximumRequestBodyBytes
        }
    }
}
