import Foundation
import HTTPTypes

/// Download tasks, AFNetworking's `downloadTaskWithRequest:progress:destination:completionHandler:`
/// and `downloadTaskWithResumeData:…`.
///
/// The body goes to a new file in FileManager's temporary directory as it arrives: the loop
/// hands each chunk to a worker-side writer and stops reading the connection while more than
/// 1 MiB waits for the disk, so a body of any size takes bounded memory. Once the body is
/// complete, on a worker: with a `destination`, the file is moved where it says (an existing
/// file there is not replaced: the move fails, as in AFNetworking); without one, the completion
/// handler gets the temporary file, which is removed once the handler returns (move or open it
/// there, as with URLSession).
///
/// What stays in the temporary directory: nothing once a task has ended, but the partial file
/// of resume data (see `DownloadTask.cancel(byProducingResumeData:)`). A failed or cancelled
/// download's file is removed as the task ends, before its completion handler runs; a body
/// being written has no name in the directory until it is complete (Linux's O_TMPFILE, where
/// the file system has it), so a process that dies mid-download leaves nothing either.
///
/// A failed move posts `networkingDownloadTaskDidFailToMoveFile` (with `postsTaskNotifications`)
/// and completes the task with `cannotMoveFile`, the response, and no URL; the temporary file is
/// removed first. The response
/// serializer is not run: a 404's page is downloaded like any body, so check
/// `response.status`. Progress runs from the bytes received to Content-Length (for a resumed
/// download, over the whole file).
extension SessionManager {
    /// Creates a suspended download task for `request`; call `resume()` to start it.
    public func downloadTask(with request: Request, progress: (@Sendable (Progress) -> Void)? = nil,
                             destination: DownloadTask.Destination? = nil,
                             completionHandler: DownloadTask.DownloadCompletionHandler?) -> DownloadTask {
        let plan = DownloadTask.Plan(temporaryFile: DownloadTemporaryFile.makeURL(in: configuration.downloadDirectory), resumeOffset: nil, resumedFrom: nil)
        return makeDownloadTask(request, plan: plan, progress: progress, destination: destination, completionHandler: completionHandler)
    }

    /// Creates a suspended task that continues the download `resumeData` describes (from
    /// `DownloadTask.cancel(byProducingResumeData:)`): it asks for the bytes after the partial
    /// file (`Range: bytes=N-`, N its size now) on condition that the resource is unchanged
    /// (`If-Range` with the ETag or Last-Modified date), and appends them to that file.
    ///
    /// The server decides how it ends (see `DownloadResumption`): a 206 is appended; a 200
    /// means the resource changed or ranges are not served, and the file is written again from
    /// its first byte; a 416 whose `Content-Range: bytes */N` equals the file's size means the
    /// file is already complete (the task succeeds with the 416 response and the file as it
    /// is); any other 416 drops the partial file's claim and fetches the whole body once more.
    ///
    /// The task takes the partial file over: it is the task's file from then on, delivered or
    /// moved when the body is complete, removed when the task fails or is cancelled (unless that
    /// cancel produces resume data again, which then names the same file). Resume data is good
    /// for one task: a second task from the same data finds the file gone or changed.
    ///
    /// Throws `invalidResumeData` when the data is not resume data of this library or its
    /// partial file is gone; this is checked here, on the calling thread.
    public func downloadTask(withResumeData resumeData: Data, progress: (@Sendable (Progress) -> Void)? = nil,
                             destination: DownloadTask.Destination? = nil,
                             completionHandler: DownloadTask.DownloadCompletionHandler?) throws(NetworkingError) -> DownloadTask {
        let resume = try DownloadResumeData.decode(resumeData, directory: configuration.downloadDirectory)
        guard let status = POSIXFile.status(atPath: resume.temporaryFilePath), status.isRegularFile else {
            throw NetworkingError(.invalidResumeData, "the partial download \(resume.temporaryFilePath) of the resume data is gone")
        }
        // The file's size now, not the count in the data: they differ only if something else
        // wrote to it, and the file is what the rest must continue.
        let offset = status.size
        let plan = DownloadTask.Plan(temporaryFile: URL(fileURLWithPath: resume.temporaryFilePath), resumeOffset: offset,
                                     resumedFrom: resume)
        return makeDownloadTask(resume.request(resumingAt: offset), plan: plan, progress: progress, destination: destination,
                                completionHandler: completionHandler)
    }

    /// Removes the partial file that `resumeData` keeps, for resume data that will not be
    /// resumed (nothing else removes it). Runs on the calling thread; a file already gone is not
    /// an error.
    ///
    /// Throws `invalidResumeData`, and removes nothing, when the data is not resume data of this
    /// library: only a file this library made in the temporary directory is ever removed.
    public func discardResumeData(_ resumeData: Data) throws(NetworkingError) {
        let resume = try DownloadResumeData.decode(resumeData, directory: configuration.downloadDirectory)
        POSIXFile.remove(resume.temporaryFilePath)
    }

    /// The download tasks among `tasks`.
    public var downloadTasks: [DownloadTask] { tasks.compactMap { $0 as? DownloadTask } }

    /// Downloads `request`'s body to a file and returns the file and the response, as
    /// URLSession's `download(for:)`. The file is in the temporary directory and is yours:
    /// move or remove it. Errors and cancellation are those of `data(for:)`; the status is not
    /// validated.
    public func download(for request: Request) async throws -> (URL, HTTPResponse) {
        let outcome = AsyncTaskOutcome<(URL, HTTPResponse)>()
        let task = downloadTask(with: request)
        task.asyncOutcome = outcome
        return try await withTaskCancellationHandler {
            // Already cancelled: the handler ran first and cancelled the task; resume is a no-op.
            task.resume()
            return try await outcome.value()
        } onCancel: {
            task.cancel()
        }
    }

    private func makeDownloadTask(_ request: Request, plan: DownloadTask.Plan, progress: (@Sendable (Progress) -> Void)?,
                                  destination: DownloadTask.Destination?,
                                  completionHandler: DownloadTask.DownloadCompletionHandler?) -> DownloadTask {
        registerTask { identifier in
            DownloadTask(identifier: identifier, request: request, manager: self, plan: plan, progress: progress,
                         destination: destination, completionHandler: completionHandler)
        }
    }
}
