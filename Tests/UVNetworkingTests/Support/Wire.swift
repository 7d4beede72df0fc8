// The protocols the end-to-end suites run over. A suite that takes a `Wire` argument runs each
// test once per protocol against the same httpbin: straight to it over HTTP/1.1, and through
// nginx's `ssl http2` front over HTTP/2, which a session reaches as users do, by ALPN on https.
// The test's body is the same for both, so anything the task model does differently over HTTP/2
// shows as a failure of that argument, not as a copy of the test that drifted.

import Foundation
import Testing
@testable import UVNetworking

/// A protocol an end-to-end test runs over (a test argument).
enum Wire: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// HTTP/1.1, to httpbin itself on http://127.0.0.1.
    case http1_1 = "http/1.1"
    /// HTTP/2 over TLS (ALPN "h2"), to nginx's front for the same httpbin on https://localhost.
    case h2

    var testDescription: String { rawValue }

    /// httpbin's base URL over this protocol, with no trailing slash.
    func httpbinBaseURL() throws -> String {
        switch self {
        case .http1_1: try TestServers.httpbin().baseURL
        case .h2: try TestServers.httpbinH2().baseURL
        }
    }

    /// The URL of one of nginx's own locations over this protocol: the plain nginx
    /// (`TestServers.nginx()`) for HTTP/1.1, the HTTP/2 front for h2, which serves the same
    /// bodies at `/hello`, `/large`, `/large-chunked` and `/no-content`.
    func nginxURL(_ path: String) throws -> String {
        switch self {
        case .http1_1: try TestServers.nginx().baseURL + path
        case .h2: try TestServers.httpbinH2().baseURL + path
        }
    }

    /// A session that reaches httpbin over either protocol: both sessions trust the test PKI
    /// (and nothing else), so a redirect from one origin to the other works from both.
    static func configure(_ configuration: inout SessionConfiguration) {
        configuration.tls.trustsSystemCAs = false
        configuration.tls.additionalTrustedCAFiles = [TestPKI.standard.rootPEMPath]
    }

    /// A harness whose session `Wire.configure` set up, then `more`.
    func harness(_ more: (inout SessionConfiguration) -> Void = { _ in },
                 makeManager: ((SessionConfiguration) -> SessionManager)? = nil) -> ClientHarness {
        ClientHarness({ configuration in
            Wire.configure(&configuration)
            more(&configuration)
        }, makeManager: makeManager)
    }

    /// Checks that a response came over this protocol, in ALPN's names ("h2", "http/1.1").
    func expectSpoken(_ outcome: Outcome, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(outcome.networkProtocolName == rawValue, "the response came over \(outcome.networkProtocolName ?? "nothing")",
                sourceLocation: sourceLocation)
    }
}

/// nginx as an HTTP/2 front for httpbin (`TestServers.httpbinH2()`).
struct HTTPBinH2Front: Sendable {
    /// HTTPS with ALPN (`ssl http2`): h2 to a client that offers it, HTTP/1.1 otherwise.
    let tlsPort: Int
    /// h2c by prior knowledge (`listen ... http2`).
    let h2cPort: Int
    /// HTTPS without `http2`: HTTP/1.1 whatever the client offers.
    let http1TLSPort: Int
    /// "localhost" is in the standard test leaf's names.
    var baseURL: String { "https://localhost:\(tlsPort)" }
    var h2cBaseURL: String { "http://127.0.0.1:\(h2cPort)" }
    var http1TLSBaseURL: String { "https://localhost:\(http1TLSPort)" }
}

extension TestServers {
    /// nginx in front of `httpbin()`: every path goes to httpbin over HTTP/1.1, unbuffered so
    /// that streamed and slow bodies (/stream-bytes, /drip, /range?duration=) stay streamed, and
    /// httpbin's absolute redirects to itself are rewritten to the front's own paths. Request
    /// bodies are read whole first (nginx's default), so httpbin sees a Content-Length. A few
    /// locations are nginx's own, as `nginx()` has them: `/hello`, `/large` (1 MiB),
    /// `/large-chunked` (the same with no length) and `/no-content` (204).
    static func httpbinH2() throws -> HTTPBinH2Front { try sharedHTTPBinH2.get() }

    private static let sharedHTTPBinH2 = Result { try startHTTPBinH2() }

    private static func startHTTPBinH2() throws -> HTTPBinH2Front {
        let httpbin = try TestServers.httpbin()
        return try launchNginx(name: "httpbin-h2", probePath: "/get", accepts: { $0.contains("\"url\"") }) { directory in
            let free = try freeLoopbackPorts(4)
            let tlsPort = free[0], h2cPort = free[1], probePort = free[2], http1TLSPort = free[3]
            try FileManager.default.createDirectory(atPath: directory + "/tmp", withIntermediateDirectories: true)
            let pki = TestPKI.standard
            TestPKI.writePEM(pki.sentChain, to: directory + "/chain.pem")
            TestPKI.writePEM(pki.leaf.key, to: directory + "/key.pem")
            let upstream = "http://127.0.0.1:\(httpbin.port)"
            try FileManager.default.createDirectory(atPath: directory + "/www", withIntermediateDirectories: true)
            try Data(NginxServer.largeBody(count: NginxServer.largeSize)).write(to: URL(fileURLWithPath: directory + "/www/large.bin"))
            let location = """
                    location = /hello { default_type text/plain; return 200 "hello world\\n"; }
                    location = /large { alias \(directory)/www/large.bin; }
                    location = /large-chunked {
                        alias \(directory)/www/large.bin;
                        sub_filter_types *; sub_filter "no-such-text" "";
                    }
                    location = /no-content { return 204; }
                    location / {
                        proxy_pass \(upstream);
                        proxy_http_version 1.1;
                        proxy_buffering off;
                        proxy_redirect \(upstream)/ /;
                        proxy_read_timeout 60s;
                    }
                """
            let config = nginxConfig(directory: directory, http: """
                access_log off;
                server {
                    listen 127.0.0.1:\(tlsPort) ssl http2;
                    ssl_certificate \(directory)/chain.pem;
                    ssl_certificate_key \(directory)/key.pem;
                    ssl_protocols TLSv1.2 TLSv1.3;
                \(location)
                }
                server {
                    listen 127.0.0.1:\(http1TLSPort) ssl;
                    ssl_certificate \(directory)/chain.pem;
                    ssl_certificate_key \(directory)/key.pem;
                    ssl_protocols TLSv1.2 TLSv1.3;
                \(location)
                }
                server {
                    listen 127.0.0.1:\(h2cPort) http2;
                \(location)
                }
                server {
                    listen 127.0.0.1:\(probePort);
                \(location)
                }
            """)
            try config.write(toFile: directory + "/nginx.conf", atomically: false, encoding: .utf8)
            return (probePort, HTTPBinH2Front(tlsPort: tlsPort, h2cPort: h2cPort, http1TLSPort: http1TLSPort))
        }
    }
}
