import Foundation

/// Upload tasks, AFNetworking's `uploadTaskWithRequest:fromFile:` / `fromData:` /
/// `uploadTaskWithStreamedRequest:`. Each returns a suspended `UploadTask`; `progress` follows
/// the body as it is written (total: its length, or -1 for a stream of unknown length), and
/// `completionHandler` gets the serialized response exactly once, as for a data task.
///
/// A request with `Expect: 100-continue` sends its head alone and holds the body back until the
/// server answers `100 Continue` (or one second passes without an answer); a final response
/// instead (a 417, a 401) completes the task with that response and no body byte is sent.
extension SessionManager {
    /// Uploads the file at `fileURL` as the body of `request` (whose own body is replaced), read
    /// on the worker pool a chunk at a time, so a file of any size is sent in bounded memory,
    /// with its size as Content-Length.
    ///
    /// The file is checked here (see `StreamedBody(contentsOf:)`): a missing, unreadable or
    /// non-regular file gives a task that, once resumed, fails with `fileDoesNotExist`,
    /// `fileIsDirectory`, `noPermissionsToReadFile` or `cannotOpenFile` without connecting.
    public func uploadTask(with request: Request, fromFile fileURL: URL,
                           progress: (@Sendable (Progress) -> Void)? = nil,
                           completionHandler: SessionTask.CompletionHandler?) -> UploadTask {
        var request = request
        do {
            request.bodyStream = try StreamedBody(contentsOf: fileURL)
            return makeUploadTask(request, progress: progress, completionHandler: completionHandler, failure: nil)
        } catch {
            request.body = nil
            return makeUploadTask(request, progress: progress, completionHandler: completionHandler, failure: error)
        }
    }

    /// Uploads `bodyData` as the body of `request` (whose own body is replaced), with a
    /// Content-Length.
    public func uploadTask(with request: Request, from bodyData: Data,
                           progress: (@Sendable (Progress) -> Void)? = nil,
                           completionHandler: SessionTask.CompletionHandler?) -> UploadTask {
        var request = request
        request.body = bodyData
        return makeUploadTask(request, progress: progress, completionHandler: completionHandler, failure: nil)
    }

    /// Uploads `request.bodyStream` (see `StreamedBody`): with a length it is sent with that
    /// Content-Length and must produce exactly that many bytes (`bodyStreamFailed` otherwise, and
    /// no byte beyond the length is sent); without one it is sent chunked.
    public func uploadTask(withStreamedRequest request: Request,
                           progress: (@Sendable (Progress) -> Void)? = nil,
                           completionHandler: SessionTask.CompletionHandler?) -> UploadTask {
        makeUploadTask(request, progress: progress, completionHandler: completionHandler, failure: nil)
    }

    /// The upload tasks among `tasks`.
    public var uploadTasks: [UploadTask] { tasks.compactMap { $0 as? UploadTask } }

    private func makeUploadTask(_ request: Request, progress: (@Sendable (Progress) -> Void)?,
                                completionHandler: SessionTask.CompletionHandler?, failure: NetworkingError?) -> UploadTask {
        registerTask { identifier in
            UploadTask(identifier: identifier, request: request, manager: self, uploadProgress: progress, downloadProgress: nil,
                       completionHandler: completionHandler, preparationFailure: failure)
        }
    }
}
