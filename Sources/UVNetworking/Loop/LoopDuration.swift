/// Seconds turned into the loop clock's milliseconds for timeouts, for any `Double` a caller can
/// set: huge and infinite values mean "never", and no conversion or addition can trap.
enum LoopDuration {
    /// Above this many milliseconds (about 285,000 years) a timeout is taken for "never": the
    /// conversion to UInt64 can no longer trap, and a deadline computed from it cannot wrap.
    private static let longest: Double = 9e15

    /// A timeout in milliseconds, `.max` for none: infinite, too large, NaN, zero or negative.
    /// (Zero or less meaning "no timeout" is curl's and Go's convention.)
    static func timeout(_ seconds: Double) -> UInt64 {
        guard seconds > 0 else { return .max }  // also NaN
        let milliseconds = seconds * 1000
        return milliseconds < longest ? UInt64(milliseconds) : .max
    }

    /// A duration in milliseconds where zero is meaningful ("at once"): 0 for zero, negative or
    /// NaN; `.max` for infinite or too large.
    static func clamped(_ seconds: Double) -> UInt64 {
        guard seconds > 0 else { return 0 }
        let milliseconds = seconds * 1000
        return milliseconds < longest ? UInt64(milliseconds) : .max
    }

    /// `start + milliseconds`, or `.max` ("never") when `milliseconds` is `.max` or the sum
    /// would not fit.
    static func deadline(_ start: UInt64, plus milliseconds: UInt64) -> UInt64 {
        let (sum, overflow) = start.addingReportingOverflow(milliseconds)
        return overflow ? .max : sum
    }
}
