import Foundation
import Synchronization

/// Several event loops, each on a thread of its own, so that a session can use more than one
/// core: a `SessionManager` made over a group spreads its origins over the loops (every task of
/// one origin runs on the same loop, where that origin's pool lives).
///
/// A loop is still the unit of confinement: each connection, timer and DNS query lives on one
/// loop, and nothing is shared between the loops of a group but the group itself (an array that
/// never changes and a counter).
///
/// Lifecycle: `init` starts every loop or none (it throws, having shut down the ones it started).
/// `shutdown()` shuts every loop down, all at once, and returns once every thread has ended.
public final class EventLoopGroup: Sendable {
    /// The loops, in a fixed order: a session maps an origin to `loops[hash % loops.count]`.
    public let loops: [EventLoop]
    /// `next()`'s position.
    private let cursor = Atomic<Int>(0)

    /// The group sessions use when made with `SessionManager(configuration:group:)` and no
    /// group: one loop per core, the first of them `EventLoop.shared` (so a process that also
    /// has single-loop sessions runs no extra thread for them). It lives as long as the
    /// process. If a loop past the first cannot start (no file descriptor left), the group has
    /// the loops that did; if the first cannot, it is born shut down as `EventLoop.shared` is,
    /// and tasks on it complete with `.loopShutDown`.
    public static let shared: EventLoopGroup = {
        var loops = [EventLoop.shared]
        for index in 1..<defaultLoopCount {
            do throws(NetworkingError) {
                loops.append(try EventLoop(name: "uvnetworking.loop.\(index)"))
            } catch {
                break
            }
        }
        return EventLoopGroup(loops: loops)
    }()

    /// The number of loops a group gets unless told otherwise: the cores this process may run on.
    public static var defaultLoopCount: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

    /// Starts `count` loops (at least one), named `name.0`, `name.1`, ...
    /// - Throws: `NetworkingError` with code `.loopShutDown` when a loop cannot start (see
    ///   `EventLoop.init`); the loops already started are shut down first.
    public init(loopCount count: Int = EventLoopGroup.defaultLoopCount, name: String = "uvnetworking.loop") throws(NetworkingError) {
        var loops: [EventLoop] = []
        for index in 0..<max(1, count) {
            do throws(NetworkingError) {
                loops.append(try EventLoop(name: "\(name).\(index)"))
            } catch {
                for loop in loops { loop.shutdown() }
                throw error
            }
        }
        self.loops = loops
    }

    /// A group of loops that exist already (a single loop is a group of one). The group does not
    /// own them any more than they own themselves: `shutdown()` shuts them down.
    public init(loops: [EventLoop]) {
        precondition(!loops.isEmpty, "an event loop group needs at least one loop")
        self.loops = loops
    }

    /// The loops in turn, one per call (round-robin), for work of your own that should be spread.
    public func next() -> EventLoop {
        loops[cursor.wrappingAdd(1, ordering: .relaxed).oldValue % loops.count]
    }

    /// The loop `hash` maps to: the same loop for the same hash, for the group's life.
    @inline(__always)
    func loop(forHash hash: Int) -> EventLoop {
        loops[Int(UInt(bitPattern: hash) % UInt(loops.count))]
    }

    /// Shuts every loop down (see `EventLoop.shutdown()`: each ends its tasks with
    /// `.loopShutDown` and closes its connections) and waits for every thread to end. The loops
    /// stop side by side, not one after another. Idempotent; later calls wait too. On one of the
    /// group's own loop threads (from a job) it starts the shutdown and returns at once, as
    /// `EventLoop.shutdown()` does there; on the thread of a loop outside the group, debug
    /// builds trap: waiting there would stall that loop.
    public func shutdown() {
        for loop in loops { loop.beginShutdown() }
        guard !loops.contains(where: { $0.inLoop }) else { return }
        EventLoop.assertNotOnLoopThread("EventLoopGroup.shutdown()")
        let stopped = DispatchGroup()
        for loop in loops {
            stopped.enter()
            loop.whenStopped { stopped.leave() }
        }
        stopped.wait()
    }

    /// Shuts every loop down as `shutdown()` does, and returns once every thread has ended,
    /// without blocking a thread meanwhile.
    public func shutdown() async {
        for loop in loops { loop.beginShutdown() }
        for loop in loops { await loop.shutdown() }
    }
}
