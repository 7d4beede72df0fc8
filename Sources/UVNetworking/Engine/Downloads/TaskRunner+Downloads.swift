import Foundation
import UVHTTP1

/// The loop-side state of a download task: its file writer and what the current response
/// decided. Loop-confined, owned by the task's runner.
final class DownloadRun {
    let task: DownloadTask
    let writer: DownloadFileWriter
    /// The byte the current request's Range starts at; nil once the request asks for the whole
    /// body.
    var resumeOffset: Int64?
    /// What resume data would carry: the validators of the response being written (or of the
    /// resume data the task continues, until a response replaces them). Nil when the response
    /// cannot be resumed.
    var resumeBasis: DownloadResumeData?
    /// The response's body is not the file's (a 416 whose file is already complete).
    var discardsBody = false
    /// The writer was told to close; the task ends when it has.
    var closing = false
    /// What the file came to, for the delivery; set when the writer has closed.
    var finished: DownloadFinish?

    init(task: DownloadTask, loop: EventLoop) {
        self.task = task
        resumeOffset = task.plan.resumeOffset
        resumeBasis = task.plan.resumedFrom
        // The writer reaches the runner through the task (`loopRunner`), which is nil once the
        // task has ended: a late notice finds nobody, harmlessly.
        writer = DownloadFileWriter(
            path: task.plan.temporaryFile.path, workers: task.manager.workers,
            onDrained: { _ = loop.execute { task.loopRunner?.consumerDrained() } },
            onFailed: { error in _ = loop.execute { task.loopRunner?.downloadWriteFailed(error) } })
    }
}

/// What a finished download leaves for its delivery (CompletionDelivery+Downloads.swift).
struct DownloadFinish: Sendable {
    /// The complete body's file (the temporary one); nil when the task failed.
    var fileURL: URL?
    /// Produced for `cancel(byProducingResumeData:)`; the partial file is kept for it.
    var resumeData: Data?
}

/// A download's file is its task's response sink: the head decides how the file is opened (from
/// the start, appended, left as it is) or whether the request goes again without Range; body
/// chunks go to the writer, with backpressure; the end waits for the file to be closed.
extension DownloadRun: ResponseSink {
    /// A final response head for a download (not a redirect being followed).
    func receivedHead(_ head: ResponseHead, bodyLength: Int64?, runner: TaskRunner) -> ResponseSinkHeadDecision {
        let plan = DownloadResumption.plan(status: head.status, contentRange: head.headers.firstValue(named: "content-range"),
                                           requestedOffset: resumeOffset,
                                           coding: head.hasContentEncoding ? head.headers.firstValue(named: "content-encoding") : nil,
                                           fileCoding: resumeBasis?.contentEncoding)
        switch plan {
        case .writeFromStart:
            writer.start(.fromBeginning)
            captureResumeBasis(head, request: runner.currentRequest, decoded: runner.contentDecoder != nil)
            return .accept(expectedLength: bodyLength)
        case .append(let offset, let total):
            writer.start(.appending(at: offset))
            captureResumeBasis(head, request: runner.currentRequest, decoded: runner.contentDecoder != nil)
            task.recordResumedBytes(offset)
            return .accept(expectedLength: total ?? bodyLength.map { offset + $0 })
        case .alreadyComplete(let length):
            writer.start(.keepingFile)
            discardsBody = true
            task.recordResumedBytes(length)
            return .accept(expectedLength: length)
        case .restartWithoutRange:
            return .restart
        case .fail(let why):
            return .fail(NetworkingError(.malformedResponse, why))
        }
    }

    /// Keeps the validators of a response that can be resumed, or forgets them: resuming needs
    /// a 200 or 206 with a strong ETag or a Last-Modified date, ranges not refused, and bytes
    /// in the file that are the bytes on the wire (no Content-Encoding decoded).
    private func captureResumeBasis(_ head: ResponseHead, request: Request, decoded: Bool) {
        let acceptRanges = head.headers.firstValue(named: "accept-ranges")
        guard !decoded, head.status == 200 || head.status == 206,
              acceptRanges?.trimmingCharacters(in: .whitespaces).caseInsensitiveCompare("none") != .orderedSame else {
            resumeBasis = nil
            return
        }
        let basis = DownloadResumeData(request: request, entityTag: head.headers.firstValue(named: "etag"),
                                       lastModified: head.headers.firstValue(named: "last-modified"),
                                       contentEncoding: head.hasContentEncoding ? head.headers.firstValue(named: "content-encoding") : nil,
                                       temporaryFilePath: writer.path)
        // A 206 without validators continues the ones its request was made with.
        if basis != nil || head.status != 206 { resumeBasis = basis }
    }

