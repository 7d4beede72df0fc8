import Foundation

/// Where a run stands at one moment, and the progress line that shows it.
///
/// A value with a pure `line(width:)` so the wording, the rate and the ETA are tested without a
/// terminal; `ProgressLine` only decides when to draw it.
public struct ProgressSnapshot: Equatable, Sendable {
    /// URLs finished (succeeded, failed or malformed).
    public var done: Int
    /// Of those, the ones that did not succeed.
    public var errors: Int
    /// How many there will be in all; nil while the input has not been counted (stdin).
    public var total: Int?
    /// Seconds since the run started.
    public var elapsed: Double
    /// Whether the network is unreachable for this run: no default route while some URL's host
    /// is not loopback. The line then says so in place of the rate and the ETA, which would
    /// only show a run slowing down without saying why.
    public var isNetworkUnreachable: Bool

    /// Creates a snapshot.
    public init(done: Int, errors: Int, total: Int?, elapsed: Double, isNetworkUnreachable: Bool = false) {
        self.done = done
        self.errors = errors
        self.total = total
        self.elapsed = elapsed
        self.isNetworkUnreachable = isNetworkUnreachable
    }

    /// Finished URLs per second over the whole run so far. The whole run rather than the last
    /// tick: a per-tick rate jumps with every keep-alive pause and makes the ETA flicker.
    public var rate: Double { elapsed > 0 ? Double(done) / elapsed : 0 }

    /// Seconds left at the current rate; nil without a total or before anything finished.
    public var secondsLeft: Double? {
        guard let total, rate > 0 else { return nil }
        return Double(max(0, total - done)) / rate
    }

    /// The line, e.g. `41,200/100,000 done  30,512/s  3 errors  ETA 0:02`, or
    /// `41,200/100,000 done  network unreachable  3 errors` while the network is unreachable,
    /// cut to `width` columns so it never wraps (a wrapped line cannot be redrawn in place with
    /// `\r`).
    public func line(width: Int = 80) -> String {
        var parts = [total.map { "\(Self.grouped(done))/\(Self.grouped($0)) done" } ?? "\(Self.grouped(done)) done"]
        parts.append(isNetworkUnreachable ? "network unreachable" : "\(Self.grouped(Int(rate.rounded())))/s")
        parts.append(errors == 1 ? "1 error" : "\(Self.grouped(errors)) errors")
        if !isNetworkUnreachable, let secondsLeft { parts.append("ETA " + Self.clock(secondsLeft)) }
        let text = parts.joined(separator: "  ")
        return text.count <= width ? text : String(text.prefix(max(0, width)))
    }

    /// 1234567 as "1,234,567": counts in the hundreds of thousands are read at a glance.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return value < 0 ? "-" + out : out
    }

    /// Seconds as m:ss, or h:mm:ss from an hour on.
    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        let (hours, minutes, secs) = (whole / 3600, whole / 60 % 60, whole % 60)
        return hours > 0 ? String(format: "%d:%02d:%02d", hours, minutes, secs) : String(format: "%d:%02d", minutes, secs)
    }
}
