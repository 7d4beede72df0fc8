import Foundation
import Testing
import UVFetchCore

/// `-i` as a shell hands it over: process substitution, `/dev/stdin` and FIFOs with standard
/// output on a terminal (where the progress line wants a total), `--repeat` over input that can
/// be read only once, and a directory.
@Suite(.tags(.nginx), .serialized) struct FetchInputTests {
    private static let count = 2_000

    /// A list of `count` nginx URLs in a temporary directory, with the directory.
    private func makeList() throws -> (directory: URL, list: URL) {
        let base = try TestServers.nginx().baseURL
        let directory = URL(fileURLWithPath: try TestServers.makeTemporaryDirectory(prefix: "uvfetch-input"))
        let list = directory.appendingPathComponent("urls.txt")
        try Data((0..<Self.count).map { "\(base)/hello?n=\($0)\n" }.joined().utf8).write(to: list)
        return (directory, list)
    }

    /// Runs `script` with bash in a pseudo-terminal (`$UVFETCH` is the binary, `$DIR` the
    /// list's directory) and returns the screen once it has printed EXIT=, with the records
    /// `$DIR/records.jsonl` holds.
    private func runInTerminal(_ script: String, in directory: URL) throws -> (screen: String, records: Int) {
        let file = directory.appendingPathComponent("run.sh")
        try Data("""
            UVFETCH='\(uvfetchExecutable.path)'
            DIR='\(directory.path)'
            \(script)
            echo EXIT=$?
            sleep 60

            """.utf8).write(to: file)
        let session = try TmuxSession(width: 160, command: "bash '\(file.path)'")
        let screen = try session.waitForScreen(timeout: 120) { $0.contains("EXIT=") }
        let records = (try? String(contentsOf: directory.appendingPathComponent("records.jsonl"), encoding: .utf8))?
            .split(separator: "\n").count ?? 0
        return (screen, records)
    }

    @Test func processSubstitutionOnATerminalFetchesEveryURL() throws {
        let (directory, _) = try makeList()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (screen, records) = try runInTerminal(#""$UVFETCH" --jsonl "$DIR/records.jsonl" -i <(cat "$DIR/urls.txt")"#, in: directory)
        #expect(screen.contains("EXIT=0"), "\(screen)")
        #expect(screen.contains("\(Self.count) requests in "), "\(screen)")
        #expect(records == Self.count)
    }

    @Test func devStdinFromAPipeOnATerminalFetchesEveryURL() throws {
        let (directory, _) = try makeList()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (screen, records) = try runInTerminal(#"cat "$DIR/urls.txt" | "$UVFETCH" --jsonl "$DIR/records.jsonl" -i /dev/stdin"#, in: directory)
        #expect(screen.contains("EXIT=0"), "\(screen)")
        #expect(screen.contains("\(Self.count) requests in "), "\(screen)")
        #expect(records == Self.count)
    }

    @Test func aFIFOOnATerminalFetchesEveryURL() throws {
        let (directory, _) = try makeList()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("urls.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        // Written by another process, slowly enough that the run starts before the list ends.
        let script = #"(while read -r line; do echo "$line"; done < "$DIR/urls.txt" > "$DIR/urls.fifo") & "$UVFETCH" --jsonl "$DIR/records.jsonl" -i "$DIR/urls.fifo""#
        let (screen, records) = try runInTerminal(script, in: directory)
        #expect(screen.contains("EXIT=0"), "\(screen)")
        #expect(screen.contains("\(Self.count) requests in "), "\(screen)")
        #expect(records == Self.count)
    }

    @Test func repeatWithAPipeIsAUsageError() throws {
        let base = try TestServers.nginx().baseURL
        let result = try runUVFetch(["--repeat", "2", "-i", "/dev/stdin"], stdin: "\(base)/hello\n")
        #expect(result.status == ExitStatus.usage)
        #expect(result.stderr.contains("--repeat"), "\(result.stderr)")
        #expect(result.stdout.isEmpty, "nothing fetched: \(result.stdout)")
    }

    @Test func repeatWithStandardInputFromAFileReadsItAgain() throws {
        let base = try TestServers.nginx().baseURL
        let list = temporaryFile("urls.txt")
        defer { try? FileManager.default.removeItem(at: list) }
        try Data("\(base)/hello?a\n\(base)/hello?b\n".utf8).write(to: list)
        let result = try runUVFetch(["--repeat", "3", "-i", "-"], stdinFile: list)
        let text = result.stdout
        #expect(result.status == ExitStatus.success)
        #expect(text.contains("6 requests in "), "\(text)")
    }

    @Test func aDirectoryIsAnInputError() throws {
        let directory = try TestServers.makeTemporaryDirectory(prefix: "uvfetch-input-dir")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try runUVFetch(["-i", directory])
        #expect(result.status == ExitStatus.usage)
        #expect(result.stderr.contains(directory) && result.stderr.contains("directory"), "\(result.stderr)")
    }
}
