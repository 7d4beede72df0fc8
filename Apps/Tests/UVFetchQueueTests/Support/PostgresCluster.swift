import Foundation
import Synchronization

/// A throwaway PostgreSQL cluster for the queue's tests: `initdb` into a temporary directory,
/// `postgres` on `address` and a free port (trust authentication, no durability: fsync off),
/// a fresh database per test (`makeDatabase`), stopped (`-m immediate`) and removed by `stop()`.
///
/// initdb and the server refuse to run as root: as root they run as the `postgres` user
/// (`runuser`), which then owns the directory. A supervisor shell holds a pipe whose other end
/// only this process has: if the test process dies without `stop()`, the pipe closes and the
/// supervisor stops the server and removes the directory, so no server outlives the tests.
///
/// `address` may be any address of this host, not only 127.0.0.1: the server listens on it and
/// on its Unix socket in the directory. Started with `namespace` (`ip netns exec NAME`), it
/// runs in that network namespace, on an address of a veth there (the fleet's database host);
/// its Unix socket, a path in the file system, still serves `psql` from the test's namespace.
final class PostgresCluster: @unchecked Sendable {
    // @unchecked: every property is set in init; `stop` is guarded by `stopped`.

    /// Where the server binaries are: Debian's layout, the newest version installed.
    static let binaries: URL = {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        let newest = versions.compactMap(Int.init).max() ?? 15
        return URL(fileURLWithPath: "/usr/lib/postgresql/\(newest)/bin")
    }()

    let address: String
    let port: Int
    /// The cluster's directory: data, socket, log.
    let directory: URL
    var dataDirectory: String { directory.appendingPathComponent("data").path }
    var socketDirectory: String { directory.path }
    private let lifeline: FileHandle
    private let supervisor: Process
    private let stopped = Atomic<Bool>(false)
    private let databases = Atomic<Int>(0)

