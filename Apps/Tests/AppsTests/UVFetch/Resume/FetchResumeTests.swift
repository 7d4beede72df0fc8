import Foundation
import Synchronization
import Testing
import UVFetchCore

/// `uvfetch -i LIST --jsonl FILE --resume`, the built executable against a loopback server
/// that logs every request: a run stopped anywhere (^C, SIGKILL, a torn line, a full disk) and
/// resumed leaves every URL exactly one record, and the resumed run fetches only the URLs that
/// had none.
@Suite(.tags(.namespace), .serialized) struct FetchResumeTests {
    /// A keep-alive server answering "ok\n" after `delay` microseconds, logging targets.
    final class LoggingServer: Sendable {
        /// The targets requested, in the order they arrived.
        final class Log: Sendable {
            let targets = Mutex<[String]>([])
        }

        private let server: ScriptedServer
        private let log = Log()

        init(delay: UInt32 = 0) throws {
            let log = self.log
            server = try ScriptedServer { connection in
                try connection.serveKeepAlive(idleTimeout: 30) { request in
                    if delay > 0 { usleep(delay) }
                    log.targets.withLock { $0.append(request.target) }
                    return ScriptedResponse.text("ok\n")
                }
            }
        }

        func stop() { server.stop() }

        /// The targets requested since the last call, which forgets them.
        func takeTargets() -> [String] {
            log.targets.withLock { targets in
                defer { targets = [] }
                return targets
            }
        }

        var requestCount: Int { log.targets.withLock { $0.count } }

        /// Waits until every connection has closed: a request a client sent just before it
        /// died is then logged, not counted as the next run's.
        func waitUntilIdle() -> Bool { waitUntil(timeout: 10) { server.openConnectionCount == 0 } }

        /// `http://127.0.0.1:PORT/path`.
        func url(_ path: String) -> String { "http://127.0.0.1:\(server.port)\(path)" }
    }

    /// The `url` of every line of `data`, which must all be whole records.
    private func recordedURLs(_ data: Data) throws -> [String] {
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.isEmpty || text.hasSuffix("}\n"), "ends with a whole record: \(text.suffix(80))")
        return try text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            let url = try #require(object?["url"] as? String, "not a record: \(line)")
            #expect(line.hasPrefix("{\"attempts\":"))
            return url
        }
    }

    /// A directory for one test's files, removed by the caller.
    private func directory() throws -> URL {
        let folder = temporaryFile("resume")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    private func writeList(_ paths: [String], of server: LoggingServer, to file: URL) throws {
        try Data(paths.map { server.url($0) + "\n" }.joined().utf8).write(to: file)
    }

    @Test func resumingACompletedRunFetchesAndAppendsNothing() throws {
        let server = try LoggingServer()
        defer { server.stop() }
        let folder = try directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let list = folder.appendingPathComponent("urls"), records = folder.appendingPathComponent("records.jsonl")
        let paths = (0..<50).map { "/item/\($0)" }
        try writeList(paths, of: server, to: list)
        let first = try runUVFetch(["-q", "-i", list.path, "--jsonl", records.path, "--resume"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(Set(server.takeTargets()) == Set(paths))
        let written = try Data(contentsOf: records)
        #expect(try recordedURLs(written).count == 50)

        let again = try runUVFetch(["-q", "-i", list.path, "--jsonl", records.path, "--resume"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.hasPrefix("0 requests in "), "\(again.stdout)")
        #expect(again.stdout.contains("skipped, already recorded: 50"), "\(again.stdout)")
        #expect(server.takeTargets().isEmpty)
        #expect(try Data(contentsOf: records) == written)
    }

    /// The run stopped part way, by ^C (whole records, exit 130) or by SIGKILL (whatever the
    /// writes had reached), then resumed: each URL ends with exactly one record, and the
    /// resumed run asked for exactly the URLs without one (those in flight at the stop among
    /// them: they were never recorded).
    @Test(arguments: [SIGINT, SIGKILL])
    func aStoppedRunResumedRecordsEveryURLOnce(signal: Int32) throws {
        // 16 ms a response, 8 at a time: at least 4 s for the list, so the stop comes part way
        // even on a loaded machine.
        let server = try LoggingServer(delay: 16_000)
        defer { server.stop() }
        let folder = try directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let list = folder.appendingPathComponent("urls"), records = folder.appendingPathComponent("records.jsonl")
        let paths = (0..<2_000).map { "/item/\($0)" }
        try writeList(paths, of: server, to: list)

        let process = Process()
        process.executableURL = uvfetchExecutable
        process.arguments = ["-q", "--concurrency", "8", "-i", list.path, "--jsonl", records.path, "--resume"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let started = waitUntil(timeout: 30) { server.requestCount >= 300 }
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        #expect(started)
        if signal == SIGINT {
            #expect(process.terminationReason == .exit && process.terminationStatus == ExitStatus.interrupted)
        } else {
            #expect(process.terminationReason == .uncaughtSignal)
        }
        #expect(server.waitUntilIdle())
        let requestedBefore = server.takeTargets()
        let stoppedData = try Data(contentsOf: records)
        // SIGKILL can leave a torn last line, which the resumed run cuts off.
        let stoppedText = String(decoding: stoppedData, as: UTF8.self)
        let wholeBefore = signal == SIGKILL ? String(stoppedText[..<(stoppedText.lastIndex(of: "\n").map { stoppedText.index(after: $0) } ?? stoppedText.startIndex)]) : stoppedText
        let before = try recordedURLs(Data(wholeBefore.utf8))
        #expect(before.count > 0 && before.count < paths.count, "stopped part way: \(before.count) records")
        #expect(Set(before).count == before.count, "no URL twice")
        #expect(Set(requestedBefore).isSuperset(of: before.map { URL(string: $0)!.path }))

        let resumed = try runUVFetch(["-q", "--concurrency", "64", "-i", list.path, "--jsonl", records.path, "--resume"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stdout.contains("skipped, already recorded: \(before.count)"), "\(resumed.stdout)")
        let final = try recordedURLs(try Data(contentsOf: records))
        #expect(final.count == paths.count)
        #expect(Set(final) == Set(paths.map(server.url)), "every URL recorded")
        #expect(final.starts(with: before), "the records before the stop are kept as they were")
        let requestedAfter = server.takeTargets()
        #expect(requestedAfter.count == paths.count - before.count, "the resumed run fetched each missing URL once")
        #expect(Set(requestedAfter) == Set(paths).subtracting(before.map { URL(string: $0)!.path }))
    }

    /// What a run killed in the middle of a write leaves, made by hand: the last records gone
    /// and the start of one of them at the end.
    @Test func aTornLastLineIsCutOffAndItsURLFetchedAgain() throws {
        let server = try LoggingServer()
        defer { server.stop() }
        let folder = try directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let list = folder.appendingPathComponent("urls"), records = folder.appendingPathComponent("records.jsonl")
        let paths = (0..<20).map { "/item/\($0)" }
        try writeList(paths, of: server, to: list)
        #expect(try runUVFetch(["-q", "--concurrency", "1", "-i", list.path, "--jsonl", records.path]).status == 0)
        _ = server.takeTargets()
        let lines = String(decoding: try Data(contentsOf: records), as: UTF8.self).split(separator: "\n").map { $0 + "\n" }
        let kept = lines.prefix(17).joined()
        try Data((kept + lines[17].prefix(60)).utf8).write(to: records)

        let resumed = try runUVFetch(["-q", "-i", list.path, "--jsonl", records.path, "--resume"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stderr.contains("uvfetch: \(records.path): removed line 18, an incomplete record (60 bytes)"), "\(resumed.stderr)")
        let final = try recordedURLs(try Data(contentsOf: records))
        #expect(final.count == 20 && Set(final) == Set(paths.map(server.url)))
        #expect(Set(server.takeTargets()) == Set(paths[17...]))
        #expect(String(decoding: try Data(contentsOf: records), as: UTF8.self).hasPrefix(kept))
    }

    /// Lines that are not UTF-8 are URLs of their own bytes: `\xFF` recorded does not skip
    /// `\xFE`, though both records' `url` read the same (U+FFFD).
    @Test func urlsThatAreNotUTF8AreMatchedByTheirBytes() throws {
        let server = try LoggingServer()
        defer { server.stop() }
        let folder = try directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let list = folder.appendingPathComponent("urls"), records = folder.appendingPathComponent("records.jsonl")
        let ff = Data(server.url("/b").utf8) + [0xFF] + Data("\n".utf8)
        let fe = Data(server.url("/b").utf8) + [0xFE] + Data("\n".utf8)
        try ff.write(to: list)
        #expect(try runUVFetch(["-q", "-i", list.path, "--jsonl", records.path, "--resume"]).status == 0)
        #expect(server.takeTargets() == ["/b%FF"])
        try (ff + fe + ff).write(to: list)
        let resumed = try runUVFetch(["-q", "-i", list.path, "--jsonl", records.path, "--resume"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(server.takeTargets() == ["/b%FE"])
        #expect(resumed.stdout.contains("skipped, already recorded: 2"), "\(resumed.stdout)")
        let text = String(decoding: try Data(contentsOf: records), as: UTF8.self)
        #expect(text.contains(Data(server.url("/b").utf8 + [0xFF]).base64EncodedString()))
        #expect(text.contains(Data(server.url("/b").utf8 + [0xFE]).base64EncodedString()))
        #expect(try recordedURLs(Data(text.utf8)).count == 2)
    }

    /// A URL the list gives twice is fetched once with `--resume` (once recorded, it is
    /// recorded); without it, as often as given, as before.
    @Test func aURLGivenTwiceIsFetchedOnceWithResume() throws {
        let server = try LoggingServer()
        defer { server.stop() }
        let folder = try directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let list = folder.appendingPathComponent("urls"), records = folder.appendingPathComponent("records.jsonl")
        try writeList(["/a", "/b", "/a", "/c", "/b"], of: server, to: list)
        let resumed = try runUVFetch(["-q", "-i", list.path, "--jsonl", records.path, "--resume", server.url("/c")])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(server.takeTargets().sorted() == ["/a", "/b", "/c"])
        #expect(resumed.stdout.contains("skipped, already recorded: 3"), "\(resumed.stdout)")
        #expect(try recordedURLs(try Data(contentsOf: records)).count == 3)
        let plain = try runUVFetch(["-q", "-i", list.path, "--jsonl", records.path])
        #expect(plain.status == 0)
        #expect(server.takeTargets().count == 5)
    }

    /// Usage errors: exit 64 with a message, no request, the file as it was.
    @Test func usageErrorsChangeNothing() throws {
        let server = try LoggingServer()
        defer { server.stop() }
        let folder = try directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let records = folder.appendingPathComponent("records.jsonl"), fifo = folder.appendingPathComponent("fifo")
        let list = folder.appendingPathComponent("urls")
        try writeList(["/a"], of: server, to: list)
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let malformed = ResumableRecordsTests.line(server.url("/a")) + "{oops\n" + ResumableRecordsTests.line(server.url("/b"))
        try Data(malformed.utf8).write(to: records)
        let url = server.url("/x")
        let cases: [([String], String)] = [
            (["--resume", url], "--resume needs --jsonl FILE"),
            (["--resume", "--jsonl", "-", url], "--resume needs --jsonl to name a file, not standard output"),
            (["--resume", "--jsonl", fifo.path, url], "cannot resume from \(fifo.path): it is not a regular file"),
            (["--resume", "--jsonl", "/dev/full", url], "cannot resume from /dev/full: it is not a regular file"),
            (["--resume", "--jsonl", records.path, "--repeat", "2", "-i", list.path], "--resume and --repeat cannot go together"),
            (["--resume", "--jsonl", records.path, url], "cannot resume from \(records.path): line 2 is not a uvfetch record (not JSON)"),
            (["--resume", "--jsonl", folder.path, url], "cannot create \(folder.path): Is a directory"),
        ]
        for (arguments, message) in cases {
            let result = try runUVFetch(arguments)
            #expect(result.status == ExitStatus.usage, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        #expect(server.takeTargets().isEmpty)
        #expect(String(decoding: try Data(contentsOf: records), as: UTF8.self) == malformed)
    }

    /// A file system that fills up while the resumed run appends: exit 23, the records the
    /// file had are untouched and the new ones whole; with room again, a second resume
    /// finishes the list, each URL once. On a read-only file system: exit 64, nothing changed.
    @Test(.enabled(if: WriteErrorTests.canMountTmpfs))
    func aFullOrReadOnlyFileSystemLosesNoRecord() throws {
        let server = try LoggingServer()
        defer { server.stop() }
        let paths = (0..<200).map { "/item/\($0)" }
        let earlier = paths.prefix(5).map { ResumableRecordsTests.line(server.url($0)) }.joined()
        let list = paths.map(server.url).joined(separator: "\n")
        let result = try runShell("""
            printf '%s\\n' "\(list)" > "$D/urls"; mkdir "$D/small"
            unshare -m bash -c 'mount -t tmpfs -o size=8k tmpfs "$D/small" &&
              printf "%s" '"'"'\(earlier)'"'"' > "$D/small/records.jsonl" &&
              "$UVFETCH" -q --concurrency 1 -i "$D/urls" --jsonl "$D/small/records.jsonl" --resume; echo "full=$?";
              cp "$D/small/records.jsonl" "$D/full.jsonl";
              mount -o remount,size=1m "$D/small" &&
              "$UVFETCH" -q -i "$D/urls" --jsonl "$D/small/records.jsonl" --resume; echo "roomy=$?";
              cp "$D/small/records.jsonl" "$D/final.jsonl";
              mount -o remount,ro "$D/small" &&
              "$UVFETCH" -q --jsonl "$D/small/records.jsonl" --resume \(server.url("/late")); echo "readonly=$?";
              cmp "$D/small/records.jsonl" "$D/final.jsonl" && echo unchanged'
            cat "$D/full.jsonl"; echo "--"; cat "$D/final.jsonl"
            """)
        #expect(result.stdout.contains("full=\(ExitStatus.writeError)\n"), "\(result.stdout.prefix(300)) \(result.stderr)")
        #expect(result.stdout.contains("roomy=0\n"), "\(result.stderr)")
        #expect(result.stdout.contains("readonly=\(ExitStatus.usage)\n"), "\(result.stderr)")
        #expect(result.stdout.contains("unchanged\n"))
        #expect(result.stderr.contains("records.jsonl: No space left on device"), "\(result.stderr)")
        #expect(result.stderr.contains("records.jsonl: Read-only file system"), "\(result.stderr)")
        let parts = result.stdout.components(separatedBy: "unchanged\n").last!.components(separatedBy: "--\n")
        let full = parts[0], final = parts[1]
        #expect(full.hasPrefix(earlier), "the earlier records untouched")
        let afterFull = try recordedURLs(Data(full.utf8))
        #expect(afterFull.count > 5 && afterFull.count < 200, "\(afterFull.count)")
        let finalURLs = try recordedURLs(Data(final.utf8))
        #expect(finalURLs.count == 200 && Set(finalURLs) == Set(paths.map(server.url)))
        #expect(final.hasPrefix(full))
        #expect(!server.takeTargets().contains("/late"))
    }
}

/// The progress line of a resumed run counts what is left: its total leaves out the URLs
/// already recorded.
@Suite(.tags(.childProcess), .serialized) struct FetchResumeProgressTests {
    @Test func theTotalLeavesOutTheURLsAlreadyRecorded() throws {
        let server = try OutputTestServer()
        defer { server.stop() }
        let list = temporaryFile("urls.txt"), records = temporaryFile("records.jsonl")
        defer {
            try? FileManager.default.removeItem(at: list)
            try? FileManager.default.removeItem(at: records)
        }
        // Three recorded, then one that answers and one that never does (until the timeout).
        let paths = ["/a", "/b", "/c", "/d", "/slow"]
        try Data(paths.map { server.url($0) + "\n" }.joined().utf8).write(to: list)
        try Data(paths.prefix(3).map { ResumableRecordsTests.line(server.url($0)) }.joined().utf8).write(to: records)
        let session = try TmuxSession(width: 120, command: "'\(uvfetchExecutable.path)' --concurrency 1 --timeout 4 -i '\(list.path)' --jsonl '\(records.path)' --resume; echo EXIT=$?; sleep 60")
        let during = try session.waitForScreen { $0.contains("1/2 done") }
        #expect(during.split(separator: "\n").contains { $0.hasPrefix("1/2 done") && $0.contains("ETA ") }, "\(during)")
        let after = try session.waitForScreen { $0.contains("EXIT=") }
        #expect(after.contains("EXIT=1") && after.contains("skipped, already recorded: 3"), "\(after)")
        #expect(server.counts.requests.load(ordering: .relaxed) == 2)
    }
}
