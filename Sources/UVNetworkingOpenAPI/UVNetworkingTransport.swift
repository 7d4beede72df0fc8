import Foundation
import HTTPTypes
import OpenAPIRuntime
import UVNetworking

/// A swift-openapi-runtime `ClientTransport` that sends a generated client's requests through a
/// `SessionManager`.
///
/// ```swift
/// let client = Client(serverURL: try Servers.server1(), transport: UVNetworkingTransport())
/// ```
///
/// Streaming, both ways. The request body is read from its `HTTPBody` as the connection takes it
/// (`StreamedBody(length:bufferLimit:makeSequence:)`): at most
/// `Configuration.requestBodyBufferLimit` bytes ahead of the socket, with Content-Length when its
/// length is known and chunked otherwise. A body that can be iterated again is sent again when
/// the request must be (a retry on a fresh connection, a 307 or 308 redirect); a single-pass one
/// fails such a second attempt with `bodyStreamFailed`. Small bodies of known length (up to
/// 64 KiB, a generated client's JSON) are gathered first and leave with the head in one write.
///
/// `send` returns as soon as the response head arrives. The response body is an `HTTPBody` read
/// from the connection as it is consumed (`SessionManager.bytes(for:)`): at most
/// `AsyncBodyStream.highWaterMark` bytes wait for a slow consumer, its length is the
/// Content-Length when the body arrives as sent, and it can be iterated once. Not consuming it to
/// its end (or dropping it) cancels the request and closes its connection.
///
/// Errors: what fails the request is thrown as the library's `NetworkingError` (a refused
/// connection, a timeout, a TLS failure, ...); the generated client wraps it in OpenAPIRuntime's
/// `ClientError`, whose `underlyingError` it is. Every status, 4xx and 5xx included, is a
/// response, never an error: the generated client turns it into the documented case (or
/// `.undocumented`). Errors while the response body is read (a reset, a truncated body) are
/// thrown by the body's iteration, as `NetworkingError` too.
///
/// Redirects are followed as the session's configuration says (`maximumRedirects`; with 0 every
/// 3xx is a response, for a document that describes its redirects).
///
/// Cancellation: cancelling the Swift task that awaits `send` (or iterates the body) cancels the
/// request; it then throws `NetworkingError` with code `.cancelled`, as the library's async API
/// does.
public struct UVNetworkingTransport: ClientTransport {
    /// The session the requests run on.
    public let manager: SessionManager
    /// Settings applied to every request.
    public var configuration: Configuration

    /// A transport over `manager`, by default `SessionManager.shared` (the process's session on
    /// the shared loop and worker pool, which no user can shut down), so that clients made
    /// per request share one pool of connections; pass a manager of your own to configure it
    /// or to shut it down with your service.
    public init(manager: SessionManager = .shared, configuration: Configuration = Configuration()) {
        self.manager = manager
        self.configuration = configuration
    }

    /// Sends `request` to `baseURL` (its path is appended to the base URL's) and returns the
    /// response once its head has arrived, with its body streaming (nil for HEAD, 1xx, 204
    /// and 304, which have none).
    public func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL,
                     operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        let prepared = try await makeRequest(request, body: body, baseURL: baseURL)
        let (response, stream) = try await manager.bytes(for: prepared)
        return (response, try await ResponseBody.make(for: response, method: request.method, stream: stream))
    }
}
