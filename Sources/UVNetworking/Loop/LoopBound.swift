/// Carries a loop-confined value into a job for its loop. Sendable because the value can only be
/// read on the loop's thread, which debug builds check on every access.
struct LoopBound<Value>: @unchecked Sendable {
    private let wrapped: Value
    private let loop: EventLoop

    /// Wraps `value`, which from now on belongs to `loop`.
    init(_ value: Value, loop: EventLoop) {
        self.wrapped = value
        self.loop = loop
    }

    /// The value; on the loop thread only.
    var value: Value {
        loop.assertInLoop()
        return wrapped
    }
}
