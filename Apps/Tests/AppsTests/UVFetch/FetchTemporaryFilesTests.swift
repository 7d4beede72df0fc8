import Foundation
import Synchronization
import Testing
import UVFetchCore

/// `uvfetch --out-dir` leaves nothing in its TMPDIR when URLs fail (an error status with a
/// body, a reset mid-body, a timeout) or the run is interrupted, with unnamed (O_TMPFILE)
/// download files and with the named files used where they cannot be had.
@Suite(.tags(.namespace), .serialized) struct FetchTemporaryFilesTests {
    /// `/missing`: a 404 with a body. `/reset`: 256 KiB of a 64 MiB body, then a reset.
    /// `/stall`: 256 KiB of a 64 MiB body, then nothing until the client goes. Each waits for
    /// `ready` before answering.
    private static func server(ready: @escaping @Sendable () -> Bool = { true },
                               received: @escaping @Sendable () -> Void = {}) throws -> ScriptedServer {
        try ScriptedServer { connection in
            let request = try connection.readRequest()
            received()
            _ = waitUntil(timeout: 10, ready)
            let part = [UInt8](repeating: 0x61, count: 256 << 10)
            switch request.target {
            case "/missing":
                try connection.write(ScriptedResponse.text(String(repeating: "not here\n", count: 20_000), status: 404, reason: "Not Found"))
                _ = connection.waitForPeerClose(timeout: 10)
            case "/reset":
                try connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(64 << 20)\r\n\r\n")
                try connection.write(part)
                connection.pause(0.3)
                connection.reset()
            default:
                try connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(64 << 20)\r\n\r\n")
                try connection.write(part)
                _ = connection.waitForPeerClose(timeout: 30)
            }
        }
    }

    /// A private TMPDIR and output directory, removed at the end.
    private struct Directories {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("uvfetch-tmpfiles-\(UUID().uuidString)")
        var temporary: URL { root.appendingPathComponent("tmp") }
        var output: URL { root.appendingPathComponent("out") }

        init() throws { try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true) }

        func contents(_ directory: URL) -> [String] {
            (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        }

        func remove() { try? FileManager.default.removeItem(at: root) }

        var environment: [String: String] {
            var environment = ProcessInfo.processInfo.environment
            environment["TMPDIR"] = temporary.path
            return environment
        }
    }

    private func urls(_ server: ScriptedServer, _ paths: [String]) -> [String] {
        paths.map { "http://127.0.0.1:\(server.port)\($0)" }
    }

    @Test func failedURLsLeaveNothingBehind() throws {
        let server = try Self.server()
        defer { server.stop() }
        let directories = try Directories()
        defer { directories.remove() }
        let result = try runUVFetch(["--quiet", "--timeout", "2", "--out-dir", directories.output.path]
                                    + urls(server, ["/missing", "/reset", "/stall"]), environment: directories.environment)
        #expect(result.status == ExitStatus.someFailed, "\(result.stdout) \(result.stderr)")
        #expect(directories.contents(directories.temporary).isEmpty, "left in TMPDIR: \(directories.contents(directories.temporary))")
        #expect(directories.contents(directories.output).isEmpty, "kept a failed body: \(directories.contents(directories.output))")
    }

    @Test func theLastURLsErrorBodyIsGoneBeforeTheProcessExits() throws {
        // The body of a URL that failed is the handler's to drop: a removal left for later can
        // lose the race with the exit that follows the last result.
        let server = try Self.server()
        defer { server.stop() }
        let directories = try Directories()
        defer { directories.remove() }
        for _ in 0..<5 {
            let result = try runUVFetch(["--quiet", "--out-dir", directories.output.path] + urls(server, ["/missing"]),
                                        environment: directories.environment)
            #expect(result.status == ExitStatus.someFailed)
        }
        #expect(directories.contents(directories.temporary).isEmpty, "left in TMPDIR: \(directories.contents(directories.temporary))")
    }

    @Test func anInterruptLeavesNoFinishedBodyBehindEither() throws {
        // Bodies finished just before ^C, whose results are never reported, are removed too.
        let body = String(repeating: "z", count: 5000)
        let server = try ScriptedServer { connection in
            try connection.serveKeepAlive { _ in ScriptedResponse.text(body) }
        }
        defer { server.stop() }
        let directories = try Directories()
        defer { directories.remove() }
        let process = Process()
        process.executableURL = uvfetchExecutable
        process.arguments = ["--quiet", "--concurrency", "32", "--repeat", "1000000", "--out-dir", directories.output.path,
                             "http://127.0.0.1:\(server.port)/f"]
        process.environment = directories.environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        #expect(waitUntil(timeout: 10) { directories.contents(directories.output).count > 500 })
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        #expect(process.terminationStatus == ExitStatus.interrupted)
        let left = directories.contents(directories.temporary)
        #expect(left.isEmpty, "\(left.count) left in TMPDIR")
    }

    // MARK: Without unnamed files

    /// Root can give one process a view without /proc/self (a tmpfs over its /proc/PID, in its
    /// own mount namespace), so the library cannot name unnamed files and writes named ones,
    /// as on a file system without O_TMPFILE. CI runs as root.
    private static let canHideProc: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/nsenter") else { return false }
        // A container without CAP_SYS_ADMIN refuses the namespace even to root.
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        probe.arguments = ["--mount", "--propagation", "private", "mount", "-t", "tmpfs", "none", "/mnt"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }()

    /// Starts uvfetch in a mount namespace of its own; `hideProc` then hides its /proc/PID.
    private func startInOwnNamespace(_ arguments: [String], environment: [String: String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["--mount", "--propagation", "private", uvfetchExecutable.path] + arguments
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Mounts an empty tmpfs over /proc/PID in the process's namespace: its /proc/self/fd is gone.
    private func hideProc(of process: Process) throws -> Bool {
        let pid = process.processIdentifier
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/usr/bin/nsenter")
        mount.arguments = ["-t", "\(pid)", "-m", "mount", "-t", "tmpfs", "none", "/proc/\(pid)"]
        try mount.run()
        mount.waitUntilExit()
        return mount.terminationStatus == 0
    }

    private func namedDownloads(_ directories: Directories) -> [String] {
        directories.contents(directories.temporary).filter { $0.hasPrefix("UVNetworking-Download-") }
    }

    @Test(.enabled(if: canHideProc)) func withNamedFilesFailedURLsLeaveNothingBehind() throws {
        let hidden = Atomic<Bool>(false), requests = Atomic<Int>(0)
        let server = try Self.server(ready: { hidden.load(ordering: .acquiring) },
                                     received: { requests.add(1, ordering: .relaxed) })
        defer { server.stop() }
        let directories = try Directories()
        defer { directories.remove() }
        let process = try startInOwnNamespace(["--quiet", "--timeout", "4", "--out-dir", directories.output.path]
                                              + urls(server, ["/missing", "/reset", "/stall"]),
                                              environment: directories.environment)
        #expect(waitUntil(timeout: 10) { requests.load(ordering: .relaxed) >= 1 })
        #expect(try hideProc(of: process))
        hidden.store(true, ordering: .releasing)
        // The stalled body sits in a named file: proof that the fallback is what runs here.
        #expect(waitUntil(timeout: 3) { !namedDownloads(directories).isEmpty }, "no named download file appeared")
        process.waitUntilExit()
        #expect(process.terminationStatus == ExitStatus.someFailed)
        #expect(directories.contents(directories.temporary).isEmpty, "left in TMPDIR: \(directories.contents(directories.temporary))")
        #expect(directories.contents(directories.output).isEmpty)
    }

    @Test(.enabled(if: canHideProc)) func withNamedFilesAnInterruptLeavesNothingBehind() throws {
        let hidden = Atomic<Bool>(false), requests = Atomic<Int>(0)
        let server = try Self.server(ready: { hidden.load(ordering: .acquiring) },
                                     received: { requests.add(1, ordering: .relaxed) })
        defer { server.stop() }
        let directories = try Directories()
        defer { directories.remove() }
        let process = try startInOwnNamespace(["--quiet", "--out-dir", directories.output.path] + urls(server, ["/stall", "/stall"]),
                                              environment: directories.environment)
        #expect(waitUntil(timeout: 10) { requests.load(ordering: .relaxed) >= 2 })
        #expect(try hideProc(of: process))
        hidden.store(true, ordering: .releasing)
        #expect(waitUntil(timeout: 5) { namedDownloads(directories).count == 2 }, "no named download files appeared")
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        #expect(process.terminationStatus == ExitStatus.interrupted)
        #expect(directories.contents(directories.temporary).isEmpty, "left in TMPDIR: \(directories.contents(directories.temporary))")
        #expect(directories.contents(directories.output).isEmpty)
    }
}
