import Synchronization

/// Hands items from producers (the loop thread) to one consumer (a serial completion queue) with
/// one dispatch per idle-to-busy transition, not one per item: while a drain is scheduled or
/// running, a posted item is picked up by that drain, so the queue's thread is woken (a futex
/// call or two) once for as many batches as arrive while it works.
///
/// One atomic word is the whole state: 0 when idle (no drain scheduled), `drainingEmpty` when a
/// drain is scheduled or running and nothing waits, otherwise the newest waiting node (a list
/// linked newest first, each node retained by the list). Items are consumed in the order they
/// were posted; each exactly once.
final class DrainMailbox<Item>: @unchecked Sendable {
    // @unchecked: the nodes are handed from producer to consumer through the atomic word
    // (release on post, acquire on take); nothing else is shared.

    private final class Node {
        var item: Item?
        /// The node posted before this one (its bits), or 0.
        var older: UInt = 0

        init(_ item: Item) { self.item = item }
    }

    /// A drain is scheduled or running, and no item waits.
    private static var drainingEmpty: UInt { 1 }

    private let state = Atomic<UInt>(0)
    private let schedule: (@escaping @Sendable () -> Void) -> Void
    private let consume: (consuming Item) -> Void

    /// `schedule` runs a drain on the consumer (`queue.async`); `consume` is called there for
    /// each item, in posting order.
    init(schedule: @escaping (@escaping @Sendable () -> Void) -> Void, consume: @escaping (consuming Item) -> Void) {
        self.schedule = schedule
        self.consume = consume
    }

    /// Queues `item`; schedules a drain only when none is scheduled or running.
    func post(_ item: consuming Item) {
        let node = Node(item)
        let bits = UInt(bitPattern: Unmanaged.passRetained(node).toOpaque())
        var current = state.load(ordering: .relaxed)
        while true {
            node.older = current > Self.drainingEmpty ? current : 0
            let (exchanged, original) = state.weakCompareExchange(expected: current, desired: bits,
                                                                  successOrdering: .releasing, failureOrdering: .relaxed)
            if exchanged { break }
            current = original
        }
        if current == 0 { schedule { [self] in drain() } }
    }

    /// Whether no drain is scheduled or running: a `post` now would schedule one (and wake the
    /// consumer's thread). A hint: a running drain may go idle right after.
    var isIdle: Bool { state.load(ordering: .relaxed) == 0 }

    /// Consumes every waiting item, and the ones posted meanwhile, then goes idle.
    private func drain() {
        while true {
            let taken = state.exchange(Self.drainingEmpty, ordering: .acquiring)
            if taken > Self.drainingEmpty {
                consumeList(newest: taken)
                continue
            }
            // Nothing since the last take: idle, unless a post slipped in (it saw a drain
            // running and scheduled none).
            if state.compareExchange(expected: Self.drainingEmpty, desired: 0, ordering: .acquiringAndReleasing).exchanged {
                return
            }
        }
    }

    /// Reverses the list (newest first) and consumes it oldest first, releasing each node here.
    private func consumeList(newest: UInt) {
        var oldestFirst: UInt = 0
        var next = newest
        while next != 0 {
            let node = Self.node(next).takeUnretainedValue()
            let older = node.older
            node.older = oldestFirst
            oldestFirst = next
            next = older
        }
        next = oldestFirst
        while next != 0 {
            let node = Self.node(next).takeRetainedValue()
            next = node.older
            // Moved into `consume`: a copy would leave a second reference to what the item holds.
            if let item = node.item.take() { consume(consume item) }
        }
    }

    private static func node(_ bits: UInt) -> Unmanaged<Node> {
        Unmanaged<Node>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!)
    }

    deinit {
        // A drain holds the mailbox while it runs, so only items never scheduled (none) could be
        // left; release them all the same.
        let left = state.load(ordering: .acquiring)
        if left > Self.drainingEmpty {
            var next = left
            while next != 0 {
                let node = Self.node(next).takeRetainedValue()
                next = node.older
            }
        }
    }
}
