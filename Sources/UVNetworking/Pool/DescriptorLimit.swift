import Glibc

/// The process's file descriptor limit (RLIMIT_NOFILE), which bounds how many connections it
/// can hold, and the connection budget a session takes from it by default.
enum DescriptorLimit {
    /// The soft limit now; nil when unlimited or unknown.
    static var soft: Int? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
        return Int(clamping: limit.rlim_cur)
    }

    /// Connections a session may hold by default: the soft limit less a reserve for the
    /// process's other descriptors (files, pipes, the loop's own) of an eighth of it, at least
    /// 32; a million when unlimited. At least 1.
    static func defaultConnectionBudget(softLimit: Int? = soft) -> Int {
        guard let softLimit else { return 1 << 20 }
        return min(1 << 20, max(1, softLimit - max(32, softLimit / 8)))
    }
}
