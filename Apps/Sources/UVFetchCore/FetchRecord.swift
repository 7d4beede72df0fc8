import Foundation
import UVNetworking

/// One URL's result: a line of the `--jsonl` output.
public struct FetchRecord: Codable, Equatable, Sendable {
    /// Milliseconds spent, from the caller's clock and from the task's metrics.
    public struct Timings: Codable, Equatable, Sendable {
        /// From the first `resume()` to the completion handler, retries and backoff included.
        public var total: Double
        /// TCP connect of the final exchange; nil when it reused a connection or had no metrics.
        public var connect: Double?
        /// TLS handshake of the final exchange; nil for http, reuse, or no metrics.
        public var tls: Double?
        /// From the final exchange's fetch start to the first response byte.
        public var firstByte: Double?

        /// Creates timings.
        public init(total: Double, connect: Double? = nil, tls: Double? = nil, firstByte: Double? = nil) {
            self.total = total
            self.connect = connect
            self.tls = tls
            self.firstByte = firstByte
        }

        // Nulls written out, as in the record itself.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(total, forKey: .total)
            try container.encode(connect, forKey: .connect)
            try container.encode(tls, forKey: .tls)
            try container.encode(firstByte, forKey: .firstByte)
        }
    }

    /// Where `--warc` archived the URL's final response: the record a later `--since` run's
    /// revisit refers to when the server answers 304.
    public struct Capture: Codable, Equatable, Sendable {
        /// Its WARC-Date, as the record has it.
        public var date: String
        /// Its WARC-Record-ID, `<urn:uuid:...>`: a response record, or a revisit.
        public var recordID: String

        /// Creates a capture.
        public init(date: String, recordID: String) {
            self.date = date
            self.recordID = recordID
        }
    }

    /// Why the URL failed.
    public struct Failure: Codable, Equatable, Sendable {
        /// `NetworkingError.Code` name (e.g. "connectionRefused", "unacceptableStatusCode").
        public var code: String
        /// The error's text.
        public var message: String
        /// The error's kind ("transport", "timeout", "tls", "validation", ...): the summary's
        /// grouping.
        public var kind: String

        /// Creates a failure.
        public init(code: String, message: String, kind: String) {
            self.code = code
            self.message = message
            self.kind = kind
        }

        /// Describes any error, using the code and kind of a `NetworkingError`; a URL that
        /// robots.txt disallows is code "disallowedByRobots", kind "robots".
        public init(_ error: any Error) {
            if let error = error as? RobotsDisallowed {
                self.init(code: "disallowedByRobots", message: error.description, kind: "robots")
            } else if let error = error as? NetworkingError {
                self.init(code: error.code.description, message: error.description, kind: Self.kind(of: error))
            } else {
                self.init(code: "\(type(of: error))", message: "\(error)", kind: Self.kind(of: error))
            }
        }

        /// The `kind` a failure of `error` has, without describing the error.
        static func kind(of error: any Error) -> String {
            if error is RobotsDisallowed { return "robots" }
            return (error as? NetworkingError).map { "\($0.kind)" } ?? "other"
        }
    }

    /// The URL exactly as the input gave it (the line trimmed of the spaces and tabs around it,
    /// or the argument), not as the URL parser re-encodes it. Bytes that are not UTF-8, which
    /// JSON cannot carry, are U+FFFD here and given exactly by `urlBase64`.
    public var url: String
    /// The input's bytes in base64 when they are not valid UTF-8; nil when `url` is exact.
    public var urlBase64: String?
    /// The URL requested: `url` parsed and percent-encoded (spaces and bytes outside ASCII
    /// escaped, an IDN host in punycode).
    public var requestURL: String
    /// Where the last request went: `requestURL` after the redirects followed (curl's
    /// `url_effective`).
    public var effectiveURL: String
    /// The final response's status; nil when no response arrived.
    public var status: Int?
    /// Body bytes received (after decompression).
    public var bytes: Int
    /// Where the time went.
    public var timings: Timings
    /// Why it failed; nil on success.
    public var error: Failure?
    /// Requests sent for this URL, which is what the servers received: every try (1 plus the
    /// retries), each counting the requests it sent, redirects followed and the library's
    /// replays on a fresh connection (a reused connection the server closed as the request
    /// arrived) included. A try that sent nothing (no connection) counts as one.
    public var attempts: Int
    /// The protocol of the final exchange, by its ALPN name: "h2" or "http/1.1"; nil when no
    /// response came (or the run measured nothing).
    public var httpProtocol: String?
    /// Where `--out-dir` kept the body; nil without it, or when the URL failed (a failed URL's
    /// body is not kept, so an error page never takes the name of the resource).
    public var file: String?
    /// The final response's ETag field, verbatim (quotes and `W/` kept); for a 304 without
    /// one, the validator the request carried. What `--since` sends back as If-None-Match.
    public var etag: String?
    /// The final response's Last-Modified field, verbatim; for a 304 without one, the date the
    /// request carried. What `--since` sends back as If-Modified-Since.
    public var lastModified: String?
    /// Whether the final response was a 304 to a conditional request (the user's own
    /// If-None-Match or If-Modified-Since, or `--since`'s): the copy the caller has is current,
    /// which counts as a success.
    public var notModified: Bool
    /// Where `--warc` archived the final response; nil without an archive or a response.
    public var capture: Capture?
    /// With `--cache`: how the cache took part, "hit" (a stored response answered, or
    /// another request's fetch of the same URL did), "revalidated" (the origin confirmed a
    /// stored one with a 304), "miss" (nothing usable was stored; a corrupt entry is one) or
    /// "bypass" (not looked up: a conditional or Range request, a method other than GET, the
    /// reload mode); nil without a cache.
    public var cache: String?

    /// Creates a record; `requestURL` and `effectiveURL` are `url` unless given.
    public init(url: String, status: Int?, bytes: Int, timings: Timings, error: Failure?, attempts: Int, file: String? = nil,
                urlBase64: String? = nil, requestURL: String? = nil, effectiveURL: String? = nil, httpProtocol: String? = nil,
                etag: String? = nil, lastModified: String? = nil, notModified: Bool = false, cache: String? = nil) {
        self.url = url
        self.urlBase64 = urlBase64
        self.requestURL = requestURL ?? url
        self.effectiveURL = effectiveURL ?? requestURL ?? url
        self.status = status
        self.bytes = bytes
        self.timings = timings
        self.error = error
        self.attempts = attempts
        self.file = file
        self.httpProtocol = httpProtocol
        self.etag = etag
        self.lastModified = lastModified
        self.notModified = notModified
        self.cache = cache
    }

    enum CodingKeys: String, CodingKey {
        case url, urlBase64, requestURL, effectiveURL, status, bytes, timings, error, attempts, file
        case etag, lastModified, notModified, capture, cache
        case httpProtocol = "protocol"
    }

    /// Reads a record; one written before a key existed reads as its absence (no validators,
    /// not a 304), so `--resume` and `--since` take the files of earlier versions.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        url = try container.decode(String.self, forKey: .url)
        urlBase64 = try container.decodeIfPresent(String.self, forKey: .urlBase64)
        requestURL = try container.decode(String.self, forKey: .requestURL)
        effectiveURL = try container.decode(String.self, forKey: .effectiveURL)
        status = try container.decodeIfPresent(Int.self, forKey: .status)
        bytes = try container.decode(Int.self, forKey: .bytes)
        timings = try container.decode(Timings.self, forKey: .timings)
        error = try container.decodeIfPresent(Failure.self, forKey: .error)
        attempts = try container.decode(Int.self, forKey: .attempts)
        file = try container.decodeIfPresent(String.self, forKey: .file)
        httpProtocol = try container.decodeIfPresent(String.self, forKey: .httpProtocol)
        etag = try container.decodeIfPresent(String.self, forKey: .etag)
        lastModified = try container.decodeIfPresent(String.self, forKey: .lastModified)
        notModified = try container.decodeIfPresent(Bool.self, forKey: .notModified) ?? false
        capture = try container.decodeIfPresent(Capture.self, forKey: .capture)
        cache = try container.decodeIfPresent(String.self, forKey: .cache)
    }

    /// Whether the URL counts as fetched: no error, and a 2xx or a 304 to a conditional request.
    public var succeeded: Bool {
        guard error == nil, let status else { return false }
        return (200..<300).contains(status) || notModified
    }

    // Explicit so a nil status or error is written as null rather than left out: every line has
    // every key, which is what column-oriented tools expect.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(url, forKey: .url)
        try container.encode(urlBase64, forKey: .urlBase64)
        try container.encode(requestURL, forKey: .requestURL)
        try container.encode(effectiveURL, forKey: .effectiveURL)
        try container.encode(status, forKey: .status)
        try container.encode(bytes, forKey: .bytes)
        try container.encode(timings, forKey: .timings)
        try container.encode(error, forKey: .error)
        try container.encode(attempts, forKey: .attempts)
        try container.encode(file, forKey: .file)
        try container.encode(httpProtocol, forKey: .httpProtocol)
        try container.encode(etag, forKey: .etag)
        try container.encode(lastModified, forKey: .lastModified)
        try container.encode(notModified, forKey: .notModified)
        try container.encode(capture, forKey: .capture)
        try container.encode(cache, forKey: .cache)
    }
}

extension FetchRecord.Timings {
    /// Total time plus what the final exchange of `metrics` measured.
    init(total: Double, metrics: TaskMetrics?) {
        self.init(total: total)
        guard let last = metrics?.transactions.last else { return }
        connect = Self.milliseconds(last.connectStartDate, last.connectEndDate)
        tls = Self.milliseconds(last.secureConnectionStartDate, last.secureConnectionEndDate)
        firstByte = Self.milliseconds(last.fetchStartDate, last.responseStartDate)
    }

    private static func milliseconds(_ start: Date?, _ end: Date?) -> Double? {
        guard let start, let end else { return nil }
        return end.timeIntervalSince(start) * 1000
    }
}
