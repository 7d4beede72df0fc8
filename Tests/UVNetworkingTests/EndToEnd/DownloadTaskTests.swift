import Dispatch
import Foundation
import HTTPTypes
import Synchronization
import Testing
@testable import UVNetworking

/// What a download's completion handler received, and what the file held while it ran.
struct DownloadOutcome: @unchecked Sendable {
    // @unchecked: written once on the completion queue, read by the test after the semaphore.
    var response: HTTPResponse?
    var fileURL: URL?
    var error: (any Error)?
    /// The file's bytes during the handler (files up to 16 MiB), else nil.
    var contents: Data?
    /// The file's size during the handler.
    var size: Int64?
    var calls = 1

    var status: Int? { response?.status.code }
    var code: NetworkingError.Code? { (error as? NetworkingError)?.code }
}

/// Runs download tasks and keeps their outcomes.
final class DownloadProbe: Sendable {
    let outcome = Mutex<DownloadOutcome?>(nil)
    let done = DispatchSemaphore(value: 0)
    let lastFraction = Mutex(-1.0)
    let peakResidentGrowth = Mutex(0)
    let baselineResident = Mutex(0)
    let resumeData = Mutex<(calls: Int, data: Data?)>((0, nil))
    let resumeDataDelivered = DispatchSemaphore(value: 0)

    var progress: @Sendable (Progress) -> Void {
        { [self] progress in
            lastFraction.withLock { $0 = progress.fractionCompleted }
            let growth = residentMemoryBytes() - baselineResident.withLock { $0 }
            peakResidentGrowth.withLock { $0 = max($0, growth) }
        }
    }

    var completion: DownloadTask.DownloadCompletionHandler {
        { [self] response, url, error in
            var seen = DownloadOutcome(response: response, fileURL: url, error: error)
            if let url, let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
               let size = (attributes[.size] as? NSNumber)?.int64Value {
                seen.size = size
                if size <= 16 << 20 { seen.contents = try? Data(contentsOf: url) }
            }
            let first = outcome.withLock { current -> Bool in
                if current == nil { current = seen; return true }
                current!.calls += 1
                return false
            }
            if first { done.signal() }
        }
    }

    var resumeDataHandler: @Sendable (Data?) -> Void {
        { [self] data in
            resumeData.withLock { $0 = ($0.calls + 1, data) }
            resumeDataDelivered.signal()
        }
    }

    func wait(_ seconds: Double = 30) -> DownloadOutcome? {
        guard done.wait(timeout: .now() + seconds) == .success else { return nil }
        return outcome.withLock { $0 }
    }
}

/// Watches one kind of notification for one object.
final class NotificationProbe: @unchecked Sendable {
    // @unchecked: `token` is set in init and read in `stop`, on the test's thread.
    /// One notification's userInfo; @unchecked: read by the test after the post.
    struct Info: @unchecked Sendable {
        var values: [AnyHashable: Any]
    }

    private let seen = Recorder<Info>()
    private var token: NSObjectProtocol?

    init(_ name: Notification.Name, object: AnyObject) {
        let seen = self.seen
        token = NotificationCenter.default.addObserver(forName: name, object: object, queue: nil) { note in
            seen.append(Info(values: note.userInfo ?? [:]))
        }
    }

    var count: Int { seen.count }
    var first: [AnyHashable: Any]? { seen.all.first?.values }

    func stop() {
        if let token { NotificationCenter.default.removeObserver(token) }
    }
}

extension EndToEnd {
    /// Download tasks: temporary file, destination moves, resume data, a 2 GiB body in bounded
    /// memory.
    @Suite(.tags(.nginx)) struct DownloadTasks {
        private func request(_ url: String, timeout: TimeInterval = 60) -> Request {
            Request(url: URL(string: url)!, timeoutInterval: timeout)
        }

        private func temporaryDirectory() throws -> URL {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("uvnetworking-dl-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            return url
        }

        /// The strong ETag nginx gives `/large`.
        private func etagOfLarge(_ harness: ClientHarness, _ nginx: NginxServer) throws -> String {
            let head = harness.fetch(ClientHarness.request(nginx.baseURL + "/large", method: .head))
            return try #require(head.response?.headerFields[.eTag])
        }

        /// Resume data for `/large` whose partial file holds `partial`.
        private func craftedResumeData(_ nginx: NginxServer, partial: Data, etag: String) throws -> (Data, URL) {
            let file = DownloadTemporaryFile.makeURL()
            try partial.write(to: file)
            var resume = try #require(DownloadResumeData(request: request(nginx.baseURL + "/large"), entityTag: etag,
                                                         lastModified: nil, temporaryFilePath: file.path))
            resume.bytesReceived = Int64(partial.count)
            return (resume.encoded(), file)
        }

