// Real HTTP servers (nginx, httpbin) shared by the whole test process: started lazily the first
// time a test asks, reused by every later test, stopped at process exit.
//
// Orphans: a test process can die without running atexit (kill -9, a crash, a hung test
// killed by CI), so each server runs under a tiny /bin/sh supervisor that holds the read end of
// a "lifeline" socket on fd 3. Only this process holds the write end (O_CLOEXEC, so no other
// child inherits it). When this process exits for any reason the kernel closes the write end,
// the supervisor's `read` sees EOF and it terminates the server (TERM, then KILL after 5 s)
// and deletes the server's temp directory. At a normal exit, atexit closes the lifeline
// explicitly and waits for the supervisors, so nothing outlives `swift test`.

#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// Why a shared test server is unavailable.
struct TestServerError: Error, CustomStringConvertible {
    let description: String
}

/// nginx as started by `TestServers.nginx()`.
struct NginxServer: Sendable {
    let port: Int
    var baseURL: String { "http://127.0.0.1:\(port)" }
    /// The server's temp directory (config, docroot, error.log).
    let directory: String

    /// The body of `/`, `/hello`, `/close`, `/idle-close` and `/chunked`.
    static let helloBody = "hello world\n"
    /// Sizes of `/large` (and `/large-chunked`, `/large-slow`) and `/large-8m`.
    static let largeSize = 1 << 20
    static let large8MSize = 8 << 20
    /// Size of `/sparse-2g`: a sparse file of zeros (it takes no disk space at the server).
    static let sparseSize: Int64 = 2 << 30
    /// `/large-slow` sends its first `slowAfter` bytes at once, then `slowRate` bytes a second.
    static let slowAfter = 256 << 10
    static let slowRate = 512 << 10

    /// The content of `/large` and `/large-8m`: byte i is `i % 251` (a prime, so the pattern
    /// does not line up with power-of-two buffer sizes and misplaced chunks show).
    static func largeBody(count: Int) -> [UInt8] {
        // Repeat one period rather than mapping every index: 8 Mi closure calls take about a
        // second in a debug build.
        let period = (0..<251).map { UInt8($0) }
        var body: [UInt8] = []
        body.reserveCapacity(count)
        while body.count < count { body += period.prefix(count - body.count) }
        return body
    }
}

/// httpbin as started by `TestServers.httpbin()`.
struct HTTPBinServer: Sendable {
    let port: Int
    var baseURL: String { "http://127.0.0.1:\(port)" }
}

enum TestServers {
    /// nginx on 127.0.0.1:<free port>: one process (`master_process off`), `daemon off`,
    /// config, docroot, logs and temp paths in a private temp dir (nothing under /var).
    ///
    /// Locations (any method; request bodies of any size are read and discarded):
    /// - `/`, `/hello`: 200, exactly the 12 bytes "hello world\n" with Content-Length; keep-alive
    ///   (keepalive_requests 1000000, keepalive_timeout 60 s).
    /// - `/close`: the same response, then nginx closes (`Connection: close`).
    /// - `/idle-close`: the same response, but nginx closes the connection after 1 s idle
    ///   (location keepalive_timeout 1s): a pooled connection goes stale, for retry tests.
    /// - `/no-content`: 204. `/not-modified`: 304.
    /// - `/large`: 1 MiB static file, `/large-8m`: 8 MiB; byte i is `i % 251`
    ///   (`NginxServer.largeBody(count:)`), with Content-Length. Like every static file here, they
    ///   carry ETag, Last-Modified and `Accept-Ranges: bytes`, and answer Range and If-Range.
    /// - `/large-slow`: the 1 MiB file, rate-limited after its first 256 KiB (512 KiB/s), so a
    ///   download can be caught halfway.
    /// - `/sparse-2g`: a 2 GiB sparse file of zeros.
    /// - `/chunked`: "hello world\n" and `/large-chunked`: the 1 MiB file, both sent with
    ///   Transfer-Encoding: chunked (nginx's sub_filter drops the length).
    /// - `/redirect`: 302 to `/hello`.
    /// - anything else: 404.
    static func nginx() throws -> NginxServer { try sharedNginx.get() }

