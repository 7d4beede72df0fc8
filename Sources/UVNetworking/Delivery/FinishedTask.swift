import Foundation
import HTTPTypes
import UVHTTP1

extension SessionEngine {
    /// A task whose exchange is over, on its way to the serializer and the completion handler.
    ///
    /// A batch's entries are made on the loop and destroyed where their handlers ran (a copy
    /// and a destroy each, per hop), so what a plain success does not have is boxed (`Rare`): its
    /// entry is three references and its body. A plain success's response is built where it is
    /// delivered and never stored here (`CompletionDelivery.runOne`).
    struct FinishedTask: @unchecked Sendable {
        // @unchecked: the body is handed over and never touched again on the loop.
        /// The task; nil only once the entry was `release()`d, after which nothing reads it.
        private var taskStorage: SessionTask?
        var task: SessionTask { taskStorage.unsafelyUnwrapped }
        /// The task without a retain, for a caller that holds the entry meanwhile.
        var unretainedTask: Unmanaged<SessionTask> { Unmanaged.passUnretained(taskStorage.unsafelyUnwrapped) }
        var head: ResponseHead?
        var body: Data
        /// The failure, the hook state, a download's finish, the response once stored; nil for a
        /// plain success.
        private var rare: Rare?

        init(task: SessionTask, head: ResponseHead?, body: Data, error: NetworkingError?, hooks: TaskHookState? = nil,
             download: DownloadFinish? = nil) {
            self.taskStorage = task
            self.head = head
            self.body = body
            if error != nil || hooks != nil || download != nil { rare = Rare(error: error, hooks: hooks, download: download) }
        }

        /// A plain success's entry: no failure, no hooks, no download (nothing boxed).
        init(task: SessionTask, head: ResponseHead?, body: consuming Data) {
            self.taskStorage = task
            self.head = head
            self.body = body
        }

        /// Drops what the entry holds, once its delivery is done with it: the task (often its
        /// last reference), its head, its body and its box go now, not with the whole batch.
        mutating func release() {
            taskStorage = nil
            head = nil
            body = Data()
            rare = nil
        }

        /// No failure, hook state, download or stored response: a plain success. Asked before
        /// `error`, whose nil is a dozen words to make and test.
        var isPlain: Bool { rare == nil }
        var error: NetworkingError? { rare?.error }
        /// Set when the manager had hooks while the task ran (or for an awaiting caller's metrics).
        var hooks: TaskHookState? { rare?.hooks }
        /// A download task's file and resume data.
        var download: DownloadFinish? { rare?.download }
        /// The head as an `HTTPResponse` (`resolveResponse()`), stored for the deliveries that
        /// read it later (hooks, downloads, awaiting callers).
        var response: HTTPResponse? {
            get { rare?.response }
            set { uniqueRare().response = newValue }
        }
        /// A download's outcome, made before the hooked delivery (the move happened already).
        var delivered: CompletionDelivery.Outcome? {
            get { rare?.delivered }
            set { uniqueRare().delivered = newValue }
        }

        /// The box, made or copied so that changing it changes no other entry's.
        private mutating func uniqueRare() -> Rare {
            if rare == nil {
                rare = Rare(error: nil, hooks: nil, download: nil)
            } else if !isKnownUniquelyReferenced(&rare!) {
                rare = rare!.copy()
            }
            return rare!
        }

        /// Changed only through `uniqueRare()`: copies of an entry may share it until one changes.
        private final class Rare: @unchecked Sendable {
            // @unchecked: handed over with its entry, changed only while uniquely referenced.
            let error: NetworkingError?
            let hooks: TaskHookState?
            let download: DownloadFinish?
            var response: HTTPResponse?
            var delivered: CompletionDelivery.Outcome?

            init(error: NetworkingError?, hooks: TaskHookState?, download: DownloadFinish?) {
                self.error = error
                self.hooks = hooks
                self.download = download
            }

            func copy() -> Rare {
                let copy = Rare(error: error, hooks: hooks, download: download)
                copy.response = response
                copy.delivered = delivered
                return copy
            }
        }
    }
}

extension SessionEngine.FinishedTask {
    /// The finished task's head as its `HTTPResponse`, once its cookies are stored: once per
    /// task, off the loop, before any serializer, hook or completion handler sees it.
    /// `CompletionDelivery.run` calls it for every task of a batch, whichever way the task is
    /// then delivered, and stores it in the entry only for the deliveries that read it later.
    ///
    /// A failed task's response (when its head had arrived) was already built into its error;
    /// its cookies are stored too, as a browser keeps the cookies of a response whose body
    /// broke off.
    ///
    /// The task does not cache the response (`SessionTask.response` builds it from the head it
    /// keeps, once, if anyone asks): a lock and a copy per task saved for the callers that never
    /// ask, and a head with a template hands out its shared response without building anything.
    func resolveResponse() -> HTTPResponse? {
        let response: HTTPResponse?
        if !isPlain, let error {
            // A failure's error carries the response of the head it had (or none yet).
            response = error.response
        } else {
            response = head?.httpResponse
        }
        // A streamed task (`bytes(for:)`) stored its cookies when its head was handed out.
        // The store first: without one (the default) nothing else is read.
        guard task.cookieStore != nil, task.bodyStream == nil, let response else { return response }
        // Most responses set no cookie; the raw head says so without a look at the response's
        // fields, which costs allocations.
        if let head, !head.headers.contains(lowercaseName: "set-cookie") { return response }
        task.storeCookies(from: response)
        return response
    }
}

extension SessionTask {
    /// Stores the cookies of a response to this task's current request, when the session has
    /// a cookie store and the request handles cookies. The one place a session stores cookies:
    /// a redirect calls it for the response it follows, before `currentRequest` moves on.
    func storeCookies(from response: HTTPResponse) {
        cookieStore?.storeCookies(from: response, for: currentRequest.url)
    }

    /// The session's cookie store, if it has one and the current request handles cookies.
    var cookieStore: CookieStore? {
        // The store first: without one (the default) the request, behind a lock, is not read.
        guard let store = manager.cookieStore else { return nil }
        return currentRequest.httpShouldHandleCookies ? store : nil
    }
}

extension SessionEngine.FinishedTask {
    /// Whether delivering the task may store cookies (`resolveResponse`): its head carries
    /// Set-Cookie, or it failed after a head the error keeps. Read on the loop, from the raw head,
    /// to choose where the batch is delivered; the cookie store is asked later, off the loop.
    var mayStoreCookies: Bool {
        guard let head else { return error?.response != nil }
        return head.headers.contains(lowercaseName: "set-cookie")
    }
}
