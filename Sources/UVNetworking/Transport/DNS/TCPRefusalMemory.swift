/// Which DNS servers refused a TCP connection lately, so that c-ares's next TCP retry to them
/// fails at once, for its own query alone (issue #34).
///
/// Why: c-ares 1.18 retries a truncated UDP answer over TCP. A non-blocking connect reports a
/// refusal only later, on the socket, and c-ares then resets the whole server: it closes its UDP
/// socket too and moves every query to that server on to its next try. The truncated query is
/// re-sent over TCP, is refused again, and the round repeats until every query in flight has
/// used its tries up ("Could not contact DNS servers"). A connect that fails at once is handled
/// per query instead: c-ares skips the server for that query only. Remembering the refusal turns
/// every later attempt into that case, so a server is reset at most once a `window`.
///
/// Loop-confined (the driver's); times are the loop's milliseconds. Sans-I/O.
struct TCPRefusalMemory {
    /// How long a refusal is remembered: long enough to outlast the queries in flight when it
    /// happened (c-ares re-sends within a few seconds), short enough that a server whose TCP comes
    /// back is tried again soon.
    static let windowMilliseconds: UInt64 = 10_000

    /// Server ("address:port") -> until when its TCP is taken as refused.
    private var until: [String: UInt64] = [:]

    /// A TCP connection to `server` could not be made at `now`.
    mutating func recordRefusal(of server: String, now: UInt64) {
        until = until.filter { $0.value > now }  // few servers: forgetting here keeps it small
        until[server] = LoopDuration.deadline(now, plus: Self.windowMilliseconds)
    }

    /// Whether a TCP connection to `server` was refused within the window before `now`.
    func isRefused(_ server: String, now: UInt64) -> Bool {
        guard let deadline = until[server] else { return false }
        return now < deadline
    }
}
