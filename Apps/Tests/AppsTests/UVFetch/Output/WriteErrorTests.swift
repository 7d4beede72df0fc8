import Foundation
import Testing
import UVFetchCore

/// A failed write, run from a shell: `/dev/full`, a full file system, a closed pipe. The run
/// stops with a message and exit 23, no crash, and what was written before is whole lines.
@Suite(.tags(.namespace), .serialized) struct WriteErrorTests {
    /// Whether /dev/full refuses writes with ENOSPC, as Linux's does; some sandboxes' accepts
    /// them, and there the full file system tests below stand in for it.
    static let devFullRefusesWrites: Bool = {
        let descriptor = open("/dev/full", O_WRONLY)
        defer { if descriptor >= 0 { close(descriptor) } }
        return descriptor >= 0 && write(descriptor, "x", 1) < 0 && errno == ENOSPC
    }()

    /// Whether a tmpfs can be mounted in a private mount namespace (root, as CI runs).
    static let canMountTmpfs: Bool = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")

    @Test(.enabled(if: devFullRefusesWrites))
    func jsonLinesToDevFullExits23() throws {
        let server = try OutputTestServer()
        defer { server.stop() }
        let result = try runShell("""
            "$UVFETCH" -q --jsonl /dev/full \(server.url("/a")) \(server.url("/b")); echo "status=$?"
            """)
        #expect(result.stdout.contains("status=\(ExitStatus.writeError)"), "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("uvfetch: write error on /dev/full: No space left on device"), "\(result.stderr)")
        #expect(result.stderr.contains(" requests in "), "the summary so far: \(result.stderr)")
        #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("Crash"), "\(result.stderr)")
    }

    @Test(.enabled(if: devFullRefusesWrites), arguments: [[], ["-q"]])
    func standardOutputToDevFullExits23(flags: [String]) throws {
        let server = try OutputTestServer()
        defer { server.stop() }
        let result = try runShell("""
            "$UVFETCH" \(flags.joined(separator: " ")) \(server.url("/a")) \(server.url("/b")) > /dev/full; echo "status=$?"
            """)
        #expect(result.stdout.contains("status=\(ExitStatus.writeError)"), "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("uvfetch: write error on standard output: No space left on device"), "\(result.stderr)")
        #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("Crash"), "\(result.stderr)")
    }

    /// A file system that fills up after some records: those stay, whole, and nothing else.
    @Test(.enabled(if: canMountTmpfs))
    func aFullFileSystemKeepsTheRecordsBeforeWholeAndExits23() throws {
        let server = try OutputTestServer()
        defer { server.stop() }
        let list = (0..<200).map { server.url("/item/\($0)") }.joined(separator: "\n")
        let result = try runShell("""
            printf '%s\\n' "\(list)" > "$D/urls"; mkdir "$D/small"
            unshare -m bash -c 'mount -t tmpfs -o size=8k tmpfs "$D/small" &&
              "$UVFETCH" -q --concurrency 1 -i "$D/urls" --jsonl "$D/small/records.jsonl"; echo "status=$?";
              cat "$D/small/records.jsonl"'
            """)
        #expect(result.stdout.hasPrefix("status=\(ExitStatus.writeError)\n"), "\(result.stdout.prefix(200)) \(result.stderr)")
        #expect(result.stderr.contains("records.jsonl: No space left on device"), "\(result.stderr)")
        let records = result.stdout.dropFirst("status=23\n".count)
        let lines = records.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count > 5, "some records before the disk filled: \(lines.count)")
        #expect(records.hasSuffix("}\n"), "ends with a whole line: \(records.suffix(80))")
        #expect(lines.dropLast().allSatisfy { $0.hasPrefix("{\"attempts\":") && $0.hasSuffix("}") })
    }

    /// Standard output on a file system that fills up: the lines before stay whole, exit 23;
    /// with `-q` the summary alone is the write that fails.
    @Test(.enabled(if: canMountTmpfs), arguments: [[], ["-q"]])
    func standardOutputOnAFullFileSystemExits23(flags: [String]) throws {
        let server = try OutputTestServer()
        defer { server.stop() }
        let count = flags.isEmpty ? 400 : 2
        let list = (0..<count).map { server.url("/item/\($0)") }.joined(separator: "\n")
        // With `-q` the file system is full from the start.
        let result = try runShell("""
            printf '%s\\n' "\(list)" > "$D/urls"; mkdir "$D/small"
            unshare -m bash -c 'mount -t tmpfs -o size=8k tmpfs "$D/small" &&
              \(flags.isEmpty ? "" : "head -c 8192 /dev/zero > $D/small/fill;")
              "$UVFETCH" \(flags.joined(separator: " ")) --concurrency 1 -i "$D/urls" > "$D/small/out"; echo "status=$?";
              cat "$D/small/out"'
            """)
        #expect(result.stdout.hasPrefix("status=\(ExitStatus.writeError)\n"), "\(result.stdout.prefix(200)) \(result.stderr)")
        #expect(result.stderr.contains("uvfetch: write error on standard output: No space left on device"), "\(result.stderr)")
        #expect(!result.stderr.contains("Fatal error"), "\(result.stderr)")
        let lines = result.stdout.dropFirst("status=23\n".count)
        if flags.isEmpty {
            #expect(lines.split(separator: "\n").count > 5, "some lines before the disk filled")
            #expect(lines.hasSuffix(" ok\n"), "ends with a whole line: \(lines.suffix(80))")
        }
    }

    /// With SIGPIPE ignored (the caller asked for EPIPE), a closed pipe is a write error.
    @Test func aClosedPipeWithSIGPIPEIgnoredExits23() throws {
        let server = try OutputTestServer()
        defer { server.stop() }
        // `/pause` answers after 300 ms, long after `true` has closed the pipe.
        let result = try runShell("""
            trap '' PIPE
            "$UVFETCH" \(server.url("/pause")) \(server.url("/pause")) | true; echo "status=${PIPESTATUS[0]}"
            """)
        #expect(result.stdout.contains("status=\(ExitStatus.writeError)"), "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("uvfetch: write error on standard output: Broken pipe"), "\(result.stderr)")
    }

    /// Otherwise it ends as `cat` or `seq` would, killed by SIGPIPE: silent, no crash report,
    /// no hang (`uvfetch ... | head -1`).
    @Test func aClosedPipeEndsByTheSignalLikeOtherTools() throws {
        let server = try OutputTestServer()
        defer { server.stop() }
        let result = try runShell("""
            trap - PIPE
            "$UVFETCH" \(server.url("/pause")) \(server.url("/slow")) | true; echo "status=${PIPESTATUS[0]}"
            """)
        #expect(result.stdout.contains("status=\(128 + SIGPIPE)"), "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
    }
}
