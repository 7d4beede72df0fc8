import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A private nginx on 127.0.0.1: one worker, keep-alive without limits, no access log, serving
/// exactly `body` at `/` (and at `cachedPath`, cacheable for a day). Everything it writes stays in a temporary directory that `stop()`
/// removes. A watchdog shell stops it if this process dies without stopping it.
///
/// Optionally (the HTTPS benchmarks) also an HTTPS server on a second port with a certificate
/// made at start-up (`BenchCertificates`), serving the same body at `/`, the same body at
/// `/handshake` with an access log of TLS session reuse, and a large sparse file at
/// `largeFilePath` on both ports.
public final class NginxServer: @unchecked Sendable {
    /// The 12 bytes the peers' figures were measured with.
    public static let defaultBody = "hello world\n"

    public let port: Int
    public let body: String
    public let directory: String
    /// The HTTPS port, when started with `https: true`.
    public let httpsPort: Int?
    /// The PKI the HTTPS server uses, when started with `https: true`.
    public let certificates: BenchCertificates?
    /// The size of the file at `largeFilePath`, when started with one.
    public let largeFileBytes: Int64?
    /// Where the large file is served (on both ports).
    public static let largeFilePath = "/large"
    /// Where the plain server serves `body` with `Cache-Control: max-age=86400`, for a client
    /// cache to keep (uvbench --cache).
    public static let cachedPath = "/cached"
    /// Where the HTTPS server logs each `/handshake` request: "<connection> <requests on it>
    /// <protocol> <cipher> <group> <r if the TLS session was resumed, else .>" (see `HandshakeLog`).
    public var handshakeLogFile: String { "\(directory)/handshakes.log" }
    private let process: Process
    private let watchdog: Process?
    private var stopped = false

    public var url: URL { URL(string: "http://127.0.0.1:\(port)/")! }
    /// `https://127.0.0.1:PORT/` (the certificate names the IP address too).
    public var httpsURL: URL? { httpsPort.map { URL(string: "https://127.0.0.1:\($0)/")! } }
    public var masterPID: pid_t { process.processIdentifier }

    /// The worker process (nginx forks it after start-up), for its CPU time.
    public var workerPID: pid_t? { childProcesses(of: masterPID).first }

    /// Starts nginx and waits until it accepts connections.
    /// - Parameters:
    ///   - https: also serve HTTPS (TLS 1.2 and 1.3) on a second port.
    ///   - largeFileBytes: also serve a sparse file of this size at `largeFilePath`.
    public init(executable: String = "/usr/sbin/nginx", port requestedPort: Int? = nil, body: String = NginxServer.defaultBody,
                https: Bool = false, largeFileBytes: Int64? = nil) throws {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw BenchError("nginx not found at \(executable) (apt-get install nginx-light)")
        }
        port = try requestedPort ?? freeLoopbackPort()
        self.body = body
        var template = Array("\(NSTemporaryDirectory())/uvbench-nginx.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError("mkdtemp failed: errno \(errno)") }
        directory = String(cString: made)
        Cleanup.track(directory: directory)
        // nginx's workers run as an unprivileged user when started as root: they must reach the
        // directory.
        chmod(directory, 0o755)
        var httpsPort: Int?
        repeat { httpsPort = https ? try freeLoopbackPort() : nil } while httpsPort == port
        self.httpsPort = httpsPort
        certificates = https ? try BenchCertificates(directory: directory) : nil
        self.largeFileBytes = largeFileBytes
        if let largeFileBytes {
            // Sparse: no disk space and no time to write it; reads of the hole come from the page
            // cache (zeros), so the disk never limits a download.
            try FileManager.default.createDirectory(atPath: "\(directory)/files", withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: "\(directory)/files\(Self.largeFilePath)", contents: nil)
            guard truncate("\(directory)/files\(Self.largeFilePath)", off_t(largeFileBytes)) == 0 else {
                throw BenchError("could not size the large file: errno \(errno)")
            }
        }
        let config = Self.configuration(directory: directory, port: port, body: body, httpsPort: httpsPort,
                                        certificates: certificates, largeFile: largeFileBytes != nil)
        try config.write(toFile: "\(directory)/nginx.conf", atomically: true, encoding: .utf8)

        process = try launchQuietly(executable, ["-p", directory, "-c", "\(directory)/nginx.conf", "-e", "\(directory)/error.log"])

        watchdog = launchWatchdog(for: process.processIdentifier, removing: directory)

        let deadline = Date().addingTimeInterval(10)
        while !canConnect(port: port) || !(httpsPort.map(canConnect) ?? true) {
            if !process.isRunning || Date() > deadline {
                let log = (try? String(contentsOfFile: "\(directory)/error.log", encoding: .utf8)) ?? ""
                stop()
                throw BenchError("nginx did not start on 127.0.0.1:\(port)\n\(log)")
            }
            usleep(20_000)
        }
    }

