import Dispatch
import Foundation
import HTTPTypes
import Synchronization

/// What a data task does with a response head, like URLSession.ResponseDisposition.
public enum ResponseDisposition: Sendable {
    /// Go on receiving the body.
    case allow
    /// Stop: the task completes with `NetworkingError.Code.cancelled` and its connection closes
    /// (unless the whole response had already arrived, in which case the connection is reused).
    case cancel
}

/// A manager's optional closures and its notification switch. Written by callers under a mutex;
/// read by the loop through `active`, one atomic load, so a session with nothing set pays no lock.
final class SessionHooks: Sendable {
    struct Kind: OptionSet, Sendable {
        let rawValue: UInt8
        static let notifications = Kind(rawValue: 1 << 0)
        static let didComplete = Kind(rawValue: 1 << 1)
        static let receiveResponse = Kind(rawValue: 1 << 2)
        static let receiveData = Kind(rawValue: 1 << 3)
        static let sendBodyData = Kind(rawValue: 1 << 4)
        static let metrics = Kind(rawValue: 1 << 5)
    }

    /// Every closure and the switch; a copy is a consistent snapshot.
    struct Storage: Sendable {
        var postsNotifications = false
        var taskDidComplete: (@Sendable (SessionTask, (any Error)?) -> Void)?
        var dataTaskDidReceiveResponse: (@Sendable (DataTask, HTTPResponse) -> ResponseDisposition)?
        var dataTaskDidReceiveData: (@Sendable (DataTask, Data) -> Void)?
        var taskDidSendBodyData: (@Sendable (SessionTask, Int64, Int64, Int64) -> Void)?
        var taskDidFinishCollectingMetrics: (@Sendable (SessionTask, TaskMetrics) -> Void)?
        var taskWillPerformHTTPRedirection: (@Sendable (SessionTask, HTTPResponse, Request) -> Request?)?
        var authenticationChallengeHandler: (@Sendable (SessionTask, AuthenticationChallenge) -> AuthenticationChallengeDisposition)?
        var dataTaskWillCacheResponse: (@Sendable (DataTask, CachedResponse) -> CachedResponse?)?

        /// The kinds the loop acts on (the redirect and challenge hooks are only stored for now).
        var active: Kind {
            var kinds: Kind = []
            if postsNotifications { kinds.insert(.notifications) }
            if taskDidComplete != nil { kinds.insert(.didComplete) }
            if dataTaskDidReceiveResponse != nil { kinds.insert(.receiveResponse) }
            if dataTaskDidReceiveData != nil { kinds.insert(.receiveData) }
            if taskDidSendBodyData != nil { kinds.insert(.sendBodyData) }
            if taskDidFinishCollectingMetrics != nil { kinds.insert(.metrics) }
            return kinds
        }
    }

    private let storage = Mutex(Storage())
    private let activeKinds = Atomic<UInt8>(0)

    /// Whether any of `kinds` is set. One relaxed load: the closure itself is read under the
    /// lock, which orders it, and a closure unset in between reads as nil.
    @inline(__always)
    func contains(_ kinds: Kind) -> Bool { activeKinds.load(ordering: .relaxed) & kinds.rawValue != 0 }

    /// Whether anything at all is set.
    @inline(__always)
    var isActive: Bool { activeKinds.load(ordering: .relaxed) != 0 }

    func read<T>(_ body: (Storage) -> T) -> T { storage.withLock { body($0) } }

    func update(_ body: (inout Storage) -> Void) {
        storage.withLock { storage in
            body(&storage)
            activeKinds.store(storage.active.rawValue, ordering: .relaxed)
        }
    }

    /// A snapshot when anything is set, else nil without taking the lock.
    func activeSnapshot() -> Storage? {
        guard isActive else { return nil }
        return storage.withLock { $0.active.isEmpty ? nil : $0 }
    }
}

// MARK: - The manager's hooks (AFURLSessionManager's blocks)

extension SessionManager {
    /// Posts `networkingTaskDidResume`, `networkingTaskDidSuspend` and `networkingTaskDidComplete`
    /// on the main queue (AFNetworking always does). Off by default: each notification costs a
    /// main-queue dispatch.
    public var postsTaskNotifications: Bool {
        get { hooks.read { $0.postsNotifications } }
        set { hooks.update { $0.postsNotifications = newValue } }
    }

