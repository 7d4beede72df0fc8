import COpenSSL

/// Reads OpenSSL's per-thread error queue.
///
/// Every security call that can fail drains the queue before returning: the queue is
/// thread-local, and an entry left behind on a worker thread would be read as the cause of a
/// later, unrelated failure on that thread (the transport's `SSL_get_error` looks at it too).
enum OpenSSLErrorQueue {
    /// Empties this thread's queue and returns OpenSSL's reasons, oldest first, joined by "; "
    /// ("no start line", "mac verify failure"); "" when the queue was empty.
    ///
    /// Popping an entry keeps the copies of the source file and function names OpenSSL 3 made
    /// for it, until another error reuses its slot; `ERR_clear_error` frees them. So a drained
    /// queue holds no memory, and a leak checker that compares the heap before and after a call
    /// (libFuzzer's) does not see a call that failed as one that leaked.
    @discardableResult
    static func drain() -> String {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 {
                // Only after a pop: on an empty queue it would cost a walk of all its slots.
                if !reasons.isEmpty { ERR_clear_error() }
                break
            }
            if let reason = ERR_reason_error_string(code) {
                reasons.append(String(cString: reason))
            } else {
                // Codes from providers may have no registered text; the number still helps.
                reasons.append("OpenSSL error \(code)")
            }
        }
        return reasons.joined(separator: "; ")
    }

    /// `text`, followed by OpenSSL's reasons in parentheses when the queue held any. Drains it.
    static func detail(_ text: String) -> String {
        annotate(text, reasons: drain())
    }

    /// `text`, followed by `reasons` (from `drain`) in parentheses unless empty.
    static func annotate(_ text: String, reasons: String) -> String {
        reasons.isEmpty ? text : "\(text) (\(reasons))"
    }
}
