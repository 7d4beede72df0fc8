import CAres

/// What the driver does with a look-up c-ares ended with ARES_ECONNREFUSED while a TCP
/// connection to a DNS server failed (issue #34). Sans-I/O.
///
/// Why: when c-ares 1.18 retries a truncated answer over TCP and the connection is refused, it
/// resets the server for every query in flight to it, each of which loses a try (`TCPRefusalMemory`
/// says why). A look-up with no try left ends with ARES_ECONNREFUSED though its own answers were
/// fine, and nothing in c-ares's callback tells it from the look-up whose TCP was refused. So such
/// a look-up is asked once more: by then the refusal is remembered and fails only the query that
/// needs TCP. The second end is final, and ARES_ECONNREFUSED with a TCP failure during it names
/// that look-up's own TCP retry.
enum RefusedLookUp {
    /// The driver's next step.
    enum Step: Equatable {
        /// Hand the end out; `tcpRefused` when it is the look-up's own refused TCP retry.
        case deliver(tcpRefused: Bool)
        /// Send the look-up again, once.
        case askAgain
    }

    /// The step for a look-up that ended with `status`, during which `tcpFailures` TCP
    /// connections to the servers failed; `askedAgain` when this was its second sending.
    static func step(status: Int32, tcpFailures: Int, askedAgain: Bool) -> Step {
        // Every other end (an answer, no such name, a timeout, a UDP server that refused with
        // no TCP failure) is the look-up's own.
        guard status == ARES_ECONNREFUSED, tcpFailures > 0 else { return .deliver(tcpRefused: false) }
        return askedAgain ? .deliver(tcpRefused: true) : .askAgain
    }
}