    /// Called when a task ends, with the transport error (nil if a response arrived, whatever the
    /// serializer later makes of it), on the completion queue just before the completion handler
    /// (AFNetworking's setTaskDidCompleteBlock).
    public var taskDidComplete: (@Sendable (SessionTask, (any Error)?) -> Void)? {
        get { hooks.read { $0.taskDidComplete } }
        set { hooks.update { $0.taskDidComplete = newValue } }
    }

    /// Called with each response head before the body is read, on the completion queue
    /// (AFNetworking's setDataTaskDidReceiveResponseBlock). The task waits for the answer, its
    /// connection not read meanwhile; `.cancel` completes it with `.cancelled`. Timeouts keep
    /// running while the closure decides.
    public var dataTaskDidReceiveResponse: (@Sendable (DataTask, HTTPResponse) -> ResponseDisposition)? {
        get { hooks.read { $0.dataTaskDidReceiveResponse } }
        set { hooks.update { $0.dataTaskDidReceiveResponse = newValue } }
    }

    /// Called with each chunk of a data task's body as it arrives, in order, on the completion
    /// queue, before the completion handler (AFNetworking's setDataTaskDidReceiveDataBlock). The
    /// completion handler still receives the whole body. Chunks are queued, not dropped, if the
    /// closure is slower than the network: a slow closure holds up to the whole body in memory
    /// twice.
    public var dataTaskDidReceiveData: (@Sendable (DataTask, Data) -> Void)? {
        get { hooks.read { $0.dataTaskDidReceiveData } }
        set { hooks.update { $0.dataTaskDidReceiveData = newValue } }
    }

    /// Called as the request body is sent, with the bytes sent since the last call, the total so
    /// far and the body's length, in order, on the completion queue (AFNetworking's
    /// setTaskDidSendBodyDataBlock). A body sent in one write reports once.
    public var taskDidSendBodyData: (@Sendable (SessionTask, Int64, Int64, Int64) -> Void)? {
        get { hooks.read { $0.taskDidSendBodyData } }
        set { hooks.update { $0.taskDidSendBodyData = newValue } }
    }

    /// Called once per task with its `TaskMetrics`, on the completion queue before
    /// `taskDidComplete` (AFNetworking's setTaskDidFinishCollectingMetricsBlock). Only tasks
    /// started while some hook or notifications were on are measured.
    public var taskDidFinishCollectingMetrics: (@Sendable (SessionTask, TaskMetrics) -> Void)? {
        get { hooks.read { $0.taskDidFinishCollectingMetrics } }
        set { hooks.update { $0.taskDidFinishCollectingMetrics = newValue } }
    }

    /// Asked before a data task's response is stored in the session's cache
    /// (`SessionConfiguration.cache`), with the response as it would be kept: return it, a
    /// changed one (its fields, its body), or nil to keep nothing (AFNetworking's
    /// setDataTaskWillCacheResponseBlock). Called on a worker thread, after the task's
    /// completion was queued, once per response the cache would store; a 304 that refreshes a
    /// stored response asks it too. Not asked for download tasks and streams.
    public var dataTaskWillCacheResponse: (@Sendable (DataTask, CachedResponse) -> CachedResponse?)? {
        get { hooks.read { $0.dataTaskWillCacheResponse } }
        set { hooks.update { $0.dataTaskWillCacheResponse = newValue } }
    }
    /// Asked before a redirect is followed, with the redirect response and the request the session
    /// would send; return it, a changed one, or nil to stop and complete with the redirect response
    /// (AFNetworking's setTaskWillPerformHTTPRedirectionBlock). Called on a worker thread, once per
    /// redirect the session would follow, as soon as the redirect's head arrives: reading its body
    /// waits for the answer. Stopped, the redirect's body is the task's body; followed, it is
    /// dropped unread or as it arrives.
    public var taskWillPerformHTTPRedirection: (@Sendable (SessionTask, HTTPResponse, Request) -> Request?)? {
        get { hooks.read { $0.taskWillPerformHTTPRedirection } }
        set { hooks.update { $0.taskWillPerformHTTPRedirection = newValue } }
    }

    /// Answers a task's authentication challenges (AFNetworking's authenticationChallengeHandler):
    /// a credential, a disposition, or an error that becomes the task's error. Asked for every TLS
    /// server-trust challenge (`protectionSpace.serverTrust`), on a worker thread, before the
    /// security policy; `.performDefaultHandling` lets the policy decide.
    public var authenticationChallengeHandler: (@Sendable (SessionTask, AuthenticationChallenge) -> AuthenticationChallengeDisposition)? {
        get { hooks.read { $0.authenticationChallengeHandler } }
        set { hooks.update { $0.authenticationChallengeHandler = newValue } }
    }
}
