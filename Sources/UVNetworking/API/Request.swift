import Foundation
import HTTPTypes
import Logging
import Synchronization
import UVHTTP1

/// A request to send: what AFNetworking users know as an NSURLRequest.
///
/// Header fields are kept exactly as given and checked when the request is encoded: a name that
/// is not an HTTP token, or a value with CR, LF or NUL, fails the task with
/// `NetworkingError.Code.invalidRequestHeader` before any byte is sent. (swift-http-types'
/// `HTTPFields` would silently rewrite such values, hiding the caller's mistake, which is why the
/// raw fields are kept here and `HTTPFields` is offered as a view.)
///
/// The library alone frames the body: it writes `Content-Length` (or `Transfer-Encoding:
/// chunked` for a stream of unknown length) from the body. A `Content-Length` field you set must
/// equal the body's length, and is then sent once; one that differs (or is not a number) fails
/// the task with `invalidRequestHeader` before any byte is sent, so that no field can make the
/// server read the body's tail as another request. On a `bodyStream` without a length it gives
/// the length, which the stream must then produce exactly. `Transfer-Encoding: chunked` sends any
/// body chunked, as curl does (an in-memory body as one chunk, a stream of known length without
/// checking that length, no body as the empty chunked body); any other transfer coding, and
/// Content-Length together with Transfer-Encoding, fail the task the same way. GET and HEAD may
/// carry a body: it is framed like any other.
public struct Request: Sendable, Equatable {
    /// The URL to fetch: http or https.
    ///
    /// A user and password in it (`http://user:password@host/`, escaped as a URL writes them)
    /// are sent as `Authorization: Basic`, decoded to their bytes, as curl and URLSession do,
    /// unless the request or the session's `httpAdditionalHeaders` sets Authorization. They never
    /// go into the request line or Host, and a redirect to another origin does not carry them.
    public var url: URL { didSet { generation = RequestGeneration.next() } }
    /// The request method.
    public var method: HTTPRequest.Method { didSet { generation = RequestGeneration.next() } }
    /// Header fields in the order they will be sent.
    public var headerFields: [(name: String, value: String)] {
        get { fields }
        set { fields = newValue }
    }
    private var fields: [(name: String, value: String)] = [] { didSet { generation = RequestGeneration.next() } }
    /// The request body in memory, sent with a Content-Length: with its head in one write up to
    /// 64 KiB, in 64 KiB chunks after it beyond (each one upload progress and activity for
    /// `timeoutInterval`). Setting it clears `bodyStream` (as setting `HTTPBody` clears
    /// `HTTPBodyStream` on an NSURLRequest); nil while the body is streamed.
    public var body: Data? {
        get { if case .data(let data) = content { return data } else { return nil } }
        set { content = newValue.map(Content.data) }
    }
    /// The request body read from a stream, in bounded memory, whatever its size. Setting it
    /// clears `body`; nil while the body is in memory or absent.
    ///
    /// The stream's factory is called again whenever the body must be sent again (a retry, later a
    /// redirect), which is what makes a streamed request replayable.
    public var bodyStream: StreamedBody? {
        get { if case .stream(let stream) = content { return stream } else { return nil } }
        set { content = newValue.map(Content.stream) }
    }
    /// The body, in memory or streamed.
    private var content: Content? { didSet { generation = RequestGeneration.next() } }
    private enum Content: Sendable, Equatable {
        case data(Data)
        case stream(StreamedBody)
    }
    /// The inactivity timeout, in seconds, as on an NSURLRequest (AFNetworking's default 60): the
    /// task fails with `NetworkingError.Code.requestTimeout` when no byte is sent or received
    /// for this long, whether it waits for a connection, sends, waits for the response or
    /// receives it. A transfer that keeps moving never times out, however long it takes; bound
    /// the whole request with `totalTimeoutInterval`.
    ///
    /// The time a task spends suspended, or paused because its body's consumer is behind (an
    /// async byte stream, a download's disk), does not count. Any value is valid: zero,
    /// negative, NaN, infinite or huge values mean no inactivity timeout.
    public var timeoutInterval: TimeInterval { didSet { generation = RequestGeneration.next() } }
    /// The longest the whole request may take, in seconds, from `resume()` to the last byte,
    /// time waiting for a connection, redirects and retries included (curl's `--max-time`,
    /// URLSession's `timeoutIntervalForResource` for one request). nil, the default, sets no
    /// limit. Passing it fails the task with `NetworkingError.Code.requestTimeout`, its message
    /// naming `totalTimeoutInterval`; it runs while the task is suspended too. Zero, negative,
    /// NaN, infinite or huge values mean no limit.
    public var totalTimeoutInterval: TimeInterval? = nil { didSet { generation = RequestGeneration.next() } }
    /// Whether the session's cookie store (`SessionConfiguration.cookieStore`) takes part: its
    /// cookies are sent (unless the request sets a Cookie field itself) and the response's
    /// Set-Cookie fields are stored. True by default, as on URLRequest; it does nothing in a
    /// session without a store.
    public var httpShouldHandleCookies = true { didSet { generation = RequestGeneration.next() } }
    /// How the session's cache (`SessionConfiguration.cache`) answers this request, as on an
    /// NSURLRequest: `.useProtocolCachePolicy` (the default) follows RFC 9111 and the request's
    /// own Cache-Control. It does nothing in a session without a cache.
    public var cachePolicy = CachePolicy.useProtocolCachePolicy { didSet { generation = RequestGeneration.next() } }
    /// The kind of traffic the request carries (NSURLRequest's `networkServiceType`): its
    /// connection's packets are marked with that service class's DSCP and socket priority.
    /// `.default` (no marking) unless set; requests of different types use different
    /// connections.
    public var networkServiceType = NetworkServiceType.default { didSet { generation = RequestGeneration.next() } }
    /// Whether the request may be pipelined (NSURLRequest's `HTTPShouldUsePipelining`): written on
    /// a kept-alive HTTP/1.1 connection behind others before their responses arrive, when every
    /// connection to its origin is busy and no more may open
    /// (`SessionConfiguration.maximumConnectionsPerHost`, `pipelineDepth`). False by default, as
    /// on Apple platforms. Only idempotent requests (GET, HEAD, OPTIONS, TRACE, PUT, DELETE)
    /// whose body goes with the head are pipelined; for others it does nothing, as over HTTP/2.
    /// A request left unanswered when the server closes is sent again; an origin that breaks
    /// off or garbles pipelined exchanges gets no more of them. See docs/pipelining.md.
    public var httpShouldUsePipelining = false { didSet { generation = RequestGeneration.next() } }
    /// Whether the request may go over an interface the system classifies as cellular
    /// (NSURLRequest's `allowsCellularAccess`); true by default. When false, each of its
    /// connections is opened only after the kernel's routing table has been read for the
    /// server's addresses: a route over a cellular interface (sysfs `DEVTYPE=wwan`, as
    /// `NetworkReachabilityManager` classifies it) is replaced by the best route over another
    /// interface, the socket bound to that interface (SO_BINDTODEVICE), and when no other
    /// interface reaches the server the task fails with
    /// `NetworkingError.Code.cellularAccessDenied`. The DNS look-up itself is not restricted.
    /// Requests that differ here use different connections. See docs/reachability.md.
    public var allowsCellularAccess = true { didSet { generation = RequestGeneration.next() } }
    /// Where this request's task logs (its start, connection, retries, redirects, end), with its
    /// task identifier as metadata; nil (the default) for the session's
    /// `SessionConfiguration.backgroundActivityLogger`. Not part of what is sent: it plays no
    /// part in equality. See docs/observability.md.
    public var logger: Logger? {
        get { extras?.logger }
        set { extras = RequestExtras.make(logger: newValue, wireCapture: wireCapture) }
    }
    /// Where this request's exchanges are recorded as they cross the wire (`WireCapture`), for
    /// an archive such as WARC; nil (the default) records nothing. Not part of what is sent: it
    /// plays no part in equality. Give each task its own.
    public var wireCapture: WireCapture? {
        get { extras?.wireCapture }
        set { extras = RequestExtras.make(logger: logger, wireCapture: newValue) }
    }
    /// The logger and the capture, boxed: most requests have neither, and a request kept
    /// small is copied inline (a larger one costs a memcpy per copy, several per task).
    private var extras: RequestExtras?
    /// Which value this is: a number drawn when the request is made and again at every change,
    /// so two requests with the same number are copies of one unchanged value, equal without a
    /// look at their URLs and fields (a session compares each task's request with the last one
    /// it prepared, and a load generator sends one value over and over).
    private var generation = RequestGeneration.next()

