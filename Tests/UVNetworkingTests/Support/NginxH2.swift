// nginx speaking HTTP/2: h2c by prior knowledge on one port (`listen ... http2`), with
// `keepalive_requests 100`, which in nginx 1.22 makes it say GOAWAY after every 100 streams of
// a connection; HTTP/2 over TLS on another (`listen ... ssl http2`, ALPN h2 and http/1.1, the
// standard test chain); and an HTTP/1.1 port on the same server for the start-up probe.

import Foundation
@testable import UVNetworking

/// A running nginx whose h2c port ends each connection after 100 streams.
struct NginxH2Server: Sendable {
    /// h2c (prior knowledge only).
    let port: Int
    /// HTTPS with ALPN (`ssl http2`): h2 to a client that offers it, HTTP/1.1 otherwise.
    let tlsPort: Int
    /// HTTP/1.1, same locations.
    let http1Port: Int
    /// Streams per connection before nginx's GOAWAY.
    static let streamsPerConnection = 100

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }
    /// The TLS port's URL: "localhost" is in the standard leaf's names.
    func tlsURL(_ path: String) -> String { "https://localhost:\(tlsPort)\(path)" }
}

extension TestServers {
    /// nginx with an h2c port that says GOAWAY every 100 streams and an `ssl http2` port.
    /// Location: `/hello` (200, "hello world\n"); anything else is 404.
    static func nginxH2() throws -> NginxH2Server { try sharedNginxH2.get() }

    private static let sharedNginxH2 = Result { try startNginxH2() }

    private static func startNginxH2() throws -> NginxH2Server {
        try launchNginx(name: "nginx-h2", probePath: "/hello", accepts: { $0 == NginxServer.helloBody }) { directory in
            let free = try freeLoopbackPorts(3)
            let port = free[0], http1Port = free[1], tlsPort = free[2]
            try FileManager.default.createDirectory(atPath: directory + "/tmp", withIntermediateDirectories: true)
            let pki = TestPKI.standard
            TestPKI.writePEM(pki.sentChain, to: directory + "/chain.pem")
            TestPKI.writePEM(pki.leaf.key, to: directory + "/key.pem")
            let locations = """
                    location = /hello { default_type text/plain; return 200 "hello world\\n"; }
                    location / { return 404; }
                """
            let config = nginxConfig(directory: directory, http: """
                access_log off;
                server {
                    listen 127.0.0.1:\(port) http2;
                    keepalive_requests \(NginxH2Server.streamsPerConnection);
                \(locations)
                }
                server {
                    listen 127.0.0.1:\(tlsPort) ssl http2;
                    ssl_certificate \(directory)/chain.pem;
                    ssl_certificate_key \(directory)/key.pem;
                    ssl_protocols TLSv1.2 TLSv1.3;
                \(locations)
                }
                server {
                    listen 127.0.0.1:\(http1Port);
                \(locations)
                }
            """)
            try config.write(toFile: directory + "/nginx.conf", atomically: false, encoding: .utf8)
            return (http1Port, NginxH2Server(port: port, tlsPort: tlsPort, http1Port: http1Port))
        }
    }
}
