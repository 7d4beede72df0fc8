/// What a task does with the body of a redirect it follows (or of a response a download drops
/// to ask again): never the task's body, it is read and dropped when that is cheap, so that the
/// connection can carry the next request, or the connection is closed at once when reading the
/// rest would cost more than opening a new one. A pure function, tested without sockets.
///
/// curl reads at most a few kilobytes of a redirect's body before it gives the connection up;
/// URLSession reads it all. Reading it all makes a 2 GiB redirect body cost 2 GiB of transfer
/// (and, before it was dropped as it came, 2 GiB of memory), and a body that only the end of the
/// connection ends would hold the task until its timeout on a server that keeps it open.
enum RedirectBodyDrain {
    /// The most body bytes read to keep a connection; past them a new connection is cheaper.
    static let limit = 64 * 1024

    /// How the response frames its body.
    enum Framing: Equatable, Sendable {
        /// Content-Length.
        case length(Int64)
        /// Chunked: its size is known only at its end.
        case chunked
        /// Neither: the end of the connection ends it, so the connection is lost anyway.
        case untilClose
    }

    enum Decision: Equatable, Sendable {
        /// Read on and drop what comes; the connection goes back to its pool at the end.
        case drain
        /// Close the connection now and go on with a new one.
        case close
    }

    /// Decides after `dropped` bytes of the body were read (0 at the head).
    static func decide(_ framing: Framing, dropped: Int) -> Decision {
        switch framing {
        case .length(let length): return length <= Int64(limit) ? .drain : .close
        case .chunked: return dropped <= limit ? .drain : .close
        case .untilClose: return .close
        }
    }
}