    /// Whether the server binaries are here at all (scripts/install-deps.sh installs them).
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: binaries.appendingPathComponent("initdb").path) }

    /// initdb and start; throws with the server's log when it does not come up. `port` nil
    /// takes a free one (probed in this process's namespace); `namespace` is the argv prefix
    /// that runs the server in a network namespace; `trusting` (a CIDR block) lets clients of
    /// that network in without a password, as initdb's own trust does for loopback.
    init(address: String = "127.0.0.1", port: Int? = nil, namespace: [String] = [], trusting network: String? = nil) throws {
        self.address = address
        var template = Array("/tmp/uvfetch-pg-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ClusterError("mkdtemp failed") }
        directory = URL(fileURLWithPath: String(cString: made))
        if geteuid() == 0 {
            guard let user = getpwnam("postgres") else { throw ClusterError("running as root and there is no postgres user") }
            chown(directory.path, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        self.port = try port ?? Self.freePort(address)
        let data = directory.appendingPathComponent("data").path
        try Self.run(Self.asServerUser([Self.binaries.appendingPathComponent("initdb").path, "-D", data, "-A", "trust",
                                        "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"]))
        if let network {
            let rules = try FileHandle(forWritingTo: URL(fileURLWithPath: data + "/pg_hba.conf"))
            try rules.seekToEnd()
            try rules.write(contentsOf: Data("host all all \(network) trust\n".utf8))
            try rules.close()
        }
        // The server runs in the foreground under a supervisor shell (not `pg_ctl start`, whose
        // daemon would inherit the descriptor by which Foundation sees pg_ctl exit, so that
        // it never would). The supervisor waits for the pipe to close (this process gone, or
        // `stop`), then stops the server and removes the directory.
        let server = namespace + Self.asServerUser([Self.binaries.appendingPathComponent("postgres").path, "-D", data, "-p", "\(self.port)",
                                        "-c", "listen_addresses=\(address)", "-k", directory.path, "-c", "fsync=off",
                                        "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=100"])
        let stopServer = Self.asServerUser([Self.binaries.appendingPathComponent("pg_ctl").path, "stop", "-w", "-m", "immediate", "-D", data])
        let log = directory.appendingPathComponent("log").path
        let pipe = Pipe()
        _ = fcntl(pipe.fileHandleForWriting.fileDescriptor, F_SETFD, FD_CLOEXEC)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", """
            \(Self.quoted(server)) >'\(log)' 2>&1 </dev/null &
            cat >/dev/null
            \(Self.quoted(stopServer)) >/dev/null 2>&1
            wait
            rm -rf '\(directory.path)'
            """]
        process.standardInput = pipe.fileHandleForReading
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try pipe.fileHandleForReading.close()
        lifeline = pipe.fileHandleForWriting
        supervisor = process
        // Up once it answers a query (a minute at most: a loaded machine is slow to start it).
        let deadline = Date().addingTimeInterval(60)
        while (try? psql("postgres", "SELECT 1")) == nil {
            guard Date() < deadline, process.isRunning else {
                let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                stop()
                throw ClusterError("postgres did not start: \(text)")
            }
            usleep(100_000)
        }
    }

    private static func quoted(_ command: [String]) -> String {
        command.map { "'\($0)'" }.joined(separator: " ")
    }

    /// Stops the server and removes its directory; waits for both.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        try? lifeline.close()
        supervisor.waitUntilExit()
    }

    deinit { stop() }

    /// A new, empty database; its `--db` URL.
    func makeDatabase() throws -> String {
        let name = "queue_\(databases.add(1, ordering: .relaxed).newValue)"
        _ = try psql("postgres", "CREATE DATABASE \(name)")
        return url(name)
    }

    /// `postgres://postgres@ADDRESS:PORT/name?sslmode=disable`.
    func url(_ database: String) -> String {
        let host = address.contains(":") ? "[\(address)]" : address
        return "postgres://postgres@\(host):\(port)/\(database)?sslmode=disable"
    }

    /// The database name at the end of a `url(_:)`.
    static func name(of url: String) -> String {
        String(url.split(separator: "/").last!.split(separator: "?").first!)
    }

    /// Runs `sql` in `database` (a name or a `url(_:)`) with psql over the Unix socket; its
    /// output unaligned, tuples only.
    @discardableResult
    func psql(_ database: String, _ sql: String) throws -> String {
        let name = database.contains("://") ? Self.name(of: database) : database
        return try Self.run([Self.binaries.appendingPathComponent("psql").path, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                             "-h", socketDirectory, "-p", "\(port)", "-U", "postgres", "-d", name, "-c", sql])
    }

    private static func asServerUser(_ command: [String]) -> [String] {
        geteuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] + command : command
    }

    /// Runs a command to its end; its standard output, or an error with both streams. Both go
    /// to files, not pipes: the server `pg_ctl start` leaves running may inherit a descriptor,
    /// and a pipe would then never reach its end.
    @discardableResult
    static func run(_ command: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("pgcmd-\(UUID().uuidString)")
        let output = base.appendingPathExtension("out"), errors = base.appendingPathExtension("err")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: output)
            try? FileManager.default.removeItem(at: errors)
        }
        let outputHandle = try FileHandle(forWritingTo: output), errorHandle = try FileHandle(forWritingTo: errors)
        process.standardOutput = outputHandle
        process.standardError = errorHandle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try outputHandle.close()
        try errorHandle.close()
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        guard process.terminationStatus == 0 else {
            let errorText = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
            throw ClusterError("\(command.joined(separator: " ")) exited \(process.terminationStatus): \(text)\(errorText)")
        }
        return text
    }

    /// A port free on `address` now (the kernel's pick).
    private static func freePort(_ address: String) throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClusterError("socket failed") }
        defer { close(fd) }
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_port = 0
        inet_pton(AF_INET, address, &socketAddress.sin_addr)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw ClusterError("cannot bind \(address): \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: socketAddress.sin_port))
    }
}

/// A cluster that could not be set up, with what the commands said.
struct ClusterError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
