import Glibc
import LoopbackHTTPServer

/// One server for many distinct origins: Linux routes all of 127/8 to lo, so a
/// `LoopbackHTTPServer` on 0.0.0.0 answers on every 127.x.y.z, and it never closes an idle
/// connection first. The library's many-origins suite and uvfetch's use it.
enum ManyOriginsServer {
    /// Starts the server on 0.0.0.0; returns it and its port.
    static func start() throws -> (LoopbackHTTPServer, Int) {
        // The server holds one descriptor per connection a client under `ulimit -n 1024`
        // keeps open: this process may need more than such a limit itself.
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < 8192 && limit.rlim_max > limit.rlim_cur {
            limit.rlim_cur = min(limit.rlim_max, 8192)
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        }
        let server = LoopbackHTTPServer(address: "0.0.0.0")
        return (server, try server.start())
    }

    /// The n-th distinct origin (n from 0), all on `port`: 127.0.x.y, y from 1 to 250.
    static func origin(_ n: Int, port: Int) -> String {
        "http://127.\(1 + n / 62_500).\(n / 250 % 250).\(1 + n % 250):\(port)"
    }
}
