import Dispatch
import Foundation
import Synchronization
import Testing
@testable import UVFetchCore

/// The hand-off from the thread reading the input to the completion queue, without sockets.
@Suite(.tags(.unit)) struct EntryFeedTests {
    /// Counts `onAvailable` calls.
    private final class Wakes: Sendable {
        let count = Atomic(0)
    }

    @Test func entriesComeOutInOrderAndAnEmptyFeedCallsBackAtTheNextPush() {
        let wakes = Wakes()
        let feed = EntryFeed<Int>(capacity: 10) { wakes.count.add(1, ordering: .relaxed) }
        // The consumer has found nothing yet: the first push calls back, later ones do not.
        #expect(feed.push(1) && feed.push(2))
        #expect(wakes.count.load(ordering: .relaxed) == 1)
        guard case .entries(let first) = feed.take() else { Issue.record("no entries"); return }
        #expect(first == [1, 2])
        guard case .later = feed.take() else { Issue.record("expected later"); return }
        #expect(feed.push(3))
        #expect(wakes.count.load(ordering: .relaxed) == 2)
        feed.end()
        // Ended, with an entry still waiting: the entry first.
        guard case .entries(let second) = feed.take() else { Issue.record("no entries"); return }
        #expect(second == [3])
        guard case .ended = feed.take() else { Issue.record("expected ended"); return }
    }

    @Test func theEndWakesAWaitingConsumer() {
        let wakes = Wakes()
        let feed = EntryFeed<Int>(capacity: 10) { wakes.count.add(1, ordering: .relaxed) }
        guard case .later = feed.take() else { Issue.record("expected later"); return }
        feed.end()
        #expect(wakes.count.load(ordering: .relaxed) == 1)
        guard case .ended = feed.take() else { Issue.record("expected ended"); return }
    }

    @Test func aFullFeedHoldsTheReaderUntilTheQueueTakes() {
        let feed = EntryFeed<Int>(capacity: 3) {}
        let pushed = Atomic(0)
        let done = DispatchSemaphore(value: 0)
        Thread {
            for value in 0..<6 {
                guard feed.push(value) else { break }
                pushed.add(1, ordering: .releasing)
            }
            done.signal()
        }.start()
        // The third push fills the feed: it returns only once the queue has taken.
        #expect(done.wait(timeout: .now() + 0.3) == .timedOut)
        #expect(pushed.load(ordering: .acquiring) == 2)
        var taken: [Int] = []
        while taken.count < 6 {
            if case .entries(let batch) = feed.take() { taken += batch }
            usleep(1_000)
        }
        #expect(taken == Array(0..<6))
        #expect(done.wait(timeout: .now() + 10) == .success)
    }

    @Test func closingReleasesAWaitingReaderAndRefusesMore() {
        let feed = EntryFeed<Int>(capacity: 1) {}
        let result = Mutex<Bool?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let accepted = feed.push(1)
            result.withLock { $0 = accepted }
            done.signal()
        }.start()
        #expect(done.wait(timeout: .now() + 0.2) == .timedOut)
        feed.close()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(result.withLock { $0 } == false)
        #expect(!feed.push(2))
        guard case .ended = feed.take() else { Issue.record("expected ended"); return }
    }
}

/// The driver that starts each URL from the completion of another, without sockets: URLs
/// "end" on the queue a moment after they start.
@Suite(.tags(.unit)) struct RunDriverTests {
    @Test func keepsConcurrencyInFlightStartsInOrderAndFinishesOnce() {
        let queue = DispatchQueue(label: "driver.test")
        let finished = DispatchSemaphore(value: 0)
        let driver = RunDriver(concurrency: 3, queue: queue, finished: finished, readAhead: 4)
        // Queue-only state.
        final class Log: @unchecked Sendable {
            var started: [String] = []
            var inFlight = 0
            var most = 0
        }
        let log = Log()
        driver.begin(isStopping: { false }) { next in
            log.started.append(next.text)
            log.inFlight += 1
            log.most = max(log.most, log.inFlight)
            queue.asyncAfter(deadline: .now() + .milliseconds(1)) {
                log.inFlight -= 1
                driver.fetchEnded()
            }
        }
        let texts = (0..<50).map { "http://h.test/\($0)" }
        for text in texts {
            #expect(driver.feed.push(RunDriver.Pending(url: URL(string: text)!, text: text, bytes: nil)))
        }
        driver.feed.end()
        #expect(finished.wait(timeout: .now() + 30) == .success)
        queue.sync {
            #expect(log.started == texts)
            #expect(log.most == 3)
            #expect(log.inFlight == 0)
        }
        // Signalled once: nothing more to wait for.
        #expect(finished.wait(timeout: .now() + 0.1) == .timedOut)
    }

    @Test func aStopStartsNothingMoreAndFinishesWhenTheLastEnds() {
        let queue = DispatchQueue(label: "driver.test")
        let finished = DispatchSemaphore(value: 0)
        let driver = RunDriver(concurrency: 2, queue: queue, finished: finished, readAhead: 8)
        let stopping = Atomic(false)
        final class Ends: @unchecked Sendable { var pending: [() -> Void] = []; var started = 0 }
        let ends = Ends()
        driver.begin(isStopping: { stopping.load(ordering: .acquiring) }) { _ in
            ends.started += 1
            ends.pending.append { driver.fetchEnded() }
        }
        for index in 0..<5 {
            _ = driver.feed.push(RunDriver.Pending(url: URL(string: "http://h.test/\(index)")!, text: "\(index)", bytes: nil))
        }
        queue.sync {}
        stopping.store(true, ordering: .releasing)
        driver.feed.close()
        queue.async { driver.pump() }
        #expect(finished.wait(timeout: .now() + 0.2) == .timedOut)
        queue.sync { ends.pending.forEach { $0() } }
        #expect(finished.wait(timeout: .now() + 10) == .success)
        queue.sync { #expect(ends.started == 2) }
    }
}
