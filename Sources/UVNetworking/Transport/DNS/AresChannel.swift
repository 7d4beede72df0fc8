import CAres
import Glibc

/// c-ares is initialized once per process (a no-op on Linux today, but its contract).
private let aresLibraryStatus: Int32 = ares_library_init(ARES_LIB_INIT_ALL)

/// A c-ares channel made off the loop thread: `ares_init_options` reads resolv.conf (nameservers,
/// search, ndots, rotate) and the environment (LOCALDOMAIN, RES_OPTIONS), file reads the loop must
/// not wait for. Set here: the socket-state callback that lets the loop poll c-ares's sockets;
/// lookups "b" (DNS only: /etc/hosts is read by `HostsFileSource` off the loop, since c-ares 1.18
/// would open and read it on the loop thread at every query); and resolv.conf's timeout and
/// attempts when it has them, which c-ares 1.18 does not read (`ResolverOptions`). The rest is
/// c-ares's own reading of resolv.conf, untouched unless `dnsServers` replaces the nameservers.
struct AresChannel: @unchecked Sendable {
    /// The channel; it belongs to one driver and is used on its loop only once handed over.
    let channel: OpaquePointer

    typealias SocketStateCallback = @convention(c) (UnsafeMutableRawPointer?, ares_socket_t, Int32, Int32) -> Void

    /// Makes a channel whose socket-state changes go to `callback` with `data`, its servers
    /// replaced by `servers` (c-ares's comma-separated form) when given.
    /// Where resolv.conf is unless a test says otherwise.
    static let defaultResolvConf = "/etc/resolv.conf"

    static func make(servers: String?, resolvConf: String = defaultResolvConf, callback: SocketStateCallback,
                     data: UnsafeMutableRawPointer) -> Result<AresChannel, TransportError> {
        guard aresLibraryStatus == ARES_SUCCESS else {
            return .failure(.resolutionFailed(host: "", status: aresLibraryStatus))
        }
        var options = ares_options()
        options.sock_state_cb = callback
        options.sock_state_cb_data = data
        var mask = ARES_OPT_SOCK_STATE_CB | ARES_OPT_LOOKUPS
        let environment = getenv("RES_OPTIONS").map { String(cString: $0) }
        let tuning = ResolverOptions(resolvConf: readSmallFile(resolvConf) ?? "", environment: environment)
        if let seconds = tuning.timeoutSeconds {
            options.timeout = Int32(seconds * 1000)
            mask |= ARES_OPT_TIMEOUTMS
        }
        if let attempts = tuning.attempts {
            options.tries = Int32(attempts)
            mask |= ARES_OPT_TRIES
        }
        // Only another path is named: the default is c-ares's own (and LOCALDOMAIN's and
        // RES_OPTIONS's handling stays as c-ares has it).
        if resolvConf != Self.defaultResolvConf { mask |= ARES_OPT_RESOLVCONF }
        var channel: OpaquePointer?
        let status = "b".withCString { lookups -> Int32 in
            resolvConf.withCString { path -> Int32 in
                options.lookups = UnsafeMutablePointer(mutating: lookups)  // c-ares copies both
                options.resolvconf_path = UnsafeMutablePointer(mutating: path)
                return ares_init_options(&channel, &options, mask)
            }
        }
        guard status == ARES_SUCCESS, let channel else {
            return .failure(.resolutionFailed(host: "", status: status))
        }
        if let servers {
            let status = ares_set_servers_ports_csv(channel, servers)
            guard status == ARES_SUCCESS else {
                ares_destroy(channel)
                return .failure(.invalidDNSServer(entry: servers))
            }
        }
        return .success(AresChannel(channel: channel))
    }

    /// A file's text, up to 64 KiB; nil when it cannot be opened.
    private static func readSmallFile(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes = [UInt8](repeating: 0, count: 64 * 1024)
        let count = fread(&bytes, 1, bytes.count, file)
        return String(decoding: bytes[0..<count], as: UTF8.self)
    }
}