    /// Creates a request.
    public init(url: URL, method: HTTPRequest.Method = .get, headerFields: HTTPFields = [:],
                body: Data? = nil, timeoutInterval: TimeInterval = 60) {
        self.url = url
        self.method = method
        self.fields = headerFields.map { ($0.name.rawName, $0.value) }
        self.content = body.map(Content.data)
        self.timeoutInterval = timeoutInterval
    }

    /// The value of the first field named `name` (case-insensitive), like URLRequest.
    public func value(forHTTPHeaderField name: String) -> String? {
        // ASCII case only (names are tokens): Foundation's caseInsensitiveCompare costs some
        // thousands of instructions per field, paid per task with a tracer (TaskTrace).
        fields.first { RequestEncoder.sameName($0.name, name) }?.value
    }

    /// Replaces every field named `name` with one field, or removes them when `value` is nil.
    public mutating func setValue(_ value: String?, forHTTPHeaderField name: String) {
        fields.removeAll { RequestEncoder.sameName($0.name, name) }
        if let value { fields.append((name, value)) }
    }

    /// Appends a field, keeping any of the same name.
    public mutating func addValue(_ value: String, forHTTPHeaderField name: String) {
        fields.append((name, value))
    }

    /// The fields as swift-http-types values (fields HTTP forbids are left out).
    public var httpFields: HTTPFields {
        var result = HTTPFields()
        for field in fields {
            if let name = HTTPField.Name(field.name) { result.append(HTTPField(name: name, value: field.value)) }
        }
        return result
    }

