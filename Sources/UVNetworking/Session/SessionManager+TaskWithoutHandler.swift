import Foundation

/// The task-making calls without a completion handler: the handler parameter of the full forms
/// has no default, so that `manager.dataTask(with: request) { response, object, error in … }`
/// binds its trailing closure to the completion handler rather than to the first progress
/// closure. These forms keep `dataTask(with:)` and labelled progress-only calls compiling.
extension SessionManager {
    /// Creates a suspended data task without a completion handler (the async API, or a caller
    /// that only follows progress or the task's state); call `resume()` to start it.
    public func dataTask(with request: Request,
                         uploadProgress: (@Sendable (Progress) -> Void)? = nil,
                         downloadProgress: (@Sendable (Progress) -> Void)? = nil) -> DataTask {
        dataTask(with: request, uploadProgress: uploadProgress, downloadProgress: downloadProgress, completionHandler: nil)
    }

    /// `uploadTask(with:fromFile:progress:completionHandler:)` without a completion handler.
    public func uploadTask(with request: Request, fromFile fileURL: URL,
                           progress: (@Sendable (Progress) -> Void)? = nil) -> UploadTask {
        uploadTask(with: request, fromFile: fileURL, progress: progress, completionHandler: nil)
    }

    /// `uploadTask(with:from:progress:completionHandler:)` without a completion handler.
    public func uploadTask(with request: Request, from bodyData: Data,
                           progress: (@Sendable (Progress) -> Void)? = nil) -> UploadTask {
        uploadTask(with: request, from: bodyData, progress: progress, completionHandler: nil)
    }

    /// `uploadTask(withStreamedRequest:progress:completionHandler:)` without a completion handler.
    public func uploadTask(withStreamedRequest request: Request,
                           progress: (@Sendable (Progress) -> Void)? = nil) -> UploadTask {
        uploadTask(withStreamedRequest: request, progress: progress, completionHandler: nil)
    }

    /// `downloadTask(with:progress:destination:completionHandler:)` without a completion handler.
    public func downloadTask(with request: Request, progress: (@Sendable (Progress) -> Void)? = nil,
                             destination: DownloadTask.Destination? = nil) -> DownloadTask {
        downloadTask(with: request, progress: progress, destination: destination, completionHandler: nil)
    }

    /// `downloadTask(withResumeData:progress:destination:completionHandler:)` without a completion
    /// handler.
    public func downloadTask(withResumeData resumeData: Data, progress: (@Sendable (Progress) -> Void)? = nil,
                             destination: DownloadTask.Destination? = nil) throws(NetworkingError) -> DownloadTask {
        try downloadTask(withResumeData: resumeData, progress: progress, destination: destination, completionHandler: nil)
    }
}
