import Foundation
import Glibc

/// A network and mount namespace of a test's own, for uvfetch's DNS end to end: lo up, a private
/// resolv.conf and hosts file bound over the system's, and the test world's `dns-namespace` (Tests/TestWorld) (the
/// scripted DNS server on 127.0.0.1:53, an HTTP server on :8080) around a command. Nothing
/// leaves the machine, and the system's resolver settings are never touched.
enum DNSNamespace {
    /// This process's environment without proxy variables, which would send uvfetch elsewhere.
    static var environment: [String: String] {
        var variables = ProcessInfo.processInfo.environment
        for name in ["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"] {
            variables[name] = nil
        }
        return variables
    }

    /// Runs the test world's `dns-namespace` with `probeArguments` (options and the name table) and
    /// then `command` inside a new namespace whose /etc/resolv.conf and /etc/hosts read
    /// `resolvConf` and `hosts`; returns the world's standard output (the command's, then the
    /// query counts).
    static func run(resolvConf: String, hosts: String, probeArguments: [String], command: [String]) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dns-ns-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let resolvConfFile = directory.appendingPathComponent("resolv.conf"), hostsFile = directory.appendingPathComponent("hosts")
        try resolvConf.write(to: resolvConfFile, atomically: true, encoding: .utf8)
        try hosts.write(to: hostsFile, atomically: true, encoding: .utf8)
        let script = """
            set -e
            ip link set lo up
            mount --bind "$1" /etc/resolv.conf
            mount --bind "$2" /etc/hosts
            shift 2
            exec "$@"
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["--mount", "--net", "--propagation", "private", "/bin/sh", "-c", script, "sh", resolvConfFile.path, hostsFile.path,
                             TestWorld.executable.path, "dns-namespace"] + probeArguments + ["--"] + command
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text
    }
}
