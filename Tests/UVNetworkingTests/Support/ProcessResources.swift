// Process-level resource probes for leak tests (Linux /proc based).
//
// Swift Testing runs tests in parallel inside one process, so a whole-process fd count is
// only meaningful while nothing else opens descriptors. Prefer `openSocketCount(port:)`
// when the question is "did every connection to *this* server get closed": it looks only at
// sockets whose local or remote port is the given one, so other tests do not disturb it.

#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Seconds on a monotonic clock (unaffected by wall-clock changes); for deadlines.
func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1_000_000_000
}

/// The number of file descriptors open in this process right now.
///
/// Counts the entries of /proc/self/fd, minus the descriptor the directory listing itself uses.
func openFileDescriptorCount() -> Int {
    // opendir rather than FileManager so that exactly one extra descriptor is involved.
    guard let directory = opendir("/proc/self/fd") else { return -1 }
    defer { closedir(directory) }
    var count = 0
    while let entry = readdir(directory) {
        let isDotEntry = withUnsafeBytes(of: entry.pointee.d_name) { name in
            name[0] == UInt8(ascii: ".") && (name[1] == 0 || (name[1] == UInt8(ascii: ".") && name[2] == 0))
        }
        if !isDotEntry { count += 1 }
    }
    return count - 1
}

/// The number of TCP sockets open in this process whose local or remote port is `port`
/// (IPv4 and IPv6), i.e. both the accepted and the connecting ends of connections to a
/// loopback server on that port. TIME_WAIT leftovers belong to no process and are not counted.
func openSocketCount(port: Int) -> Int {
    // Inodes of the sockets this process holds: /proc/self/fd/N -> "socket:[INODE]".
    var ownInodes = Set<Substring>()
    if let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
        for name in names {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"),
                  target.hasPrefix("socket:[") else { continue }
            ownInodes.insert(target.dropFirst("socket:[".count).dropLast())
        }
    }
    var count = 0
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = readProcFile(table)
        // Columns: sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 9, ownInodes.contains(fields[9]) else { continue }
            let ports = [fields[1], fields[2]].compactMap { address in
                address.split(separator: ":").last.flatMap { Int($0, radix: 16) }
            }
            if ports.contains(port) { count += 1 }
        }
    }
    return count
}

/// The whole content of a /proc file. procfs reports size 0 and produces longer tables over
/// several reads, so read until EOF rather than trusting a size.
private func readProcFile(_ path: String) -> String {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return "" }
    defer { close(fd) }
    var content: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = read(fd, &chunk, chunk.count)
        if count > 0 {
            content += chunk[0..<count]
        } else if count == 0 || errno != EINTR {
            break
        }
    }
    return String(decoding: content, as: UTF8.self)
}

/// Polls `condition` every few milliseconds until it holds or `timeout` seconds pass.
/// Returns whether it held (checked once more at the deadline).
func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
    let deadline = monotonicSeconds() + timeout
    while monotonicSeconds() < deadline {
        if condition() { return true }
        usleep(5_000)
    }
    return condition()
}

/// Every open descriptor of this process and what it points at ("socket:[123]", a path, ...),
/// for saying which ones leaked.
func fileDescriptorTargets() -> [Int32: String] {
    var result: [Int32: String] = [:]
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return result }
    for name in names {
        guard let fd = Int32(name) else { continue }
        result[fd] = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name)) ?? "?"
    }
    return result
}
