import CoreMetrics
import Foundation
import Tracing
import Logging

/// How a session connects and what it tolerates. Values, copied into the session when it is made.
public struct SessionConfiguration: Sendable {
    /// Connections open at once to one origin (scheme, host, port). URLSession's default is 6;
    /// a batch fetcher raises it.
    public var maximumConnectionsPerHost: Int = 6
    /// How many requests one HTTP/1.1 connection carries at once when they allow pipelining
    /// (`Request.httpShouldUsePipelining`): the one being answered and those written behind it.
    /// Requests are pipelined only once every connection to their origin is busy and
    /// `maximumConnectionsPerHost` are open, onto the least loaded one. Below 2: none.
    public var pipelineDepth: Int = 8
    /// Connections open or opening at once across all origins of the session. When a new one
    /// would exceed it, the least recently used idle connection of any origin closes to make
    /// room; with none idle, the request waits (oldest first, across origins) until a
    /// connection closes or goes idle. It never fails for that.
    ///
    /// The default follows the process's file descriptor limit when the configuration is made
    /// (the RLIMIT_NOFILE soft limit, `ulimit -n`) less a reserve for files and pipes of an
    /// eighth of it, at least 32: 896 under the common 1,024, so that a batch over many hosts
    /// never runs out of descriptors (curl similarly closes its oldest idle connection when its
    /// connection cache is full). Values below 1 count as 1. A connect that still finds no
    /// descriptor (EMFILE, ENFILE: other descriptors took them) also closes an idle connection,
    /// or waits for one to close; it fails only when the session has none open.
    ///
    /// A session over several loops (`SessionManager(configuration:group:)`) splits the budget
    /// evenly between its loops (each at least one connection): a loop closes only its own idle
    /// connections to make room.
    public var maximumConnections: Int = DescriptorLimit.defaultConnectionBudget()
    /// Politeness: the most requests started per second to one origin (scheme, host, port, as
    /// for `maximumConnectionsPerHost`); nil (the default), zero, negative or infinite for no
    /// limit. A rate R spaces request starts 1/R seconds apart, with no bursts: it is a minimum
    /// spacing, like `delayPerHost`, and with both set the larger spacing holds.
    ///
    /// A request "starts" when it is handed a connection (so when it is sent); a paced request
    /// waits for its turn without a connection or a descriptor, in arrival order, and the wait
    /// counts against its `timeoutInterval` like a wait for a connection. Requests to other
    /// origins are never held back. Each request a redirect leads to takes its turn too; the
    /// library's own resend after a reused connection turned out closed does not. Spacing is
    /// kept in whole milliseconds (rates above 1,000 per second act as 1,000).
    public var requestsPerSecondPerHost: Double? = nil
    /// Politeness: seconds between the starts of two requests to one origin (wget's `--wait`,
    /// Scrapy's `DOWNLOAD_DELAY`, but measured from start to start, not from the end of one
    /// response); 0 (the default) for none. Combined with `requestsPerSecondPerHost`, the larger
    /// spacing holds. With more than one connection per origin allowed, a slow response does not
    /// hold back the next start; set `maximumConnectionsPerHost` to 1 for one request at a time.
    public var delayPerHost: TimeInterval = 0
    /// Seconds to resolve and connect (all addresses together, and the TLS handshake). Zero,
    /// negative, NaN or infinite: none.
    ///
    /// A host with several addresses is connected to by Happy Eyeballs (RFC 8305): IPv6 and
    /// IPv4 addresses interleaved, IPv6 first; each next address is tried 250 ms after the one
    /// before it started (at once when one fails) while the earlier attempts go on, and the
    /// first to connect is used. So an address that never answers costs 250 ms, not this
    /// timeout; when every address fails, the last failure is reported.
    public var connectTimeout: TimeInterval = 10
    /// Seconds from the last request byte to the response head (`responseHeadTimeout` error).
    /// Off (infinite) by default: each request's `timeoutInterval`, an inactivity timeout,
    /// covers this wait; set it for a tighter limit on this one phase. Zero, negative, NaN or
    /// infinite: none.
    public var responseHeadTimeout: TimeInterval = .infinity
    /// Seconds without a byte while a response body arrives (`idleTimeout` error). Off
    /// (infinite) by default, as the request's `timeoutInterval` covers it; it does not run
    /// while reading is paused for the body's consumer. Zero, negative, NaN or infinite: none.
    public var idleTimeout: TimeInterval = .infinity
    /// Seconds an unused keep-alive connection stays open (async-http-client uses 60; servers
    /// commonly close after 5 to 75). Zero or less closes it at once; infinite keeps it.
    /// An origin left with no connection and no request is forgotten after as long (a minute
    /// when infinite), with its TLS sessions: memory follows the origins in use.
    public var idleConnectionTimeout: TimeInterval = 60
    /// Which HTTP versions the session speaks (curl's --http2, --http1.1, --http2-prior-knowledge).
    /// `.http2`, the default: https offers "h2" then "http/1.1" through ALPN and speaks what the
    /// server picks; http speaks HTTP/1.1.
    public var httpVersion: HTTPVersionPolicy = .http2
    /// The largest response head accepted (status line and fields, or trailers), in bytes. Over
    /// HTTP/2, the header list once HPACK-decoded (each field counted as RFC 9113 §6.5.2 does).
    public var maximumResponseHeaderBytes: Int = 64 * 1024
    /// The largest response body accepted, in bytes; nil for no limit.
    public var maximumResponseBodyBytes: Int? = nil
    /// Header fields added to every request that does not set them.
    public var httpAdditionalHeaders: [(name: String, value: String)] = []
    /// The longest, in seconds, a DNS answer is reused: an answer is kept for its records' TTL,
    /// at most this long. "No such name" and "no address" answers are kept 5 seconds (at most
    /// this long too); timeouts and server failures are not kept. Zero keeps nothing.
    public var dnsCacheTTL: TimeInterval = 30
    /// Seconds one host name's look-up may take (`dnsTimeout` error); it counts within
    /// `connectTimeout`, which covers resolving and connecting. 5 by default: glibc's default
    /// per-try `timeout` (RES_TIMEOUT), what a getaddrinfo user waits for a silent server before
    /// the next try, and below `connectTimeout`'s 10 so that a name that does not resolve reports
    /// `dnsTimeout`. resolv.conf's `timeout` and `attempts` still
    /// apply within it: when every try has timed out sooner, the look-up fails with `dnsTimeout`
    /// then. Zero, negative, NaN or infinite: none (resolv.conf's tries alone).
    public var dnsTimeout: TimeInterval = 5
    /// The DNS servers to ask instead of resolv.conf's nameservers, in curl's `--dns-servers`
    /// syntax: "127.0.0.1", "127.0.0.1:5353", "[::1]:53" or "::1" (port 53 unless given).
    /// resolv.conf's search list, ndots, timeout and attempts still apply; /etc/hosts still
    /// comes first. Empty (the default): resolv.conf's. An entry that is not an IP address
    /// with an optional port fails every task that needs DNS with `dnsFailure`, naming it.
    public var dnsServers: [String] = []
    /// Redirects (301, 302, 303, 307, 308) a task follows before failing with `tooManyRedirects`;
    /// 0 follows none (the redirect response is the task's response). URLSession's limit is 16.
    public var maximumRedirects: Int = 16
    /// Whether a redirect may lead from https to http. Off: such a redirect fails the task with
    /// `insecureRedirect` rather than send the request, and maybe credentials, in clear.
    public var allowsHTTPSToHTTPRedirects = false
    /// Whether responses with Content-Encoding gzip, deflate, br (brotli) or zstd are decoded
    /// (and `Accept-Encoding: gzip, deflate, br, zstd` is sent when a request does not set the
    /// field). Several codings are undone last applied first; a list that names any other coding
    /// (compress, ...) leaves the body as sent, with its Content-Encoding field. zstd frames may
    /// use a window of at most 8 MiB (RFC 9659): one that asks for more fails the task with
    /// `contentDecodingFailed`. Progress counts the bytes received; the body, streams and hooks
    /// get decoded bytes. Off: bodies arrive as sent.
    public var decompressesResponses = true
    /// The most decoded bytes per received byte a compressed body may expand to, once past
    /// 1 MiB decoded; past it the task fails with `decompressionLimitExceeded` (a decompression
    /// bomb). gzip cannot exceed about 1030x, but br and zstd expand a few bytes to megabytes
    /// (tens of thousands to one and more): for them this limit is what stops a bomb. Ordinary
    /// text and JSON stay well under 100x. `maximumResponseBodyBytes` limits the decoded size too.
    public var maximumDecompressionRatio: Double = 250
    /// The HTTP proxies requests go through. By default those the environment names
    /// (http_proxy, https_proxy, no_proxy, read as curl reads them), loopback hosts excepted;
    /// `.none` connects directly.
    public var proxy = ProxyConfiguration.environment()
    /// Host names to connect to at a fixed IP literal instead of asking DNS, like curl's
    /// `--resolve host:port:address` (here for every port). The URL's host still names the
    /// server in the Host field, in SNI and in certificate checks. An entry that is not an IP
    /// literal fails the request with `dnsFailure`. Several literals, comma-separated
    /// ("::1, 127.0.0.1"), are one answer with several addresses, raced as DNS answers are
    /// (see `connectTimeout`).
    public var hostAddressOverrides: [String: String] = [:]
    /// TLS for https URLs: versions, trusted CAs, session resumption. The TLS handshake counts
    /// against `connectTimeout`.
    public var tls = TLSConfiguration()
    /// Where the session keeps cookies; nil (the default) for none: no Cookie field is added,
    /// Set-Cookie fields are ignored, and requests pay nothing for cookies. A batch fetcher
    /// wants exactly that.
    ///
    /// URLSession, and so AFNetworking, handle cookies by default; to get that behaviour set
    /// `configuration.cookieStore = CookieStore()` (one store for this session) or
    /// `CookieStore.shared` (one for the process, like NSHTTPCookieStorage's shared storage).
    /// Several sessions may share a store. Requests opt out with `httpShouldHandleCookies`.
    public var cookieStore: CookieStore?
    /// The tracer that gives each task a client span and puts its trace context (W3C
    /// `traceparent`) in the task's request; nil (the default) for the process's,
    /// `InstrumentationSystem.tracer`, read once when the session is made. With neither (a
    /// `NoOpTracer`) tasks pay nothing for tracing. See docs/tracing.md.
    public var tracer: (any Tracer)?
    /// Where the session logs what it does in the background (connections opened, reused and
    /// closed, pool decisions, retries, redirects, TLS outcomes, DNS failures), at debug and
    /// trace; nil (the default) logs nothing. A request's own `Request.logger` takes its task's
    /// lines instead. See docs/observability.md.
    public var backgroundActivityLogger: Logger?
    /// Where the session's OpenTelemetry-named metrics go (`http.client.request.duration`,
    /// `http.client.active_requests`, `http.client.open_connections`,
    /// `http.client.connection.duration`); nil (the default) for `MetricsSystem.factory`, as
    /// it is when the session is made: a session made before `MetricsSystem.bootstrap`, or
    /// with none, records nothing and pays nothing for metrics. See docs/observability.md.
    public var metricsFactory: (any MetricsFactory)?
    /// Sends a request again when an attempt ends badly, as its rules say: `RetryPolicy` for
    /// the rules of curl's `--retry` and of crawlers (idempotent methods; 408, 429, 500, 502,
    /// 503, 504 and transport failures and timeouts; Retry-After waited for, capped), or a
    /// `RequestRetrier` of your own (Alamofire's shape). nil (the default): every attempt's
    /// outcome is the task's, as in URLSession.
    ///
    /// The retrier is asked on the session's loop thread, so it must be quick and must not
    /// block: when a response head with a status of 400 or more arrives (`error` nil), and when
    /// an attempt fails (transport, timeout, decoding; `response` the head, if one came). A
    /// retried response is dropped: its body reaches neither the serializer nor the hooks, and
    /// the completion handler runs once, with the last attempt's outcome. Not asked after a
    /// cancellation or the session's end, once a response body has gone to a `bytes(for:)`
    /// stream or a download's file, or when the delay would end past the request's
    /// `totalTimeoutInterval` (which counts every attempt and wait). The wait holds no
    /// connection; the next attempt is queued as any request (so `delayPerHost` and the
    /// connection limits apply to it). `SessionTask.retryCount` tells how many were made. The
    /// delay is the request's own: a server's Retry-After does not hold the origin's other
    /// requests (uvfetch does that itself, per host).
    public var retrier: (any RequestRetrier)?
    /// The private HTTP cache (RFC 9111) the session's GET requests are answered from and
    /// stored in (and HEAD requests answered from), as `Request.cachePolicy` says; nil (the default) for none: every request
    /// goes to the origin and pays nothing for caching. Several sessions may share one;
    /// `HTTPCache.shared` is there for that, as URLCache.shared is. See docs/caching.md.
    public var cache: HTTPCache?
    /// Where download tasks write bodies while they arrive; nil (the default) for FileManager's
    /// temporary directory. Not public: tests give a session a directory of its own, so they
    /// can count what is left in it.
    var downloadDirectory: URL?

    /// The fields added to every request that does not set them: `httpAdditionalHeaders`, and
    /// Accept-Encoding when responses are decoded.
    var defaultRequestFields: [(name: String, value: String)] {
        var fields = httpAdditionalHeaders
        if decompressesResponses && !fields.contains(where: { $0.name.caseInsensitiveCompare("Accept-Encoding") == .orderedSame }) {
            fields.append(("Accept-Encoding", "gzip, deflate, br, zstd"))
        }
        return fields
    }

    /// `defaultRequestFields` for a request that carries Range: only `httpAdditionalHeaders`.
    /// A range of an encoded representation is a slice of the encoded bytes, which no decoder
    /// can start in the middle of (RFC 9110 §14.1.2), so such a request asks for no coding of
    /// ours, as curl and browsers do; the caller's own Accept-Encoding is kept.
    var defaultRangeRequestFields: [(name: String, value: String)] { httpAdditionalHeaders }

    /// The defaults above.
    public static var `default`: SessionConfiguration { SessionConfiguration() }

    /// Creates the default configuration.
    public init() {}
}