    static func configuration(directory: String, port: Int, body: String, httpsPort: Int? = nil,
                              certificates: BenchCertificates? = nil, largeFile: Bool = false) -> String {
        // nginx reads \n, \t, \r, \" and \\ as escapes inside a quoted string.
        let escaped = body.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\r", with: "\\r")
            .replacingOccurrences(of: "\t", with: "\\t")
        // sendfile for plain HTTP, as any production nginx serves files; over TLS nginx encrypts
        // in user space whatever this says (no kTLS here).
        let largeFileLocation = largeFile ? """
                location = \(largeFilePath) {
                    root \(directory)/files;
                    default_type application/octet-stream;
                    sendfile on;
                    tcp_nopush on;
                }
        """ : ""
        var httpsServer = ""
        var logFormat = ""
        if let httpsPort, let certificates {
            logFormat = "log_format handshakes '$connection $connection_requests $ssl_protocol $ssl_cipher $ssl_curve $ssl_session_reused';"
            // Tickets (stateless) resume TLS 1.3 and 1.2 sessions; the shared cache also resumes
            // TLS 1.2 session IDs. Only /handshake is logged: the keep-alive rounds pay no log write.
            httpsServer = """
                server {
                    listen 127.0.0.1:\(httpsPort) ssl backlog=1024;
                    ssl_certificate \(certificates.certificateFile);
                    ssl_certificate_key \(certificates.keyFile);
                    ssl_protocols TLSv1.2 TLSv1.3;
                    ssl_session_tickets on;
                    ssl_session_cache shared:uvbench:4m;
                    ssl_session_timeout 1h;
                    location = / {
                        default_type text/plain;
                        return 200 "\(escaped)";
                    }
                    location = /handshake {
                        access_log \(directory)/handshakes.log handshakes;
                        default_type text/plain;
                        return 200 "\(escaped)";
                    }
            \(largeFileLocation)
                }
            """
        }
        return """
        worker_processes 1;
        daemon off;
        master_process on;
        pid \(directory)/nginx.pid;
        error_log \(directory)/error.log warn;
        events {
            worker_connections 4096;
        }
        http {
            access_log off;
            client_body_temp_path \(directory)/client_body;
            proxy_temp_path \(directory)/proxy;
            fastcgi_temp_path \(directory)/fastcgi;
            uwsgi_temp_path \(directory)/uwsgi;
            scgi_temp_path \(directory)/scgi;
            keepalive_requests 1000000;
            keepalive_timeout 60s;
            server_tokens off;
            \(logFormat)
            server {
                listen 127.0.0.1:\(port) backlog=1024;
                location = / {
                    default_type text/plain;
                    return 200 "\(escaped)";
                }
                location = \(Self.cachedPath) {
                    default_type text/plain;
                    add_header Cache-Control "max-age=86400";
                    return 200 "\(escaped)";
                }
        \(largeFileLocation)
            }
        \(httpsServer)
        }

        """
    }

    /// Reads the large file once, so that its pages are in the page cache before anything is
    /// timed: the first read of a sparse file makes nginx wait while the kernel fills them.
    public func warmLargeFile() {
        guard largeFileBytes != nil else { return }
        let fd = open("\(directory)/files\(Self.largeFilePath)", O_RDONLY)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1 << 20, alignment: 4096)
        defer { buffer.deallocate() }
        while read(fd, buffer, 1 << 20) > 0 {}
    }

    /// Stops nginx (fast shutdown), the watchdog, and removes the directory. Idempotent.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        stopServer(process, watchdog: watchdog, directory: directory)
    }

    deinit { stop() }
}
