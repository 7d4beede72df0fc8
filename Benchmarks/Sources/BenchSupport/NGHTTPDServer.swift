import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A private nghttpd (Debian's nghttp2-server): the HTTP/2 server of the h2 benchmarks. One
/// worker, serving `body` at `/` from a document root of its own, over h2c or over TLS with a
/// throwaway CA. nginx's HTTP/2 is slower than the clients measured against it on this machine,
/// so it would measure nginx; nghttpd is not. A watchdog shell stops it if this process dies
/// without stopping it.
public final class NGHTTPDServer: @unchecked Sendable {
    public let port: Int
    public let body: String
    public let directory: String
    /// The CA a client trusts, when serving TLS.
    public let certificates: BenchCertificates?
    /// SETTINGS_MAX_CONCURRENT_STREAMS the server announces.
    public let maximumStreams: Int
    private let process: Process
    private let watchdog: Process?
    private var stopped = false

    public var url: URL { URL(string: "\(certificates == nil ? "http" : "https")://127.0.0.1:\(port)/")! }
    public var pid: pid_t { process.processIdentifier }

    /// `echoUpload`: nghttpd's `--echo-upload`, a POST or PUT answered with its own body once
    /// that body has ended.
    public init(executable: String = "/usr/sbin/nghttpd", tls: Bool = false, maximumStreams: Int = 100,
                body: String = NginxServer.defaultBody, echoUpload: Bool = false) throws {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw BenchError("nghttpd not found at \(executable) (apt-get install nghttp2-server)")
        }
        port = try freeLoopbackPort()
        self.body = body
        self.maximumStreams = maximumStreams
        var template = Array("\(NSTemporaryDirectory())/uvbench-nghttpd.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError("mkdtemp failed: errno \(errno)") }
        directory = String(cString: made)
        Cleanup.track(directory: directory)
        try FileManager.default.createDirectory(atPath: "\(directory)/htdocs", withIntermediateDirectories: true)
        try body.write(toFile: "\(directory)/htdocs/index.html", atomically: true, encoding: .utf8)
        certificates = tls ? try BenchCertificates(directory: directory) : nil

        var arguments = ["-n", "1", "-m", String(maximumStreams), "-d", "\(directory)/htdocs", "--address=127.0.0.1"]
        if echoUpload { arguments.append("--echo-upload") }
        if let certificates {
            arguments += [String(port), certificates.keyFile, certificates.certificateFile]
        } else {
            arguments += ["--no-tls", String(port)]
        }
        process = try launchQuietly(executable, arguments)
        watchdog = launchWatchdog(for: process.processIdentifier, removing: directory)

        let deadline = Date().addingTimeInterval(10)
        while !canConnect(port: port) {
            if !process.isRunning || Date() > deadline {
                stop()
                throw BenchError("nghttpd did not start on 127.0.0.1:\(port) (\(arguments.joined(separator: " ")))")
            }
            usleep(20_000)
        }
    }

    /// Stops nghttpd and removes its directory. Idempotent.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        stopServer(process, watchdog: watchdog, directory: directory)
    }

    deinit { stop() }
}
