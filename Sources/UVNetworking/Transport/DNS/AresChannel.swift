import CAres
import Glibc

/// c-ares is initialized once per process (a no-op on Linux today, but its contract).
private let aresLibraryStatus: Int32 = ares_library_init(ARES_LIB_INIT_ALL)

/// A c-ares channel made off the loop thread: `ares_init_options` reads resolv.conf (nameservers,
/// search, ndots, timeout, attempts, rotate) and the environment (LOCALDOMAIN, RES_OPTIONS), file
/// reads the loop must not wait for. Only what the library needs is set: the socket-state
/// callback that lets the loop poll c-ares's sockets, and lookups "b" (DNS only: /etc/hosts is
/// read by `HostsFileSource` off the loop, since c-ares 1.18 would open and read it on the loop
/// thread at every query). Everything resolv.conf says is c-ares's own reading of it, untouched
/// unless `dnsServers` replaces the nameservers.
struct AresChannel: @unchecked Sendable {
    /// The channel; it belongs to one driver and is used on its loop only once handed over.
    let channel: OpaquePointer

    typealias SocketStateCallback = @convention(c) (UnsafeMutableRawPointer?, ares_socket_t, Int32, Int32) -> Void

    /// Makes a channel whose socket-state changes go to `callback` with `data`, its servers
    /// replaced by `servers` (c-ares's comma-separated form) when given.
    static func make(servers: String?, callback: SocketStateCallback, data: UnsafeMutableRawPointer) -> Result<AresChannel, TransportError> {
        guard aresLibraryStatus == ARES_SUCCESS else {
            return .failure(.resolutionFailed(host: "", status: aresLibraryStatus))
        }
        var options = ares_options()
        options.sock_state_cb = callback
        options.sock_state_cb_data = data
        var channel: OpaquePointer?
        let status = "b".withCString { lookups -> Int32 in
            options.lookups = UnsafeMutablePointer(mutating: lookups)  // c-ares copies it
            return ares_init_options(&channel, &options, ARES_OPT_SOCK_STATE_CB | ARES_OPT_LOOKUPS)
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
}
