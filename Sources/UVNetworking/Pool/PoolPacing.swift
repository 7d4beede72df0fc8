import CUV

/// The I/O shell of an origin's `OriginPacer`: one per pool of a session with a per-origin rate
/// or delay (none otherwise, so an unpaced pool pays one nil check per request). It performs the
/// machine's actions with the pool's loop: one timer, made when first needed, closed when the
/// pacer has nothing left to wait for.
///
/// The requests it holds sit in the pool's queue of waiters (`ConnectionPool.enqueue`), where the
/// pool's deadline timer watches them and `cancel` finds them, as for a request waiting for a
/// connection: only the pool's machine does not know them until they are released. A paced wait
/// therefore counts against the request's timeouts exactly as a wait for a connection does.
/// Loop-confined.
final class PoolPacing {
    private unowned let pool: ConnectionPool
    private let loop: EventLoop
    @exclusivity(unchecked) private var machine: OriginPacer
    @exclusivity(unchecked) private var timer: LoopTimer?
    /// A timer closed from inside its own callback, kept until that callback has returned: the
    /// object must not go away while it runs.
    @exclusivity(unchecked) private var retiredTimer: LoopTimer?
    @exclusivity(unchecked) private var closed = false

    init(pool: ConnectionPool, loop: EventLoop, interval: UInt64) {
        self.pool = pool
        self.loop = loop
        self.machine = OriginPacer(interval: interval)
    }

    /// Whether a pool with no connection and no waiter may be dropped now without forgetting a
    /// start that the next request must keep its distance from.
    var isIdle: Bool { machine.isIdle(at: now) }

    /// `id`, already in the pool's queue, wants to start.
    func arrived(_ id: Int) {
        perform(machine.requestArrived(id, at: now))
    }

    /// `id` leaves the pool's queue: handed a connection, or failed to get one. Called before
    /// the request is told, so that whatever the request does next finds the pacer up to date.
    @inline(__always)
    func ended(_ id: Int) {
        guard id == machine.released else { return }
        perform(machine.requestStarted(id, at: now))
    }

    /// `id` gave up while waiting (cancelled, timed out).
    func cancelled(_ id: Int) {
        perform(machine.requestCancelled(id, at: now))
    }

    /// The pool closes: the timer goes, and nothing is released any more.
    func close() {
        closed = true
        timer?.close()
        // Kept, not released: a close may come from inside the timer's own callback.
        if let timer { retiredTimer = timer }
        timer = nil
    }

    /// The loop's time brought up to date: its cached time lags by whatever the iteration has
    /// done so far, and a start counted early would let the next one come too soon. Only paced
    /// pools ask, so unpaced requests pay nothing for it.
    private var now: UInt64 {
        uv_update_time(loop.uv)
        return uv_now(loop.uv)
    }

    private func perform(_ action: OriginPacer.Action) {
        switch action {
        case .none:
            break
        case .release(let id):
            guard !closed else { return }
            pool.releasePaced(id)
        case .armTimer(let deadline):
            guard !closed else { return }
            retiredTimer = nil
            if timer == nil { timer = LoopTimer(loop: loop) { [unowned self] in self.timerFired() } }
            timer!.arm(at: deadline)
        }
    }

    private func timerFired() {
        perform(machine.timerFired(at: now))
        // Nothing waits for a turn: no handle kept for an origin that may never be asked again.
        if machine.heldCount == 0, let timer, timer.armedDeadline == .max {
            timer.close()
            self.timer = nil
            retiredTimer = timer
        }
    }
}
