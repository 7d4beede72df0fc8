import CAres
import CUV
import Glibc

/// Tells a look-up that failed for want of a file descriptor from one no server answered.
/// c-ares 1.18 reports both as ARES_ECONNREFUSED: when it cannot open a query's socket it skips
/// the server, and with every server skipped the query ends so. A socket opened (and closed) at
/// once on the loop thread tells which: the session's connections then give way as for a connect
/// (`ConnectionPool`).
enum DescriptorShortage {
    /// The libuv status (UV_EMFILE, UV_ENFILE) when `status` may mean c-ares found no descriptor
    /// for its socket and none can be opened now; nil otherwise.
    static func check(aresStatus status: Int32) -> Int32? {
        guard status == ARES_ECONNREFUSED else { return nil }
        let probe = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard probe < 0 else {
            close(probe)
            return nil
        }
        let code = -errno
        return UVError.isDescriptorShortage(code) ? code : nil
    }
}
