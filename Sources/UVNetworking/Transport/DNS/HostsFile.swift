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