    /// httpbin (Flask's development server) on 127.0.0.1:<free port>, via
    /// `/usr/bin/python3 -m httpbin.core --host 127.0.0.1 --port N`; returns once `/get` answers.
    static func httpbin() throws -> HTTPBinServer { try sharedHTTPBin.get() }

    // Swift runs a static's initialiser once, thread-safely, on first use; the Result caches
    // failures too, so every test sees the same error instead of retrying a broken start.
    private static let sharedNginx = Result { try startNginx() }
    private static let sharedHTTPBin = Result { try startHTTPBin() }

    static let installHint = "run `make test`, which installs nginx-light / python3-httpbin"

    private static func startNginx() throws -> NginxServer {
        try launchNginx(name: "nginx", probePath: "/hello", accepts: { $0 == NginxServer.helloBody }) { directory in
            let port = try freeLoopbackPort()
            try writeNginxFiles(in: directory, port: port)
            return (port, NginxServer(port: port, directory: directory))
        }
    }

    /// Starts nginx on the configuration `write` puts in a fresh temp directory, and returns
    /// `write`'s fixture once GET `probePath` on its probe port answers as `accepts` wants.
    /// Ports are probed free before nginx binds them, so another process can win the race: then
    /// it tries again with new ports, up to five times.
    static func launchNginx<Fixture>(name: String, probePath: String, accepts: (String) -> Bool,
                                     write: (_ directory: String) throws -> (probePort: Int, fixture: Fixture)) throws -> Fixture {
        let binary = "/usr/sbin/nginx"
        guard access(binary, X_OK) == 0 else { throw TestServerError(description: "\(binary) is missing: \(installHint)") }
        var failures: [String] = []
        for _ in 1...5 {
            let directory = try makeTemporaryDirectory(prefix: "uvnetworking-\(name)")
            let (probePort, fixture) = try write(directory)
            let errorLog = directory + "/error.log"
            let server = try SupervisedProcess.launch(
                [binary, "-p", directory + "/", "-c", directory + "/nginx.conf", "-e", errorLog],
                directory: directory)
            let outcome = waitUntilServing(server, port: probePort, path: probePath, timeout: 15, accepts: accepts)
            if outcome == nil { return fixture }
            let log = (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? ""
            let output = server.output()
            server.release()
            try? FileManager.default.removeItem(atPath: directory)
            failures.append("\(outcome!); error.log: \(log)\(output.isEmpty ? "" : "; output: \(output)")")
            guard log.contains("Address already in use") else { break }
        }
        throw TestServerError(description: "\(name) did not start: " + failures.joined(separator: " | "))
    }

    private static func startHTTPBin() throws -> HTTPBinServer {
        let python = "/usr/bin/python3"
        guard access(python, X_OK) == 0,
              FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/httpbin/core.py") else {
            throw TestServerError(description: "httpbin is missing: \(installHint)")
        }
        var failures: [String] = []
        for _ in 1...5 {
            let directory = try makeTemporaryDirectory(prefix: "uvnetworking-httpbin")
            let port = try freeLoopbackPort()
            let server = try SupervisedProcess.launch(
                [python, "-m", "httpbin.core", "--host", "127.0.0.1", "--port", String(port)],
                directory: directory,
                environment: ["PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"])
            // Flask needs about a second to import; allow generously for loaded CI machines.
            let outcome = waitUntilServing(server, port: port, path: "/get", timeout: 30) { body in
                body.contains("\"url\"")
            }
            if outcome == nil { return HTTPBinServer(port: port) }
            let output = server.output()
            server.release()
            try? FileManager.default.removeItem(atPath: directory)
            failures.append("\(outcome!); output: \(output)")
            guard output.contains("Address already in use") else { break }
        }
        throw TestServerError(description: "httpbin did not start: " + failures.joined(separator: " | "))
    }

