import Glibc

/// The names /etc/hosts gives addresses to, parsed once per version of the file. A name found
/// here is never asked of DNS (glibc's default order, `hosts: files dns`).
struct HostsFile: Sendable {
    /// Lowercased name -> its addresses in file order, IP literals as written.
    private var names: [String: [String]] = [:]

    /// No names.
    init() {}

    /// Parses the text of a hosts file: "address name [alias...]" per line, "#" to the end of a
    /// line is a comment; lines whose address is not an IP literal are skipped, as glibc does.
    init(parsing text: String) {
        for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let content = line.prefix { $0 != "#" }
            let fields = content.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2, SocketAddress(numericHost: String(fields[0]), port: 0) != nil else { continue }
            let address = String(fields[0])
            for name in fields.dropFirst() {
                let key = name.lowercased()
                if names[key]?.contains(address) != true { names[key, default: []].append(address) }
            }
        }
    }

    /// Whether the file names nothing.
    var isEmpty: Bool { names.isEmpty }

    /// The addresses for `host` at `port`, IPv6 first (as RFC 6724's default policy orders
    /// loopback and global addresses of both families), each family in file order; nil when the
    /// file does not name `host`. A final dot is ignored ("localhost." is "localhost").
    func addresses(for host: String, port: Int) -> [SocketAddress]? {
        var key = host.lowercased()
        if key.hasSuffix(".") { key.removeLast() }
        guard let literals = names[key] else { return nil }
        let addresses = literals.compactMap { SocketAddress(numericHost: $0, port: port) }
        return addresses.filter(\.isIPv6) + addresses.filter { !$0.isIPv6 }
    }
}

/// Reads /etc/hosts, on a worker thread only: the resolver checks it (and resolv.conf) for changes
/// at most every `checkInterval` while look-ups come (glibc reads the hosts file at every look-up
/// and resolv.conf when it changed; a change is picked up here within seconds, and an unchanged
/// file costs one stat on a worker).
struct HostsFileSource: Sendable {
    /// What identifies a version of the file: a rewrite changes the inode or the modification
    /// time, an edit in place the time or the size.
    struct Stamp: Equatable, Sendable {
        var inode: UInt64
        var size: Int64
        var seconds: Int
        var nanoseconds: Int
    }

    /// How often, at most, the file is checked for a change (loop milliseconds).
    static let checkInterval: UInt64 = 2_000

    let path: String

    init(path: String = "/etc/hosts") { self.path = path }

    /// The file's stamp; nil when it cannot be read (then it names nothing, as for glibc).
    func stamp() -> Stamp? { Self.stamp(of: path) }

    /// The stamp of the file at `path` (resolv.conf's too); nil when it cannot be read.
    static func stamp(of path: String) -> Stamp? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Stamp(inode: UInt64(info.st_ino), size: Int64(info.st_size),
                     seconds: info.st_mtim.tv_sec, nanoseconds: info.st_mtim.tv_nsec)
    }

    /// The file parsed, with the stamp it had before reading (a change during the read is
    /// seen at the next check).
    func load() -> (HostsFile, Stamp?) {
        let before = stamp()
        guard let file = fopen(path, "r") else { return (HostsFile(), before) }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > 16 * 1024 * 1024 { break }  // not a hosts file
        }
        return (HostsFile(parsing: String(decoding: bytes, as: UTF8.self)), before)
    }

    /// The file parsed again when its stamp differs from `known`; nil when it has not changed.
    func reloadIfChanged(since known: Stamp?) -> (HostsFile, Stamp?)? {
        guard stamp() != known else { return nil }
        return load()
    }
}
