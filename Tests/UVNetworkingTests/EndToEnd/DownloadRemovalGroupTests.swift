import Dispatch
import Foundation
import Synchronization
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// The file a download's handler gets is removed after the handler, on a worker, inside the
    /// completion group: a program that waits on the group before it exits (as `shutdown()`
    /// says to) leaves no file behind.
    @Suite(.tags(.loopback)) struct DownloadRemovalGroupTests {
        @Test func theCompletionGroupCoversTheRemovalOfTheHandlersFile() throws {
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { _ in ScriptedResponse.text("body", status: 404, reason: "Not Found") }
            }
            defer { server.stop() }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("uvnetworking-removal-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let loop = try EventLoop(name: "test.removal")
            defer { loop.shutdown() }
            let workers = WorkerPool(threads: 1, name: "test.removal.workers")
            defer { workers.shutdown() }
            var configuration = SessionConfiguration()
            configuration.downloadDirectory = directory
            let manager = SessionManager(configuration: configuration, loop: loop, workers: workers)
            manager.completionQueue = DispatchQueue(label: "test.removal.completions")
            let group = DispatchGroup()
            manager.completionGroup = group
            let release = DispatchSemaphore(value: 0), handled = DispatchSemaphore(value: 0)
            let path = Mutex<String?>(nil)
            let request = Request(url: URL(string: "http://127.0.0.1:\(server.port)/missing")!)
            manager.downloadTask(with: request, completionHandler: { _, file, _ in
                path.withLock { $0 = file?.path }
                // Holds the pool's one thread: the removal that follows this handler waits.
                _ = workers.submit { release.wait() }
                handled.signal()
            }).resume()
            #expect(handled.wait(timeout: .now() + 10) == .success)
            let file = try #require(path.withLock { $0 })
            #expect(group.wait(timeout: .now() + 0.3) == .timedOut, "the group was empty with the file still there")
            #expect(FileManager.default.fileExists(atPath: file))
            release.signal()
            #expect(group.wait(timeout: .now() + 10) == .success)
            #expect(!FileManager.default.fileExists(atPath: file))
            manager.invalidateSessionCancelingTasks(true, resetSession: false)
        }
    }
}
