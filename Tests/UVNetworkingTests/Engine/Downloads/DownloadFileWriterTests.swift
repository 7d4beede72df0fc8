import Dispatch
import Foundation
import Synchronization
import Testing
@testable import UVNetworking

/// The worker-side file writer of downloads, driven directly (no loop, no socket).
@Suite(.tags(.loopback)) struct DownloadFileWriterTests {
    /// Counts the writer's notices.
    final class Notices: Sendable {
        let drained = Mutex(0)
        let failures = Mutex<[NetworkingError]>([])
    }

    private func makeWriter(_ path: String, pool: WorkerPool, notices: Notices) -> DownloadFileWriter {
        DownloadFileWriter(path: path, workers: pool, onDrained: { notices.drained.withLock { $0 += 1 } },
                           onFailed: { error in notices.failures.withLock { $0.append(error) } })
    }

    /// Closes the writer and waits for the outcome.
    private func close(_ writer: DownloadFileWriter, _ ending: DownloadFileWriter.Ending) -> DownloadFileWriter.Closed? {
        let result = Mutex<DownloadFileWriter.Closed?>(nil)
        let done = DispatchSemaphore(value: 0)
        writer.close(ending) { closed in
            result.withLock { $0 = closed }
            done.signal()
        }
        guard done.wait(timeout: .now() + 10) == .success else { return nil }
        return result.withLock { $0 }
    }

    private func chunk(_ index: Int, size: Int = 64 << 10) -> [UInt8] {
        [UInt8](repeating: UInt8(index % 251), count: size)
    }

    @Test func asksTheLoopToPauseWhileTheDiskIsBehindAndToResumeOnceDrained() throws {
        let pool = WorkerPool(threads: 1, name: "test.writer")
        defer { pool.shutdown() }
        let path = DownloadTemporaryFile.makeURL().path
        defer { POSIXFile.remove(path) }
        let notices = Notices()
        let writer = makeWriter(path, pool: pool, notices: notices)
        // Hold the only worker, as a slow disk or a busy pool would.
        let release = DispatchSemaphore(value: 0)
        pool.submit { release.wait() }
        writer.start(.fromBeginning)
        var pausedAt: Int?
        var expected: [UInt8] = []
        for index in 0..<24 {
            let bytes = chunk(index)
            expected += bytes
            if writer.push(bytes) && pausedAt == nil { pausedAt = index }
        }
        // 16 chunks of 64 KiB reach the 1 MiB threshold.
        #expect(pausedAt == 15)
        #expect(writer.wantsPause)
        release.signal()
        #expect(waitUntil(timeout: 10) { notices.drained.withLock { $0 } == 1 })
        #expect(!writer.wantsPause)
        let closed = try #require(close(writer, .complete))
        #expect(closed.error == nil)
        #expect(closed.size == Int64(expected.count))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(expected))
        #expect(writer.pauseCount == 1)
        #expect(notices.failures.withLock { $0 }.isEmpty)
    }

    @Test func appendingKeepsThePrefixAndCutsWhatFollowsIt() throws {
        let path = DownloadTemporaryFile.makeURL().path
        defer { POSIXFile.remove(path) }
        try Data("0123456789-stale-tail".utf8).write(to: URL(fileURLWithPath: path))
        let writer = makeWriter(path, pool: .shared, notices: Notices())
        writer.start(.appending(at: 10))
        _ = writer.push(Array("ABCDEF".utf8))
        let closed = try #require(close(writer, .complete))
        #expect(closed.size == 16)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "0123456789ABCDEF")
    }

    @Test func appendingPastTheEndOfTheFileFails() throws {
        let path = DownloadTemporaryFile.makeURL().path
        try Data("short".utf8).write(to: URL(fileURLWithPath: path))
        let notices = Notices()
        let writer = makeWriter(path, pool: .shared, notices: notices)
        writer.start(.appending(at: 10))
        _ = writer.push(Array("x".utf8))
        #expect(waitUntil(timeout: 5) { notices.failures.withLock { $0 }.count == 1 })
        #expect(notices.failures.withLock { $0 }.first?.code == .cannotOpenFile)
        let closed = try #require(close(writer, .complete))
        #expect(closed.error?.code == .cannotOpenFile)
        #expect(!FileManager.default.fileExists(atPath: path), "a file that failed is removed")
    }

    @Test func aFileThatCannotBeCreatedFailsAndLaterChunksAreDropped() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-dir-\(UUID())/file").path
        let notices = Notices()
        let writer = makeWriter(path, pool: .shared, notices: notices)
        writer.start(.fromBeginning)
        _ = writer.push(chunk(0))
        #expect(waitUntil(timeout: 5) { notices.failures.withLock { $0 }.count == 1 })
        #expect(notices.failures.withLock { $0 }.first?.code == .cannotCreateFile)
        #expect(writer.push(chunk(1)), "a failed writer keeps the loop paused")
        let closed = try #require(close(writer, .complete))
        #expect(closed.error?.code == .cannotCreateFile)
        #expect(closed.size == nil)
        #expect(notices.failures.withLock { $0 }.count == 1, "the failure is reported once")
    }

    @Test func keepingFileLeavesItAsItIs() throws {
        let path = DownloadTemporaryFile.makeURL().path
        defer { POSIXFile.remove(path) }
        try Data("complete".utf8).write(to: URL(fileURLWithPath: path))
        let writer = makeWriter(path, pool: .shared, notices: Notices())
        writer.start(.keepingFile)
        let closed = try #require(close(writer, .complete))
        #expect(closed.size == 8)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "complete")
    }

    @Test func endings() throws {
        // A partial file kept for resume data, untouched when no head opened it.
        let kept = DownloadTemporaryFile.makeURL().path
        defer { POSIXFile.remove(kept) }
        try Data("partial".utf8).write(to: URL(fileURLWithPath: kept))
        #expect(close(makeWriter(kept, pool: .shared, notices: Notices()), .keepPartial)?.size == 7)
        #expect(FileManager.default.fileExists(atPath: kept))

        // Discarded: removed, queued chunks never written.
        let discarded = DownloadTemporaryFile.makeURL().path
        let writer = makeWriter(discarded, pool: .shared, notices: Notices())
        writer.start(.fromBeginning)
        _ = writer.push(chunk(0))
        let closed = try #require(close(writer, .discard))
        #expect(closed.size == nil && closed.error == nil)
        #expect(!FileManager.default.fileExists(atPath: discarded))

        // Complete with no body at all: an empty file.
        let empty = DownloadTemporaryFile.makeURL().path
        defer { POSIXFile.remove(empty) }
        #expect(close(makeWriter(empty, pool: .shared, notices: Notices()), .complete)?.size == 0)
        #expect(FileManager.default.fileExists(atPath: empty))
    }

    /// A body written from its start has no name until it is kept, so nothing is left if the
    /// process dies meanwhile.
    @Test(arguments: [DownloadFileWriter.Ending.complete, .keepPartial])
    func aBodyGetsItsNameOnlyWhenKept(ending: DownloadFileWriter.Ending) throws {
        let path = DownloadTemporaryFile.makeURL().path
        defer { POSIXFile.remove(path) }
        let writer = makeWriter(path, pool: .shared, notices: Notices())
        writer.start(.fromBeginning)
        _ = writer.push(chunk(1))
        // Written (the start and the chunk run in order, before this job).
        let written = DispatchSemaphore(value: 0)
        WorkerPool.shared.submit { written.signal() }
        #expect(written.wait(timeout: .now() + 5) == .success)
        usleep(50_000)
        #expect(!FileManager.default.fileExists(atPath: path), "named before it was kept")
        let closed = try #require(close(writer, ending))
        #expect(closed.error == nil)
        #expect(closed.size == Int64(64 << 10))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(chunk(1)))
    }

    /// A resumed download the server restarts from byte 0 replaces its partial file when kept,
    /// and removes it when not.
    @Test func aBodyStartedOverReplacesThePartialFile() throws {
        let path = DownloadTemporaryFile.makeURL().path
        defer { POSIXFile.remove(path) }
        try Data("old partial".utf8).write(to: URL(fileURLWithPath: path))
        let writer = makeWriter(path, pool: .shared, notices: Notices())
        writer.start(.fromBeginning)
        _ = writer.push(Array("new".utf8))
        #expect(try #require(close(writer, .complete)).size == 3)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "new")

        let failed = makeWriter(path, pool: .shared, notices: Notices())
        failed.start(.fromBeginning)
        _ = failed.push(Array("newer".utf8))
        #expect(try #require(close(failed, .discard)).error == nil)
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
