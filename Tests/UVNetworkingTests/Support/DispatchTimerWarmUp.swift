import Dispatch
import Foundation

/// libdispatch on Linux opens one timer descriptor per clock (uptime, monotonic, wall) the first
/// time it arms a timer on that clock, and keeps it for the life of the process. A short timer
/// does not reliably open it: under load its deadline has passed by the time dispatch's manager
/// gets to it, and it fires without being armed. The descriptor then appears in whichever test
/// first sleeps long enough, after that test's baseline, and looks like a leak. Timers an hour
/// away are always armed: one per clock (and per Swift clock, for `Task.sleep`) opens them all.
/// (Other runtime parts open timer descriptors late too, so the harness's leak check excuses new
/// ones anyway; the warm-up keeps such late arrivals, and the check's 5-second wait, rare.)
enum DispatchTimerWarmUp {
    /// Opens libdispatch's timer descriptors, once per process; waits (at most 5 s) until they
    /// are open. Returns how many timer descriptors the process has.
    @discardableResult
    static func openTimerDescriptors() -> Int { opened }

    private static let opened: Int = {
        let queue = DispatchQueue(label: "uvnetworking.tests.timer-warmup")
        let uptime = DispatchSource.makeTimerSource(queue: queue)
        uptime.schedule(deadline: .now() + .seconds(3_600))
        uptime.resume()
        let wall = DispatchSource.makeTimerSource(queue: queue)
        wall.schedule(wallDeadline: .now() + .seconds(3_600))
        wall.resume()
        let continuous = Task.detached { try? await Task.sleep(for: .seconds(3_600)) }
        let suspending = Task.detached { try? await Task.sleep(for: .seconds(3_600), clock: .suspending) }
        _ = waitUntil(timeout: 5) { timerDescriptorCount() >= 3 }
        uptime.cancel()
        wall.cancel()
        continuous.cancel()
        suspending.cancel()
        return timerDescriptorCount()
    }()

    /// Timer descriptors open in this process.
    static func timerDescriptorCount() -> Int {
        fileDescriptorTargets().values.filter { $0 == "anon_inode:[timerfd]" }.count
    }
}
