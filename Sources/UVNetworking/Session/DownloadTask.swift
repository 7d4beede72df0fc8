import Foundation
import HTTPTypes
import Synchronization

/// A task whose response body is written to a file, like URLSessionDownloadTask (see
/// `SessionManager.downloadTask`). Its completion handler gets the file's URL instead of a
/// serialized object; the response serializer does not run.
public final class DownloadTask: SessionTask, @unchecked Sendable {
    // @unchecked: the resume-data handler lives in a Mutex; the rest is immutable, apart from
    // `asyncOutcome`, which is set once before the task is resumed (like `outcomeReceiver`).

    /// AFNetworking's download completion: the response, the file (the destination's URL, or
    /// the temporary file when there is no destination), and the error. Exactly once.
    public typealias DownloadCompletionHandler = @Sendable (HTTPResponse?, URL?, (any Error)?) -> Void

    /// AFNetworking's destination: given the temporary file and the response once the body is
    /// complete, returns where the file should go. Called on a worker thread.
    public typealias Destination = @Sendable (URL, HTTPResponse) -> URL

    /// Where the body is written while it arrives, and where a resumed one continues.
    struct Plan: Sendable {
        var temporaryFile: URL
        /// The byte the request's Range starts at (resume data), nil for a whole body.
        var resumeOffset: Int64?
        /// The resume data this task continues: its validators still hold if the task is
        /// cancelled again before a new response arrives.
        var resumedFrom: DownloadResumeData?
    }

    let plan: Plan
    let destination: Destination?
    private let resumeDataHandler = Mutex<(@Sendable (Data?) -> Void)?>(nil)
    /// `download(for:)`: receives the outcome on the worker instead of the completion queue.
    var asyncOutcome: AsyncTaskOutcome<(URL, HTTPResponse)>?

    init(identifier: Int, request: Request, manager: SessionManager, plan: Plan,
         progress: (@Sendable (Progress) -> Void)?, destination: Destination?,
         completionHandler: DownloadCompletionHandler?) {
        self.plan = plan
        self.destination = destination
        var adapted: SessionTask.CompletionHandler?
        if let completionHandler {
            adapted = { response, object, error in completionHandler(response, object as? URL, error) }
        }
        super.init(identifier: identifier, request: request, manager: manager, uploadProgress: nil, downloadProgress: progress,
                   completionHandler: adapted)
    }

    /// Cancels the download and hands `completionHandler` (on the completion queue, before the
    /// task's own completion, which gets `.cancelled`) the data to resume it with
    /// `downloadTask(withResumeData:)`, or nil.
    ///
    /// The partial file is kept only with resume data, which needs a response that can be
    /// resumed: a 200 or 206 with a strong ETag or a Last-Modified date, Ranges not refused
    /// (`Accept-Ranges: none`) and no Content-Encoding decoded. Otherwise, or when the task had
    /// already completed, the handler gets nil and the partial file is removed. Called again, a
    /// later handler gets nil at once.
    ///
    /// The kept file stays in the temporary directory (`UVNetworking-Download-….tmp`) until a
    /// task made with `downloadTask(withResumeData:)` is done with it (that task delivers,
    /// moves or removes it as any download's file), or until you call
    /// `SessionManager.discardResumeData(_:)`: resume data dropped without either leaves the
    /// file behind. Only this cancel keeps a file: a download that fails produces no resume data
    /// and leaves nothing.
    public func cancel(byProducingResumeData completionHandler: @escaping @Sendable (Data?) -> Void) {
        let installed = resumeDataHandler.withLock { handler -> Bool in
            guard handler == nil else { return false }
            handler = completionHandler
            return true
        }
        guard installed else {
            deliverResumeData(nil, to: completionHandler)
            return
        }
        // Installed before the cancel reaches the loop (the job queue orders them), so the
        // runner sees the wish when it ends the task.
        if !requestCancellation() && state == .completed, let handler = takeResumeDataHandler() {
            // Already over: nothing to resume. (While a plain cancel is still ending the task,
            // the delivery takes the handler instead, with whatever it has.)
            deliverResumeData(nil, to: handler)
        }
    }

    /// Whether a resume-data handler waits (read on the loop when the task ends).
    var wantsResumeData: Bool { resumeDataHandler.withLock { $0 != nil } }

    /// The handler, for whoever calls it: exactly one caller gets it.
    func takeResumeDataHandler() -> (@Sendable (Data?) -> Void)? {
        resumeDataHandler.withLock { handler in
            defer { handler = nil }
            return handler
        }
    }

    private func deliverResumeData(_ data: Data?, to handler: @escaping @Sendable (Data?) -> Void) {
        let (queue, group) = manager.deliveryQueue(on: manager.loop(for: self))
        queue.async(group: group) { handler(data) }
    }
}
