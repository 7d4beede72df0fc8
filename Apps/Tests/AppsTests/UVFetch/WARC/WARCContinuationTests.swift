import Foundation
import Testing
import UVFetchCore

/// What happens to an archive after something went wrong: `--resume` and `--warc-append`
/// continue it (never truncate it), a new run refuses to replace it, a URL's exchanges are
/// archived exactly when its `--jsonl` record is written (through a full disk, ^C, SIGTERM and a
/// kill), and a head with bare LFs gets the payload digest warcio recomputes. uvfetch runs as a
/// child; warcio (PyPI) checks every archive.
@Suite(.tags(.namespace), .serialized) struct WARCContinuationTests {
    /// A keep-alive server: `/pause...` answers after 200 ms, `/fail...` with 503, `/bare...`
    /// with a head whose lines end in bare LFs and a body holding CRLF CRLF, anything else at
    /// once with "ok".
    private static func server() throws -> ScriptedServer {
        try ScriptedServer { connection in
            try connection.serveKeepAlive(idleTimeout: 30) { request in
                if request.target.hasPrefix("/pause") { usleep(200_000) }
                if request.target.hasPrefix("/fail") { return ScriptedResponse.text("busy", status: 503, reason: "Service Unavailable") }
                if request.target.hasPrefix("/bare") {
                    let body = "first\r\n\r\nsecond"
                    return "HTTP/1.1 200 OK\nContent-Type: text/plain\nContent-Length: \(body.utf8.count)\n\n" + body
                }
                return ScriptedResponse.text("ok")
            }
        }
    }

    /// The `requestURL` of every record in a JSON Lines file.
    private static func recordedURLs(_ file: URL) throws -> [String] {
        let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["requestURL"] as? String
        }
    }

    /// The target URIs of the response records of `files` (names in `directory`), each file
    /// checked by warcio first.
    private static func archivedURLs(_ files: [String], in directory: URL) throws -> [String] {
        try files.flatMap { file in
            try WARCArchiveTests.checkAndIndex(file, in: directory).filter { $0.type == "response" }.compactMap(\.uri)
        }
    }

    private static func archives(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".warc.gz") }.sorted()
    }

    /// `--resume` appends to the archive of the run it continues: before, it truncated it, and
    /// the archive held only the URLs fetched after the resume while the records had them all.
    @Test func resumeAppendsToTheArchiveItContinues() throws {
        let server = try Self.server()
        defer { server.stop() }
        let directory = try WARCArchiveTests.makeDirectory("warc-resume")
        defer { try? FileManager.default.removeItem(at: directory) }
        let urls = (0..<8).map { server.url("/page?n=\($0)") }
        try Data(urls.prefix(3).map { $0 + "\n" }.joined().utf8).write(to: directory.appendingPathComponent("first"))
        try Data(urls.map { $0 + "\n" }.joined().utf8).write(to: directory.appendingPathComponent("all"))
        let result = try runShell("""
            "$UVFETCH" -q -i "$D/first" --jsonl "$D/r.jsonl" --warc "$D/a.warc.gz"; echo "first=$?"
            "$UVFETCH" -q -i "$D/all" --jsonl "$D/r.jsonl" --warc "$D/a.warc.gz" --resume; echo "resumed=$?"
            """, in: directory)
        #expect(result.stdout.contains("first=0") && result.stdout.contains("resumed=0"), "\(result.stdout) \(result.stderr)")
        #expect(try Self.recordedURLs(directory.appendingPathComponent("r.jsonl")).sorted() == urls.sorted())
        #expect(try Self.archivedURLs(["a.warc.gz"], in: directory).sorted() == urls.sorted())
        let index = try WARCArchiveTests.checkAndIndex("a.warc.gz", in: directory)
        #expect(index.filter { $0.type == "warcinfo" }.count == 2, "each run's warcinfo")
    }

    /// With rotation, a resumed run goes on after the highest numbered file and rewrites none
    /// before it (before, it wrote crawl-00000 again and left stale later files).
    @Test func resumeWithRotationContinuesTheNumbering() throws {
        let server = try Self.server()
        defer { server.stop() }
        let directory = try WARCArchiveTests.makeDirectory("warc-resume-rotate")
        defer { try? FileManager.default.removeItem(at: directory) }
        let urls = (0..<24).map { server.url("/page?n=\($0)") }
        try Data(urls.prefix(12).map { $0 + "\n" }.joined().utf8).write(to: directory.appendingPathComponent("first"))
        try Data(urls.map { $0 + "\n" }.joined().utf8).write(to: directory.appendingPathComponent("all"))
        let first = try runShell("""
            "$UVFETCH" -q --concurrency 2 -i "$D/first" --jsonl "$D/r.jsonl" --warc "$D/crawl.warc.gz" --warc-max-size 2K; echo "status=$?"
            """, in: directory)
        #expect(first.stdout.contains("status=0"), "\(first.stdout) \(first.stderr)")
        let earlier = try Self.archives(in: directory)
        #expect(earlier.count >= 2, "\(earlier)")
        let before = try earlier.dropLast().map { try Data(contentsOf: directory.appendingPathComponent($0)) }
        let resumed = try runShell("""
            "$UVFETCH" -q --concurrency 2 -i "$D/all" --jsonl "$D/r.jsonl" --warc "$D/crawl.warc.gz" --warc-max-size 2K --resume; echo "status=$?"
            """, in: directory)
        #expect(resumed.stdout.contains("status=0"), "\(resumed.stdout) \(resumed.stderr)")
        let files = try Self.archives(in: directory)
        #expect(files.count > earlier.count, "\(files)")
        for (serial, file) in files.enumerated() { #expect(file == String(format: "crawl-%05d.warc.gz", serial)) }
        for (file, bytes) in zip(earlier.dropLast(), before) {
            #expect(try Data(contentsOf: directory.appendingPathComponent(file)) == bytes, "\(file) was rewritten")
        }
        #expect(try Self.archivedURLs(files, in: directory).sorted() == urls.sorted())
    }

    /// A new run refuses an archive that is there (exit 64, the file untouched) unless told to
    /// add to it; `--warc-append` appends.
    @Test func aNewRunRefusesToReplaceAnArchive() throws {
        let server = try Self.server()
        defer { server.stop() }
        let directory = try WARCArchiveTests.makeDirectory("warc-refuse")
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try runShell("""
            "$UVFETCH" -q --warc "$D/a.warc.gz" \(server.url("/one")); echo "first=$?"
            cp "$D/a.warc.gz" "$D/copy"
            "$UVFETCH" -q --warc "$D/a.warc.gz" \(server.url("/two")); echo "again=$?"
            cmp -s "$D/a.warc.gz" "$D/copy"; echo "unchanged=$?"
            "$UVFETCH" -q --warc "$D/a.warc.gz" --warc-append \(server.url("/three")); echo "appended=$?"
            "$UVFETCH" -q --warc-append \(server.url("/four")); echo "alone=$?"
            """, in: directory)
        #expect(result.stdout.contains("first=0"), "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("again=\(ExitStatus.usage)"), "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("already holds an archive"), "\(result.stderr)")
        #expect(result.stderr.contains("--warc-append needs --warc"), "\(result.stderr)")
        #expect(result.stdout.contains("unchanged=0"), "\(result.stdout)")
        #expect(result.stdout.contains("appended=0"), "\(result.stdout) \(result.stderr)")
        #expect(try Self.archivedURLs(["a.warc.gz"], in: directory) == [server.url("/one"), server.url("/three")])
    }

    /// A run killed outright, then resumed, then resumed again: every archive passes warcio's
    /// check, and every URL is both recorded and archived (a URL whose record the kill lost is
    /// fetched again, so it may be archived twice: nothing is lost).
    @Test func killsAndResumesKeepTheArchiveReadable() throws {
        let server = try Self.server()
        defer { server.stop() }
        let directory = try WARCArchiveTests.makeDirectory("warc-kill")
        defer { try? FileManager.default.removeItem(at: directory) }
        let urls = (0..<40).map { server.url("/pause?n=\($0)") }
        try Data(urls.map { $0 + "\n" }.joined().utf8).write(to: directory.appendingPathComponent("all"))
        let result = try runShell("""
            run=(-q --concurrency 4 -i "$D/all" --jsonl "$D/r.jsonl" --warc "$D/a.warc.gz" --resume)
            "$UVFETCH" "${run[@]}" & pid=$!; sleep 0.7; kill -9 $pid; wait $pid; echo "killed=$?"
            "$UVFETCH" "${run[@]}" & pid=$!; sleep 0.5; kill -INT $pid; wait $pid; echo "interrupted=$?"
            "$UVFETCH" "${run[@]}"; echo "finished=$?"
            """, in: directory)
        #expect(result.stdout.contains("killed=137"), "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("interrupted=130"), "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("finished=0"), "\(result.stdout) \(result.stderr)")
        #expect(try Set(Self.recordedURLs(directory.appendingPathComponent("r.jsonl"))) == Set(urls))
        #expect(try Set(Self.archivedURLs(["a.warc.gz"], in: directory)) == Set(urls))
    }

    /// ^C and SIGTERM while URLs wait between retries, and a full disk: the archive holds
    /// exactly the URLs the records hold. Before, each try was archived as it ended, so a URL
    /// stopped between two tries, or whose record a failed write dropped, was archived without
    /// a record.
    @Test func archiveAndRecordsHoldTheSameURLsAfterAStop() throws {
        let server = try Self.server()
        defer { server.stop() }
        for signal in ["INT", "TERM"] {
            let directory = try WARCArchiveTests.makeDirectory("warc-signal")
            defer { try? FileManager.default.removeItem(at: directory) }
            let urls = (0..<60).map { server.url($0 % 3 == 0 ? "/fail?n=\($0)" : "/pause?n=\($0)") }
            try Data(urls.map { $0 + "\n" }.joined().utf8).write(to: directory.appendingPathComponent("all"))
            let result = try runShell("""
                "$UVFETCH" -q --concurrency 8 --retries 4 -i "$D/all" --jsonl "$D/r.jsonl" --warc "$D/a.warc.gz" &
                pid=$!
                # Stopped once the first records are out (not after a fixed time, which a loaded
                # machine may spend before the first one): the pauses keep the rest in flight.
                for _ in $(seq 600); do [ -s "$D/r.jsonl" ] && break; sleep 0.05; done
                kill -\(signal) $pid; wait $pid; echo "status=$?"
                """, in: directory)
            #expect(result.stdout.contains("status="), "\(result.stdout) \(result.stderr)")
            let recorded = try Self.recordedURLs(directory.appendingPathComponent("r.jsonl"))
            #expect(!recorded.isEmpty && recorded.count < urls.count, "stopped part-way: \(recorded.count)")
            #expect(try Set(Self.archivedURLs(["a.warc.gz"], in: directory)) == Set(recorded), "SIG\(signal)")
        }
    }

    @Test(.enabled(if: WriteErrorTests.canMountTmpfs))
    func aFullDiskLeavesTheSameURLsInArchiveAndRecords() throws {
        let server = try Self.server()
        defer { server.stop() }
        let directory = try WARCArchiveTests.makeDirectory("warc-both-full")
        defer { try? FileManager.default.removeItem(at: directory) }
        let urls = (0..<400).map { server.url("/page?n=\($0)") }
        try Data(urls.map { $0 + "\n" }.joined().utf8).write(to: directory.appendingPathComponent("all"))
        let result = try runShell("""
            mkdir "$D/small"
            unshare -m bash -c '
              mount -t tmpfs -o size=40k tmpfs "$D/small" &&
              "$UVFETCH" -q --concurrency 4 -i "$D/all" --jsonl "$D/small/r.jsonl" --warc "$D/small/a.warc.gz"; echo "full=$?"
              cp "$D/small/r.jsonl" "$D/small/a.warc.gz" "$D"/'
            "$UVFETCH" -q --jsonl /dev/full --warc "$D/b.warc.gz" \(server.url("/x")) \(server.url("/y")); echo "devfull=$?"
            """, in: directory)
        #expect(result.stdout.contains("full=\(ExitStatus.writeError)"), "\(result.stdout) \(result.stderr)")
        let recorded = try Self.recordedURLs(directory.appendingPathComponent("r.jsonl"))
        #expect(recorded.count > 10 && recorded.count < urls.count, "\(recorded.count)")
        #expect(try Set(Self.archivedURLs(["a.warc.gz"], in: directory)) == Set(recorded))
        // Records that cannot be written at all: no exchange stays in the archive.
        #expect(result.stdout.contains("devfull=\(ExitStatus.writeError)"), "\(result.stdout) \(result.stderr)")
        #expect(try Self.archivedURLs(["b.warc.gz"], in: directory).isEmpty)
    }

    /// A head whose lines end in bare LFs (which the client accepts): the payload digest is
    /// taken after its empty line, as warcio takes it, not at the CRLF CRLF in the body.
    @Test func aBareLFHeadGetsTheDigestWarcioComputes() throws {
        let server = try Self.server()
        defer { server.stop() }
        let directory = try WARCArchiveTests.makeDirectory("warc-bare-lf")
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try runShell("""
            "$UVFETCH" -q --warc "$D/a.warc.gz" \(server.url("/bare")); echo "status=$?"
            """, in: directory)
        #expect(result.stdout.contains("status=0"), "\(result.stdout) \(result.stderr)")
        #expect(try Self.archivedURLs(["a.warc.gz"], in: directory) == [server.url("/bare")])
        #expect(try WARCArchiveTests.payloads("a.warc.gz", in: directory).first?.payload == Data("first\r\n\r\nsecond".utf8))
    }
}

private extension ScriptedServer {
    /// `http://127.0.0.1:PORT/path`.
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }
}