    /// Same URL, method, fields (in order), body, timeouts, cookie handling, cache policy,
    /// service type, pipelining and cellular access. Streamed bodies
    /// are equal when one is a copy of the other (see `StreamedBody`).
    public static func == (lhs: Request, rhs: Request) -> Bool {
        if lhs.generation == rhs.generation { return true }
        return lhs.url == rhs.url && lhs.method == rhs.method && lhs.content == rhs.content
            && lhs.timeoutInterval == rhs.timeoutInterval && lhs.totalTimeoutInterval == rhs.totalTimeoutInterval
            && lhs.httpShouldHandleCookies == rhs.httpShouldHandleCookies && lhs.cachePolicy == rhs.cachePolicy
            && lhs.networkServiceType == rhs.networkServiceType && lhs.allowsCellularAccess == rhs.allowsCellularAccess
            && lhs.httpShouldUsePipelining == rhs.httpShouldUsePipelining
            && lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    /// The body's length in bytes: the in-memory body's size, a stream's declared length, or -1
    /// for a stream of unknown length (URLSession's NSURLSessionTransferSizeUnknown).
    var expectedBodyLength: Int64 {
        switch content {
        case nil: return 0
        case .data(let data): return Int64(data.count)
        case .stream(let stream): return stream.length ?? -1
        }
    }

    /// Whether the request may be sent again after a failure that left no trace at the server:
    /// an idempotent method (RFC 9110 §9.2.2) whose body can be re-sent. Every body can: an
    /// in-memory one is kept, a streamed one is made again by its factory.
    var isReplayable: Bool {
        switch method {
        case .get, .head, .options, .trace, .put, .delete: return true
        default: return false
        }
    }
}

/// Numbers the values of `Request` (see `Request.generation`): never the same number twice.
private enum RequestGeneration {
    static let counter = Atomic<UInt64>(0)

    static func next() -> UInt64 { counter.wrappingAdd(1, ordering: .relaxed).newValue }
}

/// `Request`'s rarely set fields that play no part in what is sent or in equality. Immutable:
/// a change makes a new box, so copies of a request never share a change.
private final class RequestExtras: Sendable {
    let logger: Logger?
    let wireCapture: WireCapture?

    private init(logger: Logger?, wireCapture: WireCapture?) {
        self.logger = logger
        self.wireCapture = wireCapture
    }

    /// A box for the two, or nil when both are nil.
    static func make(logger: Logger?, wireCapture: WireCapture?) -> RequestExtras? {
        logger == nil && wireCapture == nil ? nil : RequestExtras(logger: logger, wireCapture: wireCapture)
    }
}
