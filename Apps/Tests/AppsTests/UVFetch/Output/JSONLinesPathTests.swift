import Foundation
import Testing
import UVFetchCore

/// `--jsonl PATH` opens the path as `curl -o` does, run from a shell: what the path is (a
/// symlink, a FIFO, /dev/fd/N, a private file, /dev/stdout) stays what it was, and gets the
/// records.
@Suite(.tags(.childProcess), .serialized) struct JSONLinesPathTests {
    /// Two fetches' records: the lines of `text` that are JSON objects.
    private func records(_ text: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { $0.hasPrefix("{\"attempts\":") && $0.hasSuffix("}") }
    }

    @Test func aSymlinkStaysALinkAndItsTargetGetsTheRecords() throws {
        let server = try OutputTestServer()
        defer { server.stop() }
        let result = try runShell("""
            echo old > "$D/target"; ln -s target "$D/link"
            "$UVFETCH" -q --jsonl "$D/link" \(server.url("/a")) \(server.url("/b")); echo "status=$?"
            test -L "$D/link" && echo "still a link"
            cat "$D/target"
            """)
        #expect(result.stdout.contains("status=0"), "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("still a link"))
        #expect(records(result.stdout).count == 2, "\(result.stdout)")
        #expect(!result.stdout.contains("old"))
    }

    @Test func aFIFOStaysAFIFOAndItsReaderGetsTheRecords() throws {
        let server = try OutputTestServer()
        defer { server.stop() }
        // On failure the reader would wait forever for a writer: a watchdog ends it, with
        // SIGKILL as the test runner's children inherit SIGTERM and SIGALRM blocked.
        let result = try runShell("""
            mkfifo "$D/fifo"
            cat "$D/fifo" > "$D/read" & reader=$!
            # Closes what it inherited beyond 0-2 (the runner's pipes), so it keeps no reader waiting.
            ( for fd in $(ls /proc/$BASHPID/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done
              sleep 5; kill -KILL $reader ) </dev/null >/dev/null 2>&1 & watchdog=$!
            "$UVFETCH" -q --jsonl "$D/fifo" \(server.url("/a")) \(server.url("/b")); echo "status=$?"
            wait $reader
            kill -KILL $watchdog
            test -p "$D/fifo" && echo "still a fifo"
            cat "$D/read"
            """)
        #expect(result.stdout.contains("status=0"), "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("still a fifo"))
        #expect(records(result.stdout).count == 2, "\(result.stdout)")
    }

    @Test func aDevFdPipeGetsTheRecords() throws {
        let server = try OutputTestServer()
        defer { server.stop() }
        // Descriptor 3 is a pipe to `cat`, as `>(cmd)` gives; stdout goes elsewhere.
        let result = try runShell("""
            { "$UVFETCH" -q --jsonl /dev/fd/3 \(server.url("/a")) \(server.url("/b")) 3>&1 >/dev/null; echo "status=$?" >&2; } | cat
            """)
        #expect(result.stderr.contains("status=0"), "\(result.stderr)")
        #expect(records(result.stdout).count == 2, "\(result.stdout)")
    }

    @Test func aPrivateFileKeepsItsMode() throws {
        let server = try OutputTestServer()
        defer { server.stop() }
        let result = try runShell("""
            umask 022; touch "$D/private.jsonl"; chmod 600 "$D/private.jsonl"
            "$UVFETCH" -q --jsonl "$D/private.jsonl" \(server.url("/a")) \(server.url("/b")); echo "status=$?"
            stat -c 'mode=%a' "$D/private.jsonl"
            cat "$D/private.jsonl"
            """)
        #expect(result.stdout.contains("status=0"), "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("mode=600"))
        #expect(records(result.stdout).count == 2, "\(result.stdout)")
    }

    /// A new file gets 0666 less the umask, as any file a shell creates.
    @Test func aNewFileGetsTheUmasksMode() throws {
        let server = try OutputTestServer()
        defer { server.stop() }
        let result = try runShell("""
            umask 027
            "$UVFETCH" -q --jsonl "$D/new.jsonl" \(server.url("/a")); echo "status=$?"
            stat -c 'mode=%a' "$D/new.jsonl"
            """)
        #expect(result.stdout.contains("status=0"), "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("mode=640"))
    }

    /// `/dev/stdout` is standard output itself: records there, the summary on stderr, and a
    /// file stdout appends to keeps what it had.
    @Test func devStdoutIsStandardOutput() throws {
        let server = try OutputTestServer()
        defer { server.stop() }
        let result = try runShell("""
            echo first > "$D/out"
            "$UVFETCH" --jsonl /dev/stdout \(server.url("/a")) \(server.url("/b")) >> "$D/out"; echo "status=$?"
            test -L /dev/stdout && echo "still a link"
            cat "$D/out"
            "$UVFETCH" --jsonl /dev/stdout \(server.url("/c")) | cat
            """)
        #expect(result.stdout.contains("status=0"), "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("still a link"))
        #expect(result.stdout.hasPrefix("status=0\nstill a link\nfirst\n"), "\(result.stdout)")
        // Two in the file, one through the pipe, and nothing else: the summaries went to stderr.
        #expect(records(result.stdout).count == 3, "\(result.stdout)")
        #expect(!result.stdout.contains("requests in"))
        #expect(result.stderr.components(separatedBy: "requests in").count == 3, "\(result.stderr)")
    }
}
