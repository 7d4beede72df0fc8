import Foundation
import Synchronization

/// Takes a manager's transitions to its observers: the status-change handler, then the
/// notification, then every `statusChanges` stream, each transition once and in order on
/// `statusChangeQueue` (nil: main). A `DrainMailbox` keeps the order even on a concurrent queue or
/// across a change of queue: one drain at a time delivers everything posted, oldest first.
///
/// It does not hold the manager: a transition waiting to be delivered does (it is the
/// notification's object), until it is delivered.
final class ReachabilityDelivery: Sendable {
    typealias Handler = @Sendable (NetworkReachabilityStatus) -> Void
    typealias Stream = AsyncStream<NetworkReachabilityStatus>.Continuation

    /// One thing to deliver.
    struct Item {
        /// The notification's object; nil for `finish`.
        var manager: NetworkReachabilityManager?
        /// The new status; nil to end `streams`.
        var status: NetworkReachabilityStatus?
        /// The streams open when the transition happened (or to end).
        var streams: [Stream]
    }

    /// What the user set; read at each delivery.
    final class Observers: Sendable {
        struct Settings {
            var queue: DispatchQueue?
            var handler: Handler?
        }

        let settings = Mutex(Settings())
    }

    let observers = Observers()
    private let mailbox: DrainMailbox<Item>

    init() {
        let observers = self.observers
        mailbox = DrainMailbox(schedule: { drain in
            (observers.settings.withLock { $0.queue } ?? .main).async(execute: drain)
        }, consume: { item in
            Self.deliver(item, to: observers)
        })
    }

    /// Queues a transition for the handler, the notification and `streams`.
    func post(_ status: NetworkReachabilityStatus, from manager: NetworkReachabilityManager, to streams: [Stream]) {
        mailbox.post(Item(manager: manager, status: status, streams: streams))
    }

    /// Queues the end of `streams`, after the transitions posted before.
    func finish(_ streams: [Stream]) {
        guard !streams.isEmpty else { return }
        mailbox.post(Item(manager: nil, status: nil, streams: streams))
    }

    private static func deliver(_ item: consuming Item, to observers: Observers) {
        guard let status = item.status else {
            for stream in item.streams { stream.finish() }
            return
        }
        if let handler = observers.settings.withLock({ $0.handler }) { handler(status) }
        if let manager = item.manager {
            NotificationCenter.default.post(name: .networkingReachabilityDidChange, object: manager,
                                            userInfo: [NetworkingReachabilityNotificationKey.status: status])
        }
        for stream in item.streams { stream.yield(status) }
    }
}
