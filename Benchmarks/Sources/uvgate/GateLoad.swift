import Dispatch
import Foundation
import UVNetworking

/// Keeps a fixed number of GETs of one URL in flight through the task API
/// (`dataTask(with:completionHandler:)`, `HTTPResponseSerializer`), each completion checking its
/// response and resuming the next task, until a request budget is spent: the same load as
/// uvbench's, without its latency histogram, so that the gate counts the library and a closure.
///
/// The state is touched only where completions run (a serial queue, or the loop thread in the
/// run-on-loop mode), so the driver takes no lock.
final class GateLoad: @unchecked Sendable {
    let manager: SessionManager
    private let request: Request
    private let queue = DispatchQueue(label: "uvgate.completions")
    private let onLoop: Bool
    private let expectedBody: Data
    private var toLaunch = 0
    private var inFlight = 0
    private var failures = 0
    private var firstFailure: String?
    private var finished: DispatchSemaphore?

    /// A session made from `configuration` GETting `url`, completions on a serial queue or,
    /// with `onLoop`, on the loop thread (`deliversOnEventLoop`).
    init(url: URL, configuration: SessionConfiguration, onLoop: Bool, expectedBody: String) {
        manager = SessionManager(configuration: configuration)
        manager.completionQueue = queue
        manager.deliversOnEventLoop = onLoop
        manager.responseSerializer = HTTPResponseSerializer()
        request = Request(url: url)
        self.onLoop = onLoop
        self.expectedBody = Data(expectedBody.utf8)
    }

    /// Sends `requests` requests, `concurrency` at a time, and waits for the last; returns the
    /// failures (an error, another status, another body) and the first one described.
    func run(requests: Int, concurrency: Int) -> (failures: Int, first: String?) {
        let done = DispatchSemaphore(value: 0)
        queue.sync {
            toLaunch = requests
            inFlight = 0
            failures = 0
            firstFailure = nil
            finished = done
        }
        let start: @Sendable () -> Void = {
            for _ in 0..<min(concurrency, requests) { self.launch() }
        }
        if onLoop { _ = manager.loop.execute(start) } else { queue.async(execute: start) }
        done.wait()
        return queue.sync { (failures, firstFailure) }
    }

    /// Queue (or loop thread) only.
    private func launch() {
        toLaunch -= 1
        inFlight += 1
        manager.dataTask(with: request) { [self] response, object, error in
            check(status: response?.status.code, body: object as? Data, error: error)
        }.resume()
    }

    private func check(status: Int?, body: Data?, error: (any Error)?) {
        inFlight -= 1
        if error != nil || status != 200 || body != expectedBody {
            failures += 1
            if firstFailure == nil { firstFailure = error.map { "\($0)" } ?? "status \(status ?? 0), \(body?.count ?? 0) body bytes" }
        }
        if toLaunch > 0 {
            launch()
        } else if inFlight == 0 {
            finished?.signal()
        }
    }

    /// Closes the session's connections.
    func shutdown() {
        manager.invalidateSessionCancelingTasks(false, resetSession: false)
    }
}
