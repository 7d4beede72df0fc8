import Foundation

extension SessionTask {
    /// A task's rarely set fields, boxed (`SessionTask.extras`): a preparation failure, progress
    /// handlers, the async API's seams. Most tasks have none of them and make no box.
    ///
    /// @unchecked: the progress handlers and the failure are set when the box is made; the seams
    /// follow the rule of `outcomeReceiver` (set once before the task starts, read afterwards).
    final class Extras: @unchecked Sendable {
        /// Why the task cannot be sent (an upload's unreadable file, a request that does not encode).
        let preparationFailure: NetworkingError?
        let uploadProgressHandler: (@Sendable (Progress) -> Void)?
        let downloadProgressHandler: (@Sendable (Progress) -> Void)?
        var outcomeReceiver: (any TaskOutcomeReceiver)?
        var bodyStream: BodyStreamBuffer?

        init(preparationFailure: NetworkingError? = nil, uploadProgressHandler: (@Sendable (Progress) -> Void)? = nil,
             downloadProgressHandler: (@Sendable (Progress) -> Void)? = nil) {
            self.preparationFailure = preparationFailure
            self.uploadProgressHandler = uploadProgressHandler
            self.downloadProgressHandler = downloadProgressHandler
        }
    }

    /// Whether the task is a DownloadTask: a comparison of class metadata (DownloadTask is
    /// final), not a dynamic cast, which walks the class chain to find that most tasks are not.
    var isDownload: Bool { type(of: self) == DownloadTask.self }

    /// The task's extras, made on first use (by a seam's setter, before the task starts).
    func madeExtras() -> Extras {
        if let extras { return extras }
        let made = Extras()
        extras = made
        return made
    }
}
