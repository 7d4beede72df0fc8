import Foundation
import UVNetworking

extension UVNetworkingTransport {
    /// What the transport sets on every request it sends (the session's own settings, such as
    /// connect timeouts, proxies and TLS, are its `SessionConfiguration`'s).
    public struct Configuration: Sendable {
        /// The inactivity timeout of each request, in seconds (`Request.timeoutInterval`): the
        /// request fails with `requestTimeout` when no byte moves for this long, a request body
        /// that has nothing to give included. Time the response body waits for its consumer
        /// does not count.
        public var timeoutInterval: TimeInterval
        /// The longest a request may take, from sending to its last response byte, in seconds
        /// (`Request.totalTimeoutInterval`); nil sets no limit. It covers reading the body too.
        public var totalTimeoutInterval: TimeInterval?
        /// Whether the session's cookie store (if it has one) sends and stores cookies.
        public var httpShouldHandleCookies: Bool
        /// The most bytes of a streamed request body read ahead of the connection
        /// (`StreamedBody`'s `bufferLimit`): the body's sequence is asked for more only below it.
        public var requestBodyBufferLimit: Int

        /// The defaults: 60 s of inactivity, no total limit, cookies handled, 256 KiB read ahead.
        public init(timeoutInterval: TimeInterval = 60, totalTimeoutInterval: TimeInterval? = nil,
                    httpShouldHandleCookies: Bool = true,
                    requestBodyBufferLimit: Int = StreamedBody.defaultBufferLimit) {
            precondition(requestBodyBufferLimit >= 1, "requestBodyBufferLimit must be at least 1 byte")
            self.timeoutInterval = timeoutInterval
            self.totalTimeoutInterval = totalTimeoutInterval
            self.httpShouldHandleCookies = httpShouldHandleCookies
            self.requestBodyBufferLimit = requestBodyBufferLimit
        }
    }
}