    private static func writeNginxFiles(in directory: String, port: Int) throws {
        let docroot = directory + "/www"
        for sub in ["www", "tmp"] {
            try FileManager.default.createDirectory(atPath: directory + "/" + sub, withIntermediateDirectories: true)
        }
        try Data(NginxServer.largeBody(count: NginxServer.largeSize)).write(to: URL(fileURLWithPath: docroot + "/large.bin"))
        try Data(NginxServer.largeBody(count: NginxServer.large8MSize)).write(to: URL(fileURLWithPath: docroot + "/large-8m.bin"))
        guard FileManager.default.createFile(atPath: docroot + "/sparse-2g.bin", contents: nil) else {
            throw TestServerError(description: "cannot create \(docroot)/sparse-2g.bin")
        }
        let sparse = try FileHandle(forWritingTo: URL(fileURLWithPath: docroot + "/sparse-2g.bin"))
        try sparse.truncate(atOffset: UInt64(NginxServer.sparseSize))
        try sparse.close()
        try NginxServer.helloBody.write(toFile: docroot + "/hello.txt", atomically: false, encoding: .utf8)
        let hello = "default_type text/plain; return 200 \"hello world\\n\";"
        // sub_filter with a pattern that never occurs still removes Content-Length -> chunked.
        let chunked = "sub_filter_types *; sub_filter \"no-such-text\" \"\";"
        let config = nginxConfig(directory: directory, http: """
                access_log off;
                server {
                    listen 127.0.0.1:\(port);
                    root \(docroot);
                    location = / { \(hello) }
                    location = /hello { \(hello) }
                    location = /close { keepalive_timeout 0; \(hello) }
                    location = /idle-close { keepalive_timeout 1s; \(hello) }
                    location = /no-content { return 204; }
                    location = /not-modified { return 304; }
                    location = /large { alias \(docroot)/large.bin; }
                    location = /large-8m { alias \(docroot)/large-8m.bin; }
                    location = /large-slow {
                        alias \(docroot)/large.bin;
                        limit_rate_after \(NginxServer.slowAfter); limit_rate \(NginxServer.slowRate);
                    }
                    location = /sparse-2g { alias \(docroot)/sparse-2g.bin; }
                    location = /chunked { default_type text/plain; alias \(docroot)/hello.txt; \(chunked) }
                    location = /large-chunked { alias \(docroot)/large.bin; \(chunked) }
                    location = /redirect { return 302 /hello; }
                    location = /pipe { default_type text/plain; return 200 "$pipe\\n"; }
                    location = /pipe-limited { keepalive_requests 20; default_type text/plain; return 200 "$pipe\\n"; }
                    location / { return 404; }
                }
            """)
        try config.write(toFile: directory + "/nginx.conf", atomically: false, encoding: .utf8)
    }

    /// An nginx.conf for one foreground process (no master, one worker) whose pid, logs and
    /// temp files all live in `directory`; `http` goes inside the http block, after settings
    /// every test server shares (keep-alive for a million requests or 60 s, no body size limit).
    static func nginxConfig(directory: String, http: String) -> String {
        """
        daemon off;
        master_process off;
        worker_processes 1;
        pid \(directory)/nginx.pid;
        error_log \(directory)/error.log warn;
        events { worker_connections 1024; }
        http {
            server_tokens off;
            client_max_body_size 0;
            client_body_temp_path \(directory)/tmp/body;
            proxy_temp_path \(directory)/tmp/proxy;
            fastcgi_temp_path \(directory)/tmp/fastcgi;
            uwsgi_temp_path \(directory)/tmp/uwsgi;
            scgi_temp_path \(directory)/tmp/scgi;
            keepalive_requests 1000000;
            keepalive_timeout 60s;
            default_type application/octet-stream;
        \(http)
        }

        """
    }

