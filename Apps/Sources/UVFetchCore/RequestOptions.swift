#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Foundation
import HTTPTypes
import UVNetworking

/// The curl-like options that shape every request and the session's TLS checks.
///
/// A `ParsableArguments` group in the library target rather than the executable so tests can
/// parse real command lines and send the requests they describe.
public struct RequestOptions: ParsableArguments, Sendable {
    @Option(name: .customShort("X"), help: ArgumentHelp("Request method (default GET, or POST with -d).", valueName: "method"))
    public var method: String?

    @Option(name: .customShort("H"), help: ArgumentHelp("Request header \"Name: value\"; repeatable.", valueName: "header"))
    public var headers: [String] = []

    @Option(name: [.customShort("d"), .customLong("data")], help: "Request body, sent as given.")
    public var data: String?

    @Option(name: .customLong("data-binary"), help: ArgumentHelp("Request body: DATA, or @FILE for a file's bytes.", valueName: "data"))
    public var dataBinary: String?

    @Option(name: [.customShort("A"), .customLong("user-agent")], help: ArgumentHelp("The User-Agent of every request, the robots.txt fetch included (a -H User-Agent wins); with --robots its product token, up to the first / or space, is the name matched in robots.txt.", valueName: "name"))
    public var userAgent: String = "uvfetch"

    /// The User-Agent every request sends: `-H`'s last User-Agent field, else `userAgent`.
    public var sentUserAgent: String {
        headers.reversed().lazy.compactMap(Self.splitHeader).first { $0.0.caseInsensitiveCompare("User-Agent") == .orderedSame }?.1
            ?? userAgent
    }

    @Option(name: .customShort("u"), help: ArgumentHelp("Basic authentication.", valueName: "user:password"))
    public var user: String?

    @Option(name: .long, help: ArgumentHelp("Whole-request timeout in seconds, as curl's --max-time.", valueName: "seconds"))
    public var timeout: Double = 60

    @Option(name: .long, help: ArgumentHelp("Retries of idempotent requests after transport errors, timeouts and 408, 429, 500, 502, 503, 504: after the server's Retry-After (its host's other URLs wait too), else an exponential backoff.", valueName: "n"))
    public var retries: Int = 0

    @Option(name: .customLong("retry-max-wait"), help: ArgumentHelp("The longest Retry-After waited for (default 60); a server asking for more ends the URL with its status.", valueName: "seconds"))
    public var retryMaxWait: Double = 60

    @Option(name: .customLong("cacert"), help: ArgumentHelp("Also trust the CA certificates in this PEM file.", valueName: "file"))
    public var caCertificateFile: String?

    @Flag(name: [.customShort("k"), .long], help: "Accept any server certificate and host name.")
    public var insecure = false

    @Option(name: .customLong("pin-sha256"), help: ArgumentHelp("Pin a public key: base64 SHA-256 of its SubjectPublicKeyInfo; repeatable.", valueName: "base64"))
    public var pinnedKeys: [String] = []

    @Option(name: [.customShort("x"), .long], help: ArgumentHelp("Send every request through this HTTP proxy (http://[user:password@]host[:port]), loopback hosts included. Without it the environment's http_proxy, https_proxy and no_proxy apply, loopback excepted.", valueName: "url"))
    public var proxy: String?

    @Option(name: .customLong("noproxy"), help: ArgumentHelp("Hosts that never use a proxy, comma-separated (* for all), as curl's --noproxy.", valueName: "hosts"))
    public var noProxy: String?

    @Option(name: .customLong("dns-servers"), help: ArgumentHelp("DNS servers to ask instead of resolv.conf's, comma-separated, as curl's --dns-servers: 127.0.0.1, 127.0.0.1:5353, [::1]:53. /etc/hosts still comes first; a bad entry fails every URL that needs DNS (dnsFailure).", valueName: "list"))
    public var dnsServers: String?

    @Option(name: .customLong("dns-timeout"), help: ArgumentHelp("Seconds one host name's look-up may take before its URLs fail with dnsTimeout (default 5); resolv.conf's timeout and attempts still apply within it.", valueName: "seconds"))
    public var dnsTimeout: Double?

