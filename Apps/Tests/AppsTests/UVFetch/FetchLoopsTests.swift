import Foundation
import LoopbackHTTPServer
import Testing
import UVNetworking
@testable import UVFetchCore

/// `uvfetch --loops N` (`FetchRunner.Settings.loops`): the run's origins spread over N loops.
@Suite(.tags(.childProcess), .serialized) struct FetchLoopsTests {
    @Test func aRunOverSeveralLoopsFetchesEveryURLOverAGroupOfThatSize() throws {
        let servers = (0..<6).map { _ in LoopbackHTTPServer() }
        defer { for server in servers { server.stop() } }
        let urls = try servers.flatMap { server in
            let port = try server.start()
            return (0..<5).map { "http://127.0.0.1:\(port)/items/\($0)" }
        }
        var settings = FetchRunner.Settings()
        settings.concurrency = 8
        settings.printsLines = false
        // One more than the cores: not the shared group, a group of the run's own.
        let loops = EventLoopGroup.defaultLoopCount + 1
        settings.loops = loops
        let runner = FetchRunner(options: try RequestOptions.parse([]), settings: settings, writer: nil, outputDirectory: nil) { _ in }
        let outcome = try runner.run(try URLInput(arguments: urls, inputPath: nil))
        #expect(outcome.statistics.succeeded == 30)
        #expect(outcome.statistics.exitStatus == ExitStatus.success)
        // The run's session was made over a group of that many loops (kept for the process's
        // life), all of them running.
        let group = FetchRunner.loopGroups.withLock { $0[loops] }
        #expect(group?.loops.count == loops)
        #expect(group?.loops.allSatisfy { !$0.isShutDown } == true)
    }

    @Test func theCommandTakesLoopsAndRefusesZero() throws {
        let server = LoopbackHTTPServer()
        defer { server.stop() }
        let port = try server.start()
        let good = try runUVFetch(["--quiet", "--loops", "2", "http://127.0.0.1:\(port)/items/1", "http://127.0.0.1:\(port)/items/2"])
        #expect(good.status == ExitStatus.success)
        #expect(good.stdout.contains("2 succeeded"), "\(good.stdout)")
        #expect(try runUVFetch(["--loops", "0", "http://127.0.0.1:\(port)/"]).status == ExitStatus.usage)
    }

    /// Each loop is a thread with descriptors of its own: a count far past the cores would start
    /// thousands of threads (and hang once one cannot start) rather than fetch anything.
    @Test func theCommandRefusesMoreLoopsThanItCanUse() throws {
        #expect(try runUVFetch(["--loops", "1025", "http://127.0.0.1:1/"]).status == ExitStatus.usage)
        #expect(try runUVFetch(["--loops", "1000000", "http://127.0.0.1:1/"]).status == ExitStatus.usage)
    }
}