    /// Polls until GET `path` on `port` answers 200 with a body `accepts`; nil when ready,
    /// else why not (the server exited, or the timeout passed).
    static func waitUntilServing(_ server: SupervisedProcess, port: Int, path: String, timeout: Double,
                                         accepts: (String) -> Bool) -> String? {
        let deadline = monotonicSeconds() + timeout
        var lastProblem = "no attempt"
        while monotonicSeconds() < deadline {
            if let status = server.exitStatus { return "the server exited (wait status \(status))" }
            do {
                let client = try RawTCPClient(port: port, timeout: 1)
                try client.write("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
                let response = try client.readResponse(timeout: 5)
                if response.status == 200 && accepts(response.bodyText) { return nil }
                lastProblem = "GET \(path) answered \(response.status): \(response.bodyText.prefix(200))"
            } catch {
                lastProblem = "GET \(path): \(error)"
            }
            usleep(20_000)
        }
        return "not serving after \(timeout) s (last: \(lastProblem))"
    }

    /// A loopback port that was free a moment ago (bind port 0, read it, release it).
    /// Callers retry when the server then loses the race for it.
    static func freeLoopbackPort() throws -> Int {
        let server = try ScriptedServer { _ in }
        defer { server.stop() }
        return server.port
    }

    /// `count` distinct free ports: each listener stays open until all are picked, so the kernel
    /// cannot hand one port out twice (a config with two servers on one port fails to start).
    static func freeLoopbackPorts(_ count: Int) throws -> [Int] {
        let servers = try (0..<count).map { _ in try ScriptedServer { _ in } }
        defer { for server in servers { server.stop() } }
        return servers.map(\.port)
    }

    static func makeTemporaryDirectory(prefix: String) throws -> String {
        let base = NSTemporaryDirectory().hasSuffix("/") ? NSTemporaryDirectory() : NSTemporaryDirectory() + "/"
        var template = Array((base + "\(prefix).XXXXXX").utf8CString)
        guard let path = mkdtemp(&template) else {
            throw TestServerError(description: "mkdtemp failed: \(String(cString: strerror(errno)))")
        }
        return String(cString: path)
    }
}

// MARK: - Supervised processes

/// A child process that cannot outlive the test process (see the file comment): it runs
/// under a /bin/sh supervisor whose lifeline pipe only this process can keep open.
/// Reusable for other helper servers (e.g. `openssl s_server`).
final class SupervisedProcess: @unchecked Sendable {
    // @unchecked: `state` is a Mutex; everything else is immutable after launch.
    /// The supervisor's pid (the server is its child).
    let pid: pid_t
    /// The server's temp directory; the supervisor deletes it after a release.
    let directory: String
    private let outputPath: String
    private let state: Mutex<(lifeline: Int32, exitStatus: Int32?)>