    @Option(name: .customLong("resolve"), help: ArgumentHelp("Connect to HOST at these addresses instead of asking DNS, as curl's --resolve (here for every port: PORT may be *). Several addresses race (Happy Eyeballs); repeatable.", valueName: "host:port:addr[,addr]..."))
    public var resolve: [String] = []

    @Flag(name: .customLong("http2"), help: "HTTP/2 where the server agrees (the default): ALPN offers h2 then http/1.1 on https; http stays HTTP/1.1.")
    public var http2 = false

    @Flag(name: .customLong("http1.1"), help: "HTTP/1.1 only: https offers only http/1.1.")
    public var http1_1 = false

    @Flag(name: .customLong("http2-prior-knowledge"), help: "HTTP/2 on http too, without asking (h2c, for servers known to speak it); https as --http2.")
    public var http2PriorKnowledge = false

    /// The session's HTTP versions, from --http2, --http1.1 and --http2-prior-knowledge.
    public var httpVersion: HTTPVersionPolicy {
        if http1_1 { return .http1_1 }
        if http2PriorKnowledge { return .http2PriorKnowledge }
        return .http2
    }

    /// Creates the default options (GET, no headers, no body).
    public init() {}

    /// Checks what ArgumentParser cannot: header syntax, the body sources and the numbers.
    public func validate() throws {
        for header in headers where Self.splitHeader(header) == nil {
            throw ValidationError("-H needs \"Name: value\", got: \(header)")
        }
        if data != nil && dataBinary != nil { throw ValidationError("give -d or --data-binary, not both") }
        if [http2, http1_1, http2PriorKnowledge].filter({ $0 }).count > 1 {
            throw ValidationError("give one of --http2, --http1.1 and --http2-prior-knowledge")
        }
        for entry in resolve where ResolveOption(entry) == nil {
            throw ValidationError("--resolve needs host:port:address[,address]..., got: \(entry)")
        }
        if let user, !user.contains(":") { throw ValidationError("-u needs user:password") }
        // A field value: no control characters (the request would be refused for each URL).
        guard !userAgent.isEmpty, !userAgent.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw ValidationError("-A needs a name without control characters")
        }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
        guard retries >= 0 else { throw ValidationError("--retries cannot be negative") }
        guard retryMaxWait >= 0, retryMaxWait.isFinite else { throw ValidationError("--retry-max-wait must be zero or more seconds") }
        if let dnsTimeout, !(dnsTimeout > 0 && dnsTimeout.isFinite) { throw ValidationError("--dns-timeout must be positive") }
        // A typo in a pin would otherwise only show as every https URL failing pinning.
        for pin in pinnedKeys where Data(base64Encoded: pin)?.count != 32 {
            throw ValidationError("--pin-sha256 needs the base64 of a SHA-256 digest, got: \(pin)")
        }
        if let method, HTTPRequest.Method(method) == nil { throw ValidationError("not an HTTP method: \(method)") }
        if let proxy, proxyURL(proxy) == nil {
            throw ValidationError("-x needs an http://host[:port] proxy URL, got: \(proxy)")
        }
    }

    /// `--proxy` as a URL: http:// assumed without a scheme (as curl does); nil for another
    /// scheme, since proxies are reached in clear, or without a host.
    private func proxyURL(_ text: String) -> URL? {
        guard let url = URL(string: text.contains("://") ? text : "http://" + text),
              url.scheme?.lowercased() == "http", let host = url.host, !host.isEmpty else { return nil }
        return url
    }

    /// The body every request of a run sends, made once from the options.
    public enum Body: Sendable {
        /// Bytes in memory, shared by every request: `Data` is copy-on-write, and the session
        /// sends a body larger than one write from it in chunks, never copying it per request.
        case data(Data)
        /// A large file, read by each request from the file opened once (`FileBody`).
        case file(StreamedBody)
    }

    /// `--data-binary @FILE` of a regular file up to this size is read into memory once, so a
    /// small body still leaves with its request head in one write; a larger one is streamed
    /// from the file by each request, so a file of any size costs no memory.
    static let largestFileBodyInMemory = 1 << 20

    /// The request body: `-d` text, `--data-binary` text, or the file named after `@`, opened
    /// here once. A large regular file is streamed from the open file by every request; a small
    /// one, or one that can be read only once (`@/dev/stdin`, a FIFO, `@<(cmd)`), is read whole.
    /// - Throws: `FetchInputError.unreadable` when the `@file` cannot be opened or read, or is
    ///   a directory.
    public func body() throws(FetchInputError) -> Body? {
        if let data { return .data(Data(data.utf8)) }
        guard let dataBinary else { return nil }
        guard dataBinary.hasPrefix("@") else { return .data(Data(dataBinary.utf8)) }
        let path = String(dataBinary.dropFirst())
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        let status = try InputFile.status(of: descriptor, name: path)
        if status.st_mode & S_IFMT == S_IFREG && status.st_size > Self.largestFileBodyInMemory {
            return .file(FileBody(path: path, descriptor: descriptor, length: Int64(status.st_size)).streamedBody)
        }
        let file = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do { return .data(try file.readToEnd() ?? Data()) } catch {
            throw .unreadable(path: path, reason: "\(error.localizedDescription)")
        }
    }

    /// The request for `url`, with `body` from `body()` (made once, shared by every request).
    public func makeRequest(for url: URL, body: Body?) -> Request {
        let name = method ?? (body == nil ? "GET" : "POST")
        var request = Request(url: url, method: HTTPRequest.Method(name) ?? .get, timeoutInterval: .infinity)
        switch body {
        case .data(let data): request.body = data
        case .file(let stream): request.bodyStream = stream
        case nil: break
        }
        // curl's --max-time: a limit on the whole request, and no inactivity timeout besides.
        request.totalTimeoutInterval = timeout
        // curl's default for -d, which servers such as httpbin use to decide how to read the body.
        if data != nil { request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type") }
        if let user {
            request.setValue("Basic " + Data(user.utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
        }
        // Before -H, which may replace it (as curl's -H does its -A): `sentUserAgent`.
        request.setValue(userAgent, forHTTPHeaderField: "User-Agent")
        for header in headers {
            guard let (name, value) = Self.splitHeader(header) else { continue }
            request.setValue(value, forHTTPHeaderField: name)
        }
        return request
    }

    /// The library's retry rules with `--retries` and `--retry-max-wait`: only idempotent
    /// methods (RFC 9110 §9.2.2; never POST or PATCH), after transport failures, timeouts and
    /// the statuses that say "try later".
    public var retryPolicy: RetryPolicy {
        var policy = RetryPolicy(retryLimit: retries)
        policy.maximumRetryAfter = retryMaxWait
        return policy
    }

    /// Adds `--cacert` to the session's trust store, sets `--proxy` / `--noproxy` (the
    /// configuration's default already holds the environment's proxies), `--resolve` and
    /// `--dns-servers` and `--dns-timeout`.
    public func apply(to configuration: inout SessionConfiguration) {
        if let caCertificateFile { configuration.tls.additionalTrustedCAFiles.append(caCertificateFile) }
        configuration.httpVersion = httpVersion
        if let proxy, let url = proxyURL(proxy) {
            // Explicit, so loopback is not excepted: asking for a proxy means wanting it, even
            // for a local URL (curl's -x behaves so too).
            configuration.proxy = ProxyConfiguration(httpProxy: url, httpsProxy: url)
        }
        if let dnsServers {
            configuration.dnsServers = dnsServers.split(separator: ",", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
        }
        if let dnsTimeout { configuration.dnsTimeout = dnsTimeout }
        if let noProxy {
            configuration.proxy.noProxy = noProxy.split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        for case let entry? in resolve.map(ResolveOption.init) { configuration.hostAddressOverrides[entry.host] = entry.addresses }
    }

    /// The security policy for `--insecure` and `--pin-sha256`, or nil for the default.
    public func securityPolicy() -> SecurityPolicy? {
        guard insecure || !pinnedKeys.isEmpty else { return nil }
        var policy = SecurityPolicy(pinningMode: pinnedKeys.isEmpty ? .none : .publicKey)
        policy.pinnedPublicKeyHashes = Set(pinnedKeys)
        if insecure {
            policy.allowInvalidCertificates = true
            policy.validatesDomainName = false
        }
        return policy
    }

    /// "Name: value" split at the first colon, both trimmed; nil without a colon or a name.
    static func splitHeader(_ text: String) -> (String, String)? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let name = text[..<colon].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { return nil }
        return (name, text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }
}
