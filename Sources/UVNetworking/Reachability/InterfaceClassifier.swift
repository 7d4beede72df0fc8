import Glibc

/// Reads an interface's kind from sysfs (`/sys/class/net/NAME/...`): file I/O, so on a worker
/// thread, never the loop. The root is a parameter so that tests can give a tree of their own.
///
/// `wireless` or `phy80211` in the interface's directory, or DEVTYPE=wlan in its `uevent`: Wi-Fi;
/// DEVTYPE=wwan: cellular; `type` 1 (ARPHRD_ETHER): Ethernet; anything else (loopback is 772),
/// and an interface that is gone or unreadable: other.
struct InterfaceClassifier: Sendable {
    /// The directory holding one directory per interface.
    let root: String

    static let systemRoot = "/sys/class/net"

    init(root: String = InterfaceClassifier.systemRoot) {
        self.root = root
    }

    /// The kind of the interface named `name`. Blocks (reads files).
    func kind(of name: String) -> NetworkInterfaceKind {
        // Kernel interface names never hold a slash and are never "." or ".."; a name that does
        // must not lead anywhere else in the file system.
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else { return .other }
        let directory = root + "/" + name
        if Self.exists(directory + "/wireless") || Self.exists(directory + "/phy80211") { return .wifi }
        if let uevent = Self.read(directory + "/uevent") {
            for line in uevent.split(whereSeparator: { $0 == "\n" }) where line.hasPrefix("DEVTYPE=") {
                switch line.dropFirst("DEVTYPE=".count).trimmingWhitespace {
                case "wlan": return .wifi
                case "wwan": return .cellular
                default: break
                }
            }
        }
        if let type = Self.read(directory + "/type"), Int(type.trimmingWhitespace) == 1 { return .ethernet }
        return .other
    }

    private static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// The start of a small file (sysfs attributes are a line or a few), nil when it cannot be read.
    private static func read(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { raw in
                Glibc.read(descriptor, raw.baseAddress! + filled, raw.count - filled)
            }
            if count > 0 {
                filled += count
            } else if count == 0 || errno != EINTR {
                break
            }
        }
        return String(decoding: bytes[..<filled], as: UTF8.self)
    }
}

private extension Substring {
    /// Without leading and trailing spaces, tabs and line ends (sysfs values end with a newline).
    var trimmingWhitespace: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return self[first...last]
    }
}

private extension String {
    var trimmingWhitespace: Substring { self[...].trimmingWhitespace }
}