    /// The supervisor: starts "$@" with fd 3 closed, and when fd 3 reaches EOF (this process
    /// exited or called `release()`) terminates it (TERM, KILL after 5 s), then removes the temp directory.
    private static let supervisorScript = #"""
        dir=$1; shift
        cd "$dir" || exit 1
        "$@" 3<&- &
        server=$!
        # Only the lifeline decides: ignore a terminal's ^C / hang-up here (the watcher, as a
        # background job, already ignores SIGINT).
        trap '' INT HUP
        (
            read -r _ <&3
            : > "$dir/.released"
            kill -TERM "$server" 2>/dev/null
            ticks=0
            while kill -0 "$server" 2>/dev/null; do
                ticks=$((ticks + 1))
                if [ "$ticks" -ge 50 ]; then kill -KILL "$server" 2>/dev/null; fi
                sleep 0.1
            done
        ) &
        watcher=$!
        exec 3<&-
        wait "$server"
        status=$?
        if [ -e "$dir/.released" ]; then
            wait "$watcher"
            rm -rf "$dir"
        else
            kill "$watcher" 2>/dev/null # The server exited by itself; the watcher is still in `read`.
        fi
        exit "$status"
        """#

    private init(pid: pid_t, lifeline: Int32, directory: String, outputPath: String) {
        self.pid = pid
        self.directory = directory
        self.outputPath = outputPath
        state = Mutex((lifeline: lifeline, exitStatus: nil))
    }

    /// Starts `arguments` (argv, absolute path first) in `directory` with stdin /dev/null and
    /// stdout+stderr appended to `directory`/output.log, plus `environment` over ours.
    static func launch(_ arguments: [String], directory: String, environment: [String: String] = [:]) throws -> SupervisedProcess {
        _ = registerExitHandlerOnce
        // A socketpair rather than pipe2 (which Swift does not import): close-on-exec is set
        // atomically, so no child spawned concurrently by another test inherits the write end.
        var pipeFDs: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &pipeFDs) == 0 else {
            throw TestServerError(description: "socketpair failed: \(String(cString: strerror(errno)))")
        }
        let (lifelineRead, lifelineWrite) = (pipeFDs[0], pipeFDs[1])
        defer { close(lifelineRead) }
        let outputPath = directory + "/output.log"

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        posix_spawn_file_actions_adddup2(&actions, lifelineRead, 3) // dup2 clears O_CLOEXEC on fd 3
        // Close everything else, so descriptors other tests left inheritable (pipe ends!) are
        // not held open for the life of the process by a long-lived server.
        // (glibc >= 2.34; looked up because Swift does not import _GNU_SOURCE declarations).
        if let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") {
            typealias AddClosefrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
            _ = unsafeBitCast(symbol, to: AddClosefrom.self)(&actions, 4)
        }

        // The spawning thread may be a Swift Testing or Dispatch worker with most signals
        // blocked; a child inheriting that mask never sees SIGCHLD (the supervisor's `wait`
        // hangs) or SIGTERM. Start it with an empty mask and default dispositions.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var signals = sigset_t()
        sigemptyset(&signals)
        posix_spawnattr_setsigmask(&attributes, &signals)
        sigfillset(&signals)
        sigdelset(&signals, SIGKILL)
        sigdelset(&signals, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &signals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var merged = ProcessInfo.processInfo.environment
        merged.merge(environment) { _, new in new }
        let argv = ["/bin/sh", "-c", supervisorScript, "supervise", directory] + arguments
        let envp = merged.map { "\($0.key)=\($0.value)" }
        var pid: pid_t = 0
        let result = withCStrings(argv) { argvPointers in
            withCStrings(envp) { envPointers in
                posix_spawn(&pid, "/bin/sh", &actions, &attributes, argvPointers, envPointers)
            }
        }
        guard result == 0 else {
            close(lifelineWrite)
            throw TestServerError(description: "posix_spawn \(arguments.first ?? "") failed: \(String(cString: strerror(result)))")
        }
        let process = SupervisedProcess(pid: pid, lifeline: lifelineWrite, directory: directory, outputPath: outputPath)
        liveProcesses.withLock { $0.append(process) }
        return process
    }

    /// The supervisor's wait status once it has exited (it exits when the server does), else nil.
    var exitStatus: Int32? {
        state.withLock { state in
            if state.exitStatus == nil {
                var status: Int32 = 0
                if waitpid(pid, &status, WNOHANG) == pid { state.exitStatus = status }
            }
            return state.exitStatus
        }
    }

    /// What the server printed so far (stdout and stderr).
    func output() -> String {
        (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    }

    /// Closes the lifeline (the supervisor then stops the server and deletes its directory)
    /// and waits up to `timeout` seconds for that to finish. Idempotent.
    func release(timeout: Double = 5) {
        let lifeline = state.withLock { state in
            defer { state.lifeline = -1 }
            return state.lifeline
        }
        if lifeline >= 0 { close(lifeline) }
        _ = waitUntil(timeout: timeout) { exitStatus != nil }
        liveProcesses.withLock { $0.removeAll { $0 === self } }
    }
}

/// Every supervised process not yet released, for the exit handler.
private let liveProcesses = Mutex<[SupervisedProcess]>([])

/// Releases all servers at a normal exit, so they are gone before `swift test` returns
/// (the lifeline alone would also stop them, but asynchronously).
private let registerExitHandlerOnce: Void = {
    atexit {
        let processes = liveProcesses.withLock { $0 }
        for process in processes { process.release(timeout: 5) }
    }
}()

/// Calls `body` with a NULL-terminated C array of copies of `strings`.
private func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { pointers.forEach { free($0) } }
    return body(pointers)
}
