import Foundation

extension SessionTask {
    /// A task's rarely set fields, boxed (`SessionTask.extras`): a preparation failure and the
    /// progress handlers. Most tasks have none of them and make no box. (A trace is the task's
    /// own field: every task of a traced session has one, and a box for it alone would be one
    /// more allocation per task.)
    final class Extras: Sendable {
        /// Why the task cannot be sent (an upload's unreadable file, a request that does not encode).
        let preparationFailure: NetworkingError?
        let uploadProgressHandler: (@Sendable (Progress) -> Void)?
        let downloadProgressHandler: (@Sendable (Progress) -> Void)?

        init(preparationFailure: NetworkingError?, uploadProgressHandler: (@Sendable (Progress) -> Void)?,
             downloadProgressHandler: (@Sendable (Progress) -> Void)?) {
            self.preparationFailure = preparationFailure
            self.uploadProgressHandler = uploadProgressHandler
            self.downloadProgressHandler = downloadProgressHandler
        }
    }

    /// Whether the task is a DownloadTask: a comparison of class metadata (DownloadTask is
    /// final), not a dynamic cast, which walks the class chain to find that most tasks are not.
    var isDownload: Bool { type(of: self) == DownloadTask.self }
}
