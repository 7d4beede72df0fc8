import Foundation
import HTTPTypes

/// The error every UVNetworking task fails with.
///
/// Switch on `code` (`case .connectTimeout:`); codes are static members of an extensible struct,
/// so new ones can be added without breaking callers. `description` is short and free of request
/// data, so it is safe as a log line or a metrics label; `detail` says what happened.
public struct NetworkingError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// The code's name, e.g. "connectTimeout".
        public var description: String { name }

        // Bad input from the caller: nothing was sent.
        /// The URL cannot be used (no host, bad port, unparseable).
        public static let invalidURL = Code("invalidURL")
        /// The URL's scheme is not one this client speaks.
        public static let unsupportedURL = Code("unsupportedURL")
        /// A header name or value contains bytes HTTP forbids (CR, LF, NUL, or a bad name token).
        public static let invalidRequestHeader = Code("invalidRequestHeader")
        /// A request serializer could not turn the parameters into a request (not valid JSON, a
        /// query-string closure that threw, ...).
        public static let requestSerializationFailed = Code("requestSerializationFailed")
        /// A multipart form part cannot be built or read (a missing, unreadable or non-file URL,
        /// a stream shorter than its declared length).
        public static let multipartFormDataFailed = Code("multipartFormDataFailed")

        /// A client identity (certificate and private key, PEM or PKCS#12) could not be loaded:
        /// unreadable file, wrong password, or a key that does not match the certificate.
        public static let invalidClientIdentity = Code("invalidClientIdentity")

        // Local files: an upload's source, a download's file, its destination.
        /// The file to upload, or the partial file of resume data, does not exist.
        public static let fileDoesNotExist = Code("fileDoesNotExist")
        /// The file to upload is a directory.
        public static let fileIsDirectory = Code("fileIsDirectory")
        /// The file to upload cannot be read by this process.
        public static let noPermissionsToReadFile = Code("noPermissionsToReadFile")
        /// A file cannot be opened for another reason (not a regular file, an I/O error).
        public static let cannotOpenFile = Code("cannotOpenFile")
        /// A download's temporary file cannot be created.
        public static let cannotCreateFile = Code("cannotCreateFile")
        /// Writing a download's body to its file failed (a full disk, an I/O error).
        public static let cannotWriteToFile = Code("cannotWriteToFile")
        /// A finished download could not be moved to the URL its destination closure returned
        /// (AFNetworking posts its move-failure notification for the same event).
        public static let cannotMoveFile = Code("cannotMoveFile")
        /// `downloadTask(withResumeData:)` was given data that is not resume data this library
        /// produced, or whose partial file is gone.
        public static let invalidResumeData = Code("invalidResumeData")

        // Reaching the server.
        /// The host name did not resolve: no such name, no address, a DNS server's failure
        /// (SERVFAIL, refused), or an invalid `SessionConfiguration.dnsServers` entry.
        public static let dnsFailure = Code("dnsFailure")
        /// No DNS answer came within `SessionConfiguration.dnsTimeout`, or no server answered
        /// within the tries resolv.conf allows.
        public static let dnsTimeout = Code("dnsTimeout")
        /// Every address of the host refused the connection.
        public static let connectionRefused = Code("connectionRefused")
        /// Connecting failed for another reason (unreachable network, ...).
        public static let connectFailed = Code("connectFailed")
        /// Connecting took longer than `SessionConfiguration.connectTimeout`.
        public static let connectTimeout = Code("connectTimeout")
        /// The request does not allow cellular access (`Request.allowsCellularAccess` false) and
        /// only cellular interfaces reach the server (NSURLErrorDataNotAllowed, -1020).
        public static let cellularAccessDenied = Code("cellularAccessDenied")
        /// The HTTP proxy would not open a tunnel (CONNECT) to the server.
        public static let proxyConnectFailed = Code("proxyConnectFailed")
        /// The HTTP proxy wants credentials (407) that were missing or wrong.
        public static let proxyAuthenticationRequired = Code("proxyAuthenticationRequired")

        // TLS.
        /// The data is not a DER or PEM X.509 certificate, or a CA file or directory could not be
        /// loaded.
        public static let invalidCertificate = Code("invalidCertificate")
        /// The TLS handshake failed: a protocol error, an unsupported version or cipher, or bytes
        /// that are not TLS.
        public static let secureConnectionFailed = Code("secureConnectionFailed")
        /// The server's certificate failed the session's `SecurityPolicy`: an invalid or
        /// untrusted chain, a host name mismatch, or no pinned certificate or key.
        public static let serverCertificateUntrusted = Code("serverCertificateUntrusted")
        /// The server rejected the client certificate.
        public static let clientCertificateRejected = Code("clientCertificateRejected")
        /// The server requires a client certificate and none was configured.
        public static let clientCertificateRequired = Code("clientCertificateRequired")

        // The exchange.
        /// No response head arrived within `SessionConfiguration.responseHeadTimeout` of sending.
        public static let responseHeadTimeout = Code("responseHeadTimeout")
        /// No byte arrived for `SessionConfiguration.idleTimeout` while receiving.
        public static let idleTimeout = Code("idleTimeout")
        /// The request timed out: no byte was sent or received for its `timeoutInterval` (an
        /// inactivity timeout), or the whole request took longer than its
        /// `totalTimeoutInterval`. The message says which.
        public static let requestTimeout = Code("requestTimeout")
        /// The server reset the connection.
        public static let connectionReset = Code("connectionReset")
        /// The server closed the connection before any byte of the response.
        public static let connectionClosed = Code("connectionClosed")
        /// Writing the request failed.
        public static let writeFailed = Code("writeFailed")
        /// A streamed request body (`Request.bodyStream`) failed: its factory or a read threw (the
        /// error is the `underlyingError`), or it ended before or went past its declared length.
        /// The connection is closed; no byte beyond the declared length was sent.
        public static let bodyStreamFailed = Code("bodyStreamFailed")
        /// The connection ended inside the response (a Content-Length or chunked body cut short).
        public static let truncatedResponse = Code("truncatedResponse")
        /// The response is not valid HTTP/1.1 as this client accepts it.
        public static let malformedResponse = Code("malformedResponse")
        /// The response head is larger than `SessionConfiguration.maximumResponseHeaderBytes`.
        public static let responseHeadTooLarge = Code("responseHeadTooLarge")
        /// The response body is larger than `SessionConfiguration.maximumResponseBodyBytes`.
        public static let responseBodyTooLarge = Code("responseBodyTooLarge")
        /// The server switched protocols, which no request asked for.
        public static let unexpectedUpgrade = Code("unexpectedUpgrade")
        /// The body's Content-Encoding (gzip, deflate, br, zstd) could not be decoded: corrupt, cut
        /// short, or a zstd frame whose window is over 8 MiB (RFC 9659).
        public static let contentDecodingFailed = Code("contentDecodingFailed")
        /// A compressed body expanded past `SessionConfiguration.maximumDecompressionRatio` or
        /// `maximumResponseBodyBytes`: refused as a decompression bomb.
        public static let decompressionLimitExceeded = Code("decompressionLimitExceeded")

        // The cache.
        /// The request may only be answered from the session's cache (`returnCacheDataDontLoad`,
        /// Fetch's only-if-cached mode) and it holds no response: nothing was sent (URLSession's
        /// NSURLErrorResourceUnavailable). A request's own `Cache-Control: only-if-cached` gets
        /// the cache's 504 response instead, as RFC 9111 says.
        public static let resourceUnavailable = Code("resourceUnavailable")

        // Redirects.
        /// The task followed more redirects than `SessionConfiguration.maximumRedirects`.
        public static let tooManyRedirects = Code("tooManyRedirects")
        /// Never raised any more: a redirect back to a URL the task already requested is
        /// followed (servers set a cookie and redirect to the same URL), and only
        /// `SessionConfiguration.maximumRedirects` ends a loop, with `tooManyRedirects`. Kept so
        /// that code naming it still compiles.
        public static let redirectCycle = Code("redirectCycle")
        /// A redirect from https to http, which `SessionConfiguration.allowsHTTPSToHTTPRedirects`
        /// refuses by default.
        public static let insecureRedirect = Code("insecureRedirect")

        // The task's life.
        /// The task was cancelled.
        public static let cancelled = Code("cancelled")
        /// The session was invalidated before the task could run.
        public static let sessionInvalidated = Code("sessionInvalidated")
        /// The event loop or worker pool the session runs on was shut down (or the loop could not
        /// start): the task could not run, or was ended when the loop stopped.
        public static let loopShutDown = Code("loopShutDown")

        // After the exchange.
        /// The response serializer rejected the status code.
        public static let unacceptableStatusCode = Code("unacceptableStatusCode")
        /// The response serializer rejected the content type.
        public static let unacceptableContentType = Code("unacceptableContentType")
        /// The response body could not be turned into an object.
        public static let serializationFailed = Code("serializationFailed")
    }

    /// What kind of failure this is.
    public let code: Code
    /// What happened, for people.
    public let detail: String
    /// The URL of the request that failed, when there was one.
    public var failingURL: URL?
    /// The response, when one had arrived.
    public var response: HTTPResponse?
    /// The response body received before the failure (for validation errors: the whole body).
    public var responseData: Data?
    /// The error this one wraps, if any.
    public var underlyingError: (any Error & Sendable)?
    /// For a TLS failure after the server presented certificates (`serverCertificateUntrusted`):
    /// what it presented (`certificates`, leaf first, as sent) and the host it was evaluated for.
    public var serverTrust: ServerTrust?
    /// The object the response serializer made despite the failure, if any.
    ///
    /// AFNetworking hands a completion handler both an object and an error when only the status
    /// was rejected: JSON, XML and property-list serializers still parse the error body, and
    /// `HTTPResponseSerializer` still returns the data. A serializer can only return or throw, so
    /// the object travels here and the session passes it on as the handler's `responseObject`.
    public var responseObject: Any? {
        get { carriedObject?.value }
        set { carriedObject = newValue.map(CarriedObject.init) }
    }
    private var carriedObject: CarriedObject?

    /// Holds `responseObject`, which is `Any` and so not Sendable.
    ///
    /// @unchecked: the serializer creates the object on a worker thread and hands it over with
    /// the error to the completion handler; UVNetworking never reads or mutates it afterwards, so
    /// it is never shared between threads by the library.
    private final class CarriedObject: @unchecked Sendable {
        let value: Any
        init(_ value: Any) { self.value = value }
    }

    /// Creates an error.
    public init(_ code: Code, _ detail: String, failingURL: URL? = nil, response: HTTPResponse? = nil,
                responseData: Data? = nil, underlyingError: (any Error & Sendable)? = nil) {
        self.code = code
        self.detail = detail
        self.failingURL = failingURL
        self.response = response
        self.responseData = responseData
        self.underlyingError = underlyingError
    }

    /// `code: detail`.
    public var description: String { "\(code): \(detail)" }

    /// Whether the task ended because it was cancelled.
    public var isCancellation: Bool { code == .cancelled }

    /// Whether the failure is one of the timeouts.
    public var isTimeout: Bool {
        [.connectTimeout, .responseHeadTimeout, .idleTimeout, .requestTimeout, .dnsTimeout].contains(code)
    }
}

extension NetworkingError: LocalizedError {
    /// The detail, for `localizedDescription` (the same text as the bridged NSError's
    /// `NSLocalizedDescriptionKey`, e.g. "Request failed: not found (404)").
    public var errorDescription: String? { detail }
}