        @Test func withoutDestinationTheHandlerGetsTheTemporaryFileWhichIsThenRemoved() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            // Not run for downloads: a JSON serializer would reject this binary body.
            harness.manager.responseSerializer = JSONResponseSerializer()
            let probe = DownloadProbe()
            let task = harness.manager.downloadTask(with: request(nginx.baseURL + "/large"), progress: probe.progress,
                                                    completionHandler: probe.completion)
            #expect(harness.manager.downloadTasks.map(\.taskIdentifier) == [task.taskIdentifier])
            #expect(harness.manager.dataTasks.isEmpty && harness.manager.uploadTasks.isEmpty)
            task.resume()
            let outcome = try #require(probe.wait())
            #expect(outcome.error == nil)
            #expect(outcome.status == 200)
            #expect(outcome.calls == 1)
            let file = try #require(outcome.fileURL)
            #expect(file.deletingLastPathComponent().standardizedFileURL == FileManager.default.temporaryDirectory.standardizedFileURL)
            #expect(outcome.contents == Data(NginxServer.largeBody(count: NginxServer.largeSize)))
            #expect(waitUntil(timeout: 5) { !FileManager.default.fileExists(atPath: file.path) }, "the temporary file outlived the handler")
            #expect(waitUntil(timeout: 5) { probe.lastFraction.withLock { $0 } == 1.0 })
            #expect(task.countOfBytesReceived == Int64(NginxServer.largeSize))
            #expect(task.countOfBytesExpectedToReceive == Int64(NginxServer.largeSize))
            #expect(harness.manager.downloadTasks.isEmpty)
            harness.finish()
        }

        @Test func aDestinationReceivesTheFileAndTheMoveIsAnnounced() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            harness.manager.postsTaskNotifications = true
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let target = directory.appendingPathComponent("large.bin")
            let offered = Mutex<(URL, Int)?>(nil)
            let probe = DownloadProbe()
            let task = harness.manager.downloadTask(with: request(nginx.baseURL + "/large-8m"), destination: { temporary, response in
                offered.withLock { $0 = (temporary, response.status.code) }
                return target
            }, completionHandler: probe.completion)
            let moved = NotificationProbe(.networkingDownloadTaskDidMoveFile, object: task)
            let completed = NotificationProbe(.networkingTaskDidComplete, object: task)
            defer { moved.stop(); completed.stop() }
            task.resume()
            let outcome = try #require(probe.wait())
            #expect(outcome.error == nil)
            #expect(outcome.fileURL == target)
            #expect(outcome.contents == Data(NginxServer.largeBody(count: NginxServer.large8MSize)))
            let (temporary, status) = try #require(offered.withLock { $0 })
            #expect(status == 200)
            #expect(!FileManager.default.fileExists(atPath: temporary.path))
            #expect(waitUntil(timeout: 5) { moved.count == 1 && completed.count == 1 })
            #expect(moved.first?[NetworkingDownloadTaskMoveKey.destinationURL] as? URL == target)
            #expect(moved.first?[NetworkingDownloadTaskMoveKey.error] == nil)
            #expect(completed.first?[NetworkingTaskDidCompleteKey.assetPath] as? URL == target)
            #expect(completed.first?[NetworkingTaskDidCompleteKey.responseData] == nil)
            harness.finish()
        }

        @Test func aFailedMoveIsAnnouncedAndTheTaskCompletesOnceWithTheError() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            harness.manager.postsTaskNotifications = true
            let target = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-dir-\(UUID())/large.bin")
            let offered = Mutex<URL?>(nil)
            let probe = DownloadProbe()
            let task = harness.manager.downloadTask(with: request(nginx.baseURL + "/large"), destination: { temporary, _ in
                offered.withLock { $0 = temporary }
                return target
            }, completionHandler: probe.completion)
            let failed = NotificationProbe(.networkingDownloadTaskDidFailToMoveFile, object: task)
            let completed = NotificationProbe(.networkingTaskDidComplete, object: task)
            defer { failed.stop(); completed.stop() }
            task.resume()
            let outcome = try #require(probe.wait())
            #expect(outcome.code == .cannotMoveFile)
            #expect(outcome.status == 200)
            #expect(outcome.fileURL == nil)
            #expect((outcome.error as? NetworkingError)?.underlyingError != nil)
            #expect(waitUntil(timeout: 5) { failed.count == 1 && completed.count == 1 })
            let info = try #require(failed.first)
            #expect((info[NetworkingDownloadTaskMoveKey.error] as? NetworkingError)?.code == .cannotMoveFile)
            #expect(info[NetworkingDownloadTaskMoveKey.destinationURL] as? URL == target)
            #expect((completed.first?[NetworkingTaskDidCompleteKey.error] as? NetworkingError)?.code == .cannotMoveFile)
            let temporary = try #require(offered.withLock { $0 })
            #expect(!FileManager.default.fileExists(atPath: temporary.path), "the temporary file was left behind")
            usleep(200_000)
            #expect(probe.outcome.withLock { $0 }?.calls == 1)
            harness.finish()
        }

        /// A 2 GiB body written to disk on the worker pool while resident memory is watched.
        @Test(.tags(.huge)) func aTwoGiBDownloadTakesBoundedMemory() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            let probe = DownloadProbe()
            probe.baselineResident.withLock { $0 = residentMemoryBytes() }
            let started = monotonicSeconds()
            let task = harness.manager.downloadTask(with: request(nginx.baseURL + "/sparse-2g", timeout: 300),
                                                    progress: probe.progress, completionHandler: probe.completion)
            task.resume()
            let outcome = try #require(probe.wait(300))
            let seconds = monotonicSeconds() - started
            #expect(outcome.error == nil)
            #expect(outcome.size == NginxServer.sparseSize)
            #expect(task.countOfBytesReceived == NginxServer.sparseSize)
            let growth = probe.peakResidentGrowth.withLock { $0 }
            print("2 GiB download to a file: \(String(format: "%.1f", seconds)) s, peak resident growth \(growth >> 20) MiB")
            #expect(growth < 64 << 20, "resident memory grew by \(growth >> 20) MiB during a 2 GiB download")
            #expect(waitUntil(timeout: 5) { probe.lastFraction.withLock { $0 } == 1.0 })
            if let file = outcome.fileURL {
                #expect(waitUntil(timeout: 10) { !FileManager.default.fileExists(atPath: file.path) })
            }
            harness.finish()
        }

        /// A disk that falls behind (here: the only worker thread held busy) stops the loop
        /// reading the connection at about 1 MiB queued; reading resumes once it catches up.
        @Test func aSlowDiskPausesReadingTheConnection() throws {
            let nginx = try TestServers.nginx()
            let pool = WorkerPool(threads: 1, name: "test.slow-disk")
            defer { pool.shutdown() }
            let harness = ClientHarness(makeManager: { SessionManager(configuration: $0, workers: pool) })
            let release = DispatchSemaphore(value: 0)
            pool.submit { release.wait() }
            let probe = DownloadProbe()
            let task = harness.manager.downloadTask(with: request(nginx.baseURL + "/large-8m"), completionHandler: probe.completion)
            task.resume()
            // Reading stops near the threshold and stays stopped while the disk is stuck.
            #expect(waitUntil(timeout: 10) { task.countOfBytesReceived >= Int64(DownloadFileWriter.pauseThreshold) })
            usleep(500_000)
            let stalledAt = task.countOfBytesReceived
            usleep(300_000)
            #expect(task.countOfBytesReceived == stalledAt, "reading went on while the writer was behind")
            #expect(stalledAt < Int64(DownloadFileWriter.pauseThreshold + (128 << 10)), "read \(stalledAt) bytes ahead of the disk")
            let writer = Mutex<DownloadFileWriter?>(nil)
            let grabbed = DispatchSemaphore(value: 0)
            _ = harness.manager.loop.execute {
                writer.withLock { $0 = task.loopRunner?.download?.writer }
                grabbed.signal()
            }
            #expect(grabbed.wait(timeout: .now() + 5) == .success)
            release.signal()
            let outcome = try #require(probe.wait())
            #expect(outcome.error == nil)
            #expect(outcome.contents == Data(NginxServer.largeBody(count: NginxServer.large8MSize)))
            let peak = try #require(writer.withLock { $0 }?.peakQueuedByteCount)
            #expect(peak <= DownloadFileWriter.pauseThreshold + (64 << 10), "\(peak) bytes were queued for the disk")
            #expect((writer.withLock { $0 }?.pauseCount ?? 0) >= 1)
            harness.finish()
        }

        @Test func cancelHalfwayThenResumeAppendsTheRest() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            let full = Data(NginxServer.largeBody(count: NginxServer.largeSize))
            let first = DownloadProbe()
            let cancelled = Mutex(false)
            // `/large-slow` sends 256 KiB at once, then 512 KiB/s: the cancel lands halfway.
            let holder = Mutex<DownloadTask?>(nil)
            let task = harness.manager.downloadTask(with: request(nginx.baseURL + "/large-slow"), progress: { progress in
                guard progress.completedUnitCount > Int64(NginxServer.slowAfter) + 50_000 else { return }
                guard cancelled.withLock({ done in defer { done = true }; return !done }) else { return }
                holder.withLock { $0 }?.cancel(byProducingResumeData: first.resumeDataHandler)
            }, completionHandler: first.completion)
            holder.withLock { $0 = task }
            task.resume()
            let stopped = try #require(first.wait())
            #expect(stopped.code == .cancelled)
            #expect(stopped.fileURL == nil)
            #expect(first.resumeDataDelivered.wait(timeout: .now() + 5) == .success)
            let (calls, data) = first.resumeData.withLock { $0 }
            #expect(calls == 1)
            let resumeData = try #require(data)
            let resume = try DownloadResumeData.decode(resumeData)
            #expect(resume.entityTag != nil)
            let partialSize = try #require(POSIXFile.status(atPath: resume.temporaryFilePath)?.size)
            #expect(partialSize == resume.bytesReceived)
            #expect(partialSize > Int64(NginxServer.slowAfter) && partialSize < Int64(full.count), "partial: \(partialSize)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: resume.temporaryFilePath)) == full.prefix(Int(partialSize)))

            let second = DownloadProbe()
            let resumed = try harness.manager.downloadTask(withResumeData: resumeData, progress: second.progress,
                                                           completionHandler: second.completion)
            resumed.resume()
            let outcome = try #require(second.wait())
            #expect(outcome.error == nil)
            #expect(outcome.status == 206)
            #expect(outcome.contents == full, "the resumed file differs from the original")
            #expect(resumed.countOfBytesExpectedToReceive == Int64(full.count))
            #expect(resumed.countOfBytesReceived == Int64(full.count))
            #expect(waitUntil(timeout: 5) { second.lastFraction.withLock { $0 } == 1.0 })
            harness.finish()
        }

        /// If-Range with a validator the resource no longer has: the server sends the whole body
        /// (200), which replaces the partial file.
        @Test func aServerAnswering200ToTheResumeRestartsTheFile() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            let (resumeData, _) = try craftedResumeData(nginx, partial: Data(repeating: 0xFF, count: 300_000), etag: "\"changed\"")
            let probe = DownloadProbe()
            try harness.manager.downloadTask(withResumeData: resumeData, completionHandler: probe.completion).resume()
            let outcome = try #require(probe.wait())
            #expect(outcome.error == nil)
            #expect(outcome.status == 200)
            #expect(outcome.contents == Data(NginxServer.largeBody(count: NginxServer.largeSize)))
            harness.finish()
        }

        /// Range past the end: 416 `bytes */N`. A partial file of N bytes is complete already; one
        /// of another size is fetched whole again.
        @Test func a416CompletesAMatchingFileAndRestartsAnotherWithoutRange() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            let etag = try etagOfLarge(harness, nginx)
            let full = Data(NginxServer.largeBody(count: NginxServer.largeSize))

            let (complete, _) = try craftedResumeData(nginx, partial: full, etag: etag)
            let kept = DownloadProbe()
            try harness.manager.downloadTask(withResumeData: complete, completionHandler: kept.completion).resume()
            let keptOutcome = try #require(kept.wait())
            #expect(keptOutcome.error == nil)
            #expect(keptOutcome.status == 416)
            #expect(keptOutcome.contents == full)

            let (tooLong, _) = try craftedResumeData(nginx, partial: full + Data("garbage".utf8), etag: etag)
            let restarted = DownloadProbe()
            let task = try harness.manager.downloadTask(withResumeData: tooLong, progress: restarted.progress,
                                                        completionHandler: restarted.completion)
            task.resume()
            let outcome = try #require(restarted.wait())
            #expect(outcome.error == nil)
            #expect(outcome.status == 200)
            #expect(outcome.contents == full)
            #expect(task.currentRequest.value(forHTTPHeaderField: "Range") == nil)
            harness.finish()
        }

        /// Cancelled before any response, a resumed download hands back resume data for the same
        /// partial file.
        @Test func aResumedTaskCancelledBeforeItsResponseKeepsItsResumeData() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            let (resumeData, file) = try craftedResumeData(nginx, partial: Data(repeating: 1, count: 1000), etag: "\"v\"")
            defer { try? FileManager.default.removeItem(at: file) }
            let probe = DownloadProbe()
            let task = try harness.manager.downloadTask(withResumeData: resumeData, completionHandler: probe.completion)
            #expect(task.currentRequest.value(forHTTPHeaderField: "Range") == "bytes=1000-")
            #expect(task.currentRequest.value(forHTTPHeaderField: "If-Range") == "\"v\"")
            task.cancel(byProducingResumeData: probe.resumeDataHandler)
            #expect(probe.wait()?.code == .cancelled)
            #expect(probe.resumeDataDelivered.wait(timeout: .now() + 5) == .success)
            let again = try DownloadResumeData.decode(try #require(probe.resumeData.withLock { $0 }.data))
            #expect(again.temporaryFilePath == file.path)
            #expect(again.bytesReceived == 1000)
            #expect(FileManager.default.fileExists(atPath: file.path))
            harness.finish()
        }

        @Test func aRedirectIsFollowedAndOnlyTheFinalBodyIsWritten() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            let probe = DownloadProbe()
            harness.manager.downloadTask(with: request(nginx.baseURL + "/redirect"), completionHandler: probe.completion).resume()
            let outcome = try #require(probe.wait())
            #expect(outcome.status == 200)
            #expect(outcome.contents == Data(NginxServer.helloBody.utf8))
            harness.finish()
        }

        /// A response without validators cannot be resumed: nil, and no partial file is left.
        @Test func cancellingWithoutAValidatorGivesNoResumeData() throws {
            let server = try ScriptedServer { connection in
                _ = try connection.readRequestHead()
                try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
                try connection.write([UInt8](repeating: 7, count: 100_000))
                _ = connection.waitForPeerClose(timeout: 10)
            }
            let harness = ClientHarness()
            let probe = DownloadProbe()
            let holder = Mutex<DownloadTask?>(nil)
            let asked = Mutex(false)
            let task = harness.manager.downloadTask(with: request("http://127.0.0.1:\(server.port)/file"), progress: { progress in
                guard progress.completedUnitCount >= 100_000, asked.withLock({ done in defer { done = true }; return !done }) else { return }
                holder.withLock { $0 }?.cancel(byProducingResumeData: probe.resumeDataHandler)
            }, completionHandler: probe.completion)
            holder.withLock { $0 = task }
            task.resume()
            let outcome = try #require(probe.wait())
            #expect(outcome.code == .cancelled)
            #expect(probe.resumeDataDelivered.wait(timeout: .now() + 5) == .success)
            #expect(probe.resumeData.withLock { $0 }.calls == 1)
            #expect(probe.resumeData.withLock { $0 }.data == nil)
            #expect(waitUntil(timeout: 5) { !FileManager.default.fileExists(atPath: task.plan.temporaryFile.path) })
            // A completed task answers nil at once.
            let late = DownloadProbe()
            task.cancel(byProducingResumeData: late.resumeDataHandler)
            #expect(late.resumeDataDelivered.wait(timeout: .now() + 5) == .success)
            #expect(late.resumeData.withLock { $0 }.data == nil)
            server.stop()
            harness.finish()
        }

        @Test func downloadForRequestReturnsAFileTheCallerOwns() async throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            let (file, response) = try await harness.manager.download(for: request(nginx.baseURL + "/large"))
            defer { try? FileManager.default.removeItem(at: file) }
            #expect(response.status.code == 200)
            #expect(try Data(contentsOf: file) == Data(NginxServer.largeBody(count: NginxServer.largeSize)))
            harness.finish()
        }
    }
}
