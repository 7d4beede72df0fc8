import CUV

/// A one-shot timer on the loop, re-armable without allocating: the handle is created once and
/// started and stopped as deadlines move (libuv keeps timers in a heap; no syscall either way).
///
/// Loop-confined. `close()` must be called exactly once; the handle memory is freed in libuv's
/// close callback, as libuv's handle rules require.
final class LoopTimer {
    private let loop: EventLoop
    private let handle: UnsafeMutablePointer<uv_timer_t>
    private let onFire: () -> Void
    private var closed = false
    /// When the timer will fire; .max when it is not armed.
    private(set) var armedDeadline: UInt64 = .max

    /// Creates a stopped timer that calls `onFire` on the loop thread each time it expires.
    init(loop: EventLoop, onFire: @escaping () -> Void) {
        loop.assertInLoop()
        self.loop = loop
        self.onFire = onFire
        handle = .allocate(capacity: 1)
        uv_timer_init(loop.uv, handle)
        handle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
    }

    /// The loop's cached time in milliseconds (updated once per iteration, like every libuv timer).
    static func now(_ loop: EventLoop) -> UInt64 { uv_now(loop.uv) }

    /// Fires once at `deadline` (loop milliseconds), replacing any earlier arming.
    func arm(at deadline: UInt64) {
        guard !closed else { return }
        let now = uv_now(loop.uv)
        let delay = deadline > now ? deadline - now : 0
        armedDeadline = deadline
        uv_timer_start(handle, { handle in
            let timer = Unmanaged<LoopTimer>.fromOpaque(handle!.pointee.data).takeUnretainedValue()
            timer.armedDeadline = .max
            timer.onFire()
        }, delay, 0)
    }

    /// Makes sure the timer fires no later than `deadline`, leaving an earlier arming alone.
    /// For deadlines that only move later (a response arriving, a connection going idle), the
    /// owner re-checks when the timer fires early and arms again; most requests then touch the
    /// timer heap once instead of at every phase.
    func armNoLaterThan(_ deadline: UInt64) {
        guard deadline < armedDeadline else { return }
        arm(at: deadline)
    }

    /// Stops the timer; it can be armed again.
    func disarm() {
        guard !closed else { return }
        armedDeadline = .max
        uv_timer_stop(handle)
    }

    /// Closes the handle. The timer never fires after this returns.
    func close() {
        guard !closed else { return }
        closed = true
        uv_timer_stop(handle)
        handle.withMemoryRebound(to: uv_handle_t.self, capacity: 1) { raw in
            uv_close(raw) { raw in
                raw!.withMemoryRebound(to: uv_timer_t.self, capacity: 1) { $0.deallocate() }
            }
        }
    }
}
