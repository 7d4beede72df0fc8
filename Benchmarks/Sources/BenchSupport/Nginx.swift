import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A private nginx on 127.0.0.1: one worker, keep-alive without limits, no access log, serving
/// exactly `body` at `/`. Everything it writes stays in a temporary directory that `stop()`
/// removes. A watchdog shell stops it if this process dies without stopping it.
public final class NginxServer: @unchecked Sendable {
    /// The 12 bytes the peers' figures were measured with.
    public static let defaultBody = "hello world\n"

    public let port: Int
    public let body: String
    public let directory: String
    private let process: Process
    private let watchdog: Process?
    private var stopped = false

    public var url: URL { URL(string: "http://127.0.0.1:\(port)/")! }
    public var masterPID: pid_t { process.processIdentifier }

    /// The worker process (nginx forks it after start-up), for its CPU time.
    public var workerPID: pid_t? { childProcesses(of: masterPID).first }

    /// Starts nginx and waits until it accepts connections.
    public init(executable: String = "/usr/sbin/nginx", port requestedPort: Int? = nil, body: String = NginxServer.defaultBody) throws {
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
        let config = Self.configuration(directory: directory, port: port, body: body)
        try config.write(toFile: "\(directory)/nginx.conf", atomically: true, encoding: .utf8)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-p", directory, "-c", "\(directory)/nginx.conf", "-e", "\(directory)/error.log"]
        process.environment = childEnvironment()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        Cleanup.track(pid: process.processIdentifier)

        // If this process dies without calling stop() (a crash, SIGKILL), nginx goes too.
        let watchdog = Process()
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        watchdog.arguments = ["-c", "while kill -0 \"$0\" 2>/dev/null; do sleep 1; done; kill -TERM \"$1\" 2>/dev/null; rm -rf \"$2\"",
                              String(getpid()), String(process.processIdentifier), directory]
        watchdog.environment = childEnvironment()
        watchdog.standardInput = FileHandle.nullDevice
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        try? watchdog.run()
        self.watchdog = watchdog.isRunning ? watchdog : nil
        if let watchdog = self.watchdog { Cleanup.track(pid: watchdog.processIdentifier) }

        let deadline = Date().addingTimeInterval(10)
        while !canConnect(port: port) {
            if !process.isRunning || Date() > deadline {
                let log = (try? String(contentsOfFile: "\(directory)/error.log", encoding: .utf8)) ?? ""
                stop()
                throw BenchError("nginx did not start on 127.0.0.1:\(port)\n\(log)")
            }
            usleep(20_000)
        }
    }

    static func configuration(directory: String, port: Int, body: String) -> String {
        // nginx reads \n, \t, \r, \" and \\ as escapes inside a quoted string.
        let escaped = body.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\r", with: "\\r")
            .replacingOccurrences(of: "\t", with: "\\t")
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
            server {
                listen 127.0.0.1:\(port) backlog=1024;
                location = / {
                    default_type text/plain;
                    return 200 "\(escaped)";
                }
            }
        }

        """
    }

    /// Stops nginx (fast shutdown), the watchdog, and removes the directory. Idempotent.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        if process.isRunning {
            process.terminate()
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        Cleanup.untrack(pid: process.processIdentifier)
        if let watchdog {
            if watchdog.isRunning { watchdog.terminate() }
            Cleanup.untrack(pid: watchdog.processIdentifier)
        }
        try? FileManager.default.removeItem(atPath: directory)
        Cleanup.untrack(directory: directory)
    }

    deinit { stop() }
}
