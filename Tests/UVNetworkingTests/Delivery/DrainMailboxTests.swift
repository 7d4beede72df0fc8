import Dispatch
import Synchronization
import Testing
@testable import UVNetworking

/// DrainMailbox without a session: items posted from one thread, drained on a serial queue.
@Suite(.tags(.unit)) struct DrainMailboxTests {
    /// Counts the drains the mailbox schedules on `queue`.
    private final class Scheduler: Sendable {
        let queue = DispatchQueue(label: "uvnetworking.tests.mailbox")
        let scheduled = Atomic<Int>(0)

        func schedule(_ drain: @escaping @Sendable () -> Void) {
            scheduled.add(1, ordering: .relaxed)
            queue.async(execute: drain)
        }
    }

    @Test func itemsPostedWhileADrainRunsJoinThatDrain() {
        let scheduler = Scheduler()
        let firstStarted = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let consumed = Mutex<[Int]>([])
        let mailbox = DrainMailbox<Int>(schedule: scheduler.schedule) { item in
            if item == 0 {
                firstStarted.signal()
                release.wait()
            }
            consumed.withLock { $0.append(item) }
        }
        mailbox.post(0)
        firstStarted.wait()
        for item in 1..<100 { mailbox.post(item) }
        release.signal()
        scheduler.queue.sync {}
        #expect(consumed.withLock { $0 } == Array(0..<100))
        // One wake-up of the queue for all of them.
        let scheduledOnce = scheduler.scheduled.load(ordering: .relaxed)
        #expect(scheduledOnce == 1)
        // Idle again: the next post schedules a drain of its own.
        mailbox.post(100)
        scheduler.queue.sync {}
        let scheduledTwice = scheduler.scheduled.load(ordering: .relaxed)
        #expect(scheduledTwice == 2)
        #expect(consumed.withLock { $0.count } == 101)
    }

    @Test func everyItemIsConsumedOnceAndInOrderUnderRacingPosts() {
        let scheduler = Scheduler()
        let consumed = Mutex<[Int]>([])
        let onQueue = Atomic<Bool>(true)
        let key = DispatchSpecificKey<Bool>()
        scheduler.queue.setSpecific(key: key, value: true)
        let mailbox = DrainMailbox<Int>(schedule: scheduler.schedule) { item in
            if DispatchQueue.getSpecific(key: key) != true { onQueue.store(false, ordering: .relaxed) }
            consumed.withLock { $0.append(item) }
        }
        let count = 200_000
        let poster = DispatchQueue(label: "uvnetworking.tests.mailbox.poster")
        poster.sync {
            for item in 0..<count {
                mailbox.post(item)
                // Now and then let the drain catch up and go idle.
                if item % 5_000 == 0 { scheduler.queue.sync {} }
            }
        }
        scheduler.queue.sync {}
        let seen = consumed.withLock { $0 }
        #expect(seen.count == count)
        #expect(seen == Array(0..<count))
        let allOnQueue = onQueue.load(ordering: .relaxed)
        #expect(allOnQueue)
        let scheduled = scheduler.scheduled.load(ordering: .relaxed)
        #expect(scheduled < count)
    }

    @Test func aDrainHoldsItsMailboxOnlyWhileItRuns() {
        let scheduler = Scheduler()
        weak var weakBox: DrainMailbox<Int>?
        do {
            let box = DrainMailbox<Int>(schedule: scheduler.schedule) { _ in }
            weakBox = box
            box.post(1)
        }
        scheduler.queue.sync {}
        #expect(weakBox == nil)
    }

    /// What the consumer is handed is the only reference left: a batch's task array that is
    /// resolved in place is then not copied whole (each task retained) before its handlers run.
    @Test func theConsumerGetsTheOnlyReferenceToAnItem() {
        final class Item: Sendable {}
        let scheduler = Scheduler()
        let unique = Mutex<[Bool]>([])
        let mailbox = DrainMailbox<Item>(schedule: scheduler.schedule) { (item: consuming Item) in
            let only = isKnownUniquelyReferenced(&item)
            unique.withLock { $0.append(only) }
        }
        mailbox.post(Item())
        mailbox.post(Item())
        scheduler.queue.sync {}
        #expect(unique.withLock { $0 } == [true, true])
    }

    @Test func aMailboxIsIdleOnlyWhenNoDrainIsScheduledOrRunning() {
        let scheduler = Scheduler()
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let mailbox = DrainMailbox<Int>(schedule: scheduler.schedule) { _ in
            started.signal()
            release.wait()
        }
        #expect(mailbox.isIdle)
        mailbox.post(1)
        started.wait()
        #expect(!mailbox.isIdle)
        release.signal()
        scheduler.queue.sync {}
        #expect(mailbox.isIdle)
    }
}
