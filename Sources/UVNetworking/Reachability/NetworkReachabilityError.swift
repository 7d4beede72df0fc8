import Glibc

/// Why a reachability manager is not monitoring although it was asked to
/// (`NetworkReachabilityManager.monitoringError`). Its status is `.unknown` meanwhile;
/// `startMonitoring()` tries again.
public struct NetworkReachabilityError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Sendable, Hashable {
        /// The netlink socket could not be opened or bound (no descriptor left: EMFILE; not
        /// allowed: EPERM; no memory: ENOBUFS), or it failed while monitoring. `call` and
        /// `errorNumber` say which system call and why.
        case socketFailed
        /// The manager's event loop was shut down, before monitoring started or while it ran.
        case loopShutDown
    }

    /// What went wrong.
    public let reason: Reason
    /// The system call that failed ("socket", "bind", "recvfrom", "sendto"), when one did.
    public let call: String?
    /// The errno it failed with, when a system call failed.
    public let errorNumber: Int32?

    /// A short sentence, e.g. "netlink socket: socket failed: EMFILE (Too many open files)".
    public var description: String {
        switch reason {
        case .loopShutDown:
            return "the reachability manager's event loop has been shut down"
        case .socketFailed:
            let number = errorNumber ?? 0
            let name = Self.errnoNames[number] ?? "errno \(number)"
            return "netlink socket: \(call ?? "?") failed: \(name) (\(String(cString: strerror(number))))"
        }
    }

    /// A failed system call on the netlink socket.
    static func systemCall(_ call: String, errno: Int32) -> NetworkReachabilityError {
        NetworkReachabilityError(reason: .socketFailed, call: call, errorNumber: errno)
    }

    /// The loop refused the manager's work.
    static let loopShutDown = NetworkReachabilityError(reason: .loopShutDown, call: nil, errorNumber: nil)

    /// The errno values a netlink socket can plausibly fail with, by name, for `description`.
    private static let errnoNames: [Int32: String] = [
        EMFILE: "EMFILE", ENFILE: "ENFILE", EPERM: "EPERM", EACCES: "EACCES", ENOBUFS: "ENOBUFS",
        ENOMEM: "ENOMEM", EAFNOSUPPORT: "EAFNOSUPPORT", EPROTONOSUPPORT: "EPROTONOSUPPORT",
        EINVAL: "EINVAL", EBADF: "EBADF", ECONNREFUSED: "ECONNREFUSED", EADDRINUSE: "EADDRINUSE",
    ]
}