    /// Body bytes (decoded): to the writer, which says when it is behind.
    func receive(_ bytes: UnsafeRawBufferPointer, task: SessionTask) -> ResponseSinkReceipt {
        guard !discardsBody else { return .dropped }
        guard !bytes.isEmpty else { return .taken }
        return writer.push(Array(bytes)) ? .behind : .taken
    }

    var isBehind: Bool { writer.wantsPause }
    func exchangeRestarted(task: SessionTask) {}
    /// The head opened the file; resume data, not a retry, continues a download cut short.
    var restartsAfterHead: Bool { false }
    func takeBody() -> Data { Data() }

    /// The task ends once the file is closed, on a worker.
    func taskEnded(_ error: NetworkingError?, runner: TaskRunner) -> Bool {
        runner.closeDownload(self, error: error)
        return false
    }
}

/// The runner's side of download tasks: a write that failed, the restart without Range, and
/// the end, which waits for the file to be closed.
extension TaskRunner {
    /// Writing the file failed (a full disk): the task fails; the connection, mid-body, closes.
    func downloadWriteFailed(_ error: NetworkingError) {
        guard case .fail = machine.exchangeFailed(error.code, onReusedConnection: false, responseStarted: true) else { return }
        fail(error)
    }

    /// A 416 that did not match the partial file ended: the request goes again without Range
    /// (encoded on a worker, like a redirect's), so the whole body comes.
    func planDownloadRestart(_ download: DownloadRun) {
        download.resumeOffset = nil
        var whole = currentRequest
        whole.setValue(nil, forHTTPHeaderField: "Range")
        whole.setValue(nil, forHTTPHeaderField: "If-Range")
        let request = whole
        let manager = task.manager
        let loop = self.loop
        let runner = LoopBound(self, loop: loop)
        manager.workers.run {
            let outcome: RedirectOutcome
            do throws(NetworkingError) {
                let prepared = try PreparedRequest(request, defaults: manager.defaultFields(for: request)) { (host) throws(NetworkingError) in
                    try manager.securityBinding(forHost: host)
                }
                outcome = .follow(request, prepared)
            } catch {
                outcome = .fail(error)
            }
            _ = loop.execute { runner.value.redirectPlanned(outcome, isRedirect: false) }
        }
    }

    /// The task ended (`error` nil: the body is complete). The writer finishes on a worker:
    /// the file is kept (complete, or partial for resume data) or removed; then, back on the
    /// loop, the task finishes.
    func closeDownload(_ download: DownloadRun, error: NetworkingError?) {
        guard !download.closing else { return }
        download.closing = true
        let basis = error?.code == .cancelled && download.task.wantsResumeData ? download.resumeBasis : nil
        let ending: DownloadFileWriter.Ending = error == nil ? .complete : basis != nil ? .keepPartial : .discard
        let path = download.writer.path
        let loop = self.loop
        let runner = LoopBound(self, loop: loop)
        let task = self.task
        download.writer.close(ending) { closed in
            var finished = DownloadFinish()
            var failure = error
            if error == nil {
                if let writeError = closed.error { failure = writeError } else { finished.fileURL = URL(fileURLWithPath: path) }
            } else if var basis {
                if closed.error == nil, let size = closed.size {
                    basis.bytesReceived = size
                    finished.resumeData = basis.encoded()
                } else {
                    POSIXFile.remove(path)
                }
            }
            let result = finished
            let finalError = failure
            guard !loop.execute({ runner.value.downloadClosed(result, error: finalError) }) else { return }
            // The loop shut down while the file closed: the task ends here, and no file is
            // handed over, so none is left behind.
            if let file = result.fileURL { POSIXFile.remove(file.path) }
            if result.resumeData != nil { POSIXFile.remove(path) }
            task.completeWithoutLoop(NetworkingError(.loopShutDown, loop.shutDownDetail))
        }
    }

    private func downloadClosed(_ finished: DownloadFinish, error: NetworkingError?) {
        download?.finished = finished
        var error = error
        if error != nil {
            error!.failingURL = error!.failingURL ?? currentRequest.url
            error!.response = error!.response ?? head?.httpResponse
        }
        engine.runnerFinished(self, error: error)
    }
}
