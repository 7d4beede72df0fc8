import Foundation
import Testing

/// Managers in a child process: in a network namespace of the test's own with only a loopback
/// that is down (unshare -n, as root), and with no descriptor left for the socket.
@Suite(.tags(.namespace)) struct ReachabilityNamespaceTests {
    /// Runs the probe's `reachability-once` for `targets` under `unshare -n`: nothing is up.
    private func runInEmptyNamespace(_ targets: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["--net", EmbedProbe.executable.path, "reachability-once"] + targets
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    /// No default route, loopback down: the general manager, loopback's address and "localhost"
    /// (it resolves from the hosts file, but no route leads there) are not reachable; a name
    /// that cannot resolve neither. Stopping closed every descriptor.
    @Test(.enabled(if: NamespaceProcess.canUnshare, "needs root and unshare for a namespace of its own"), .timeLimit(.minutes(1)))
    func nothingIsReachableWithLoopbackDown() throws {
        let (status, output) = try runInEmptyNamespace(["general", "127.0.0.1", "::1", "domain:localhost", "domain:name.invalid"])
        #expect(status == 0, "\(output)")
        let lines = output.split(separator: "\n").map(String.init)
        for target in ["general", "127.0.0.1", "::1", "domain:localhost", "domain:name.invalid"] {
            #expect(lines.contains { $0.hasPrefix("\(target): Not Reachable in ") }, "\(target): \(output)")
        }
        #expect(lines.last == "fds ok")
    }

    /// A netlink receive buffer at the kernel's minimum, overrun by a flood of veth links in a
    /// namespace of the probe's own: the default route's arrival and removal are each reported
    /// once, in order, the loop does not spin afterwards, and stopping closes the socket.
    @Test(.enabled(if: NamespaceProcess.canUnshare, "needs root and unshare for a namespace of its own"), .timeLimit(.minutes(1)))
    func overrunBufferKeepsTheReadingRight() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["--net", EmbedProbe.executable.path, "reachability-overrun"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.hasPrefix("ok: "), "\(text)")
        #expect(!text.hasPrefix("ok: 0 overruns"), "the flood never overran the buffer: \(text)")
    }

    /// No descriptor for the netlink socket: unknown, not monitoring, EMFILE said; a later start works.
    @Test(.timeLimit(.minutes(1)))
    func noDescriptorForTheSocket() throws {
        let result = try EmbedProbe.run("reachability-without-descriptors", timeout: 30)
        #expect(result.succeeded, "\(result)")
    }
}
