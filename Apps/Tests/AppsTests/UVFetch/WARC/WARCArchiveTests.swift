import Foundation
import Testing
import UVFetchCore

/// `uvfetch --warc` as a child process against nginx and httpbin on loopback, its archives read
/// by warcio (PyPI), a reader no one here wrote: `warcio check` verifies every record's digests
/// (Tests/Scripts/warc_check.py allows only its complaint about chunked payloads, which it digests
/// with their framing),
/// `warcio index` lists them, and warcio's record parser gives the payloads as stored.
@Suite(.tags(.namespace), .serialized) struct WARCArchiveTests {
    /// warcio's command, which scripts/install-deps.sh installs; a clear failure when missing.
    static let warcioHint = "warcio is missing: run scripts/install-deps.sh (make test does), which pip-installs it"

    /// One record as `warcio index` lists it.
    struct IndexEntry: Decodable, Equatable {
        var type: String
        var uri: String?
        var status: String?
        var offset: String

        enum CodingKeys: String, CodingKey {
            case type = "warc-type", uri = "warc-target-uri", status = "http:status", offset
        }
    }

    /// `warcio check` (must pass, chunked payloads aside: warc_check.py) and `warcio index` of
    /// `file`, a name in `directory`.
    static func checkAndIndex(_ file: String, in directory: URL) throws -> [IndexEntry] {
        let result = try runShell("""
            command -v warcio >/dev/null || { echo "\(Self.warcioHint)" >&2; exit 97; }
            python3 "$WARC_CHECK" "$D/\(file)" || { echo "check failed: $?" >&2; exit 98; }
            warcio index -f warc-type,warc-target-uri,http:status,offset "$D/\(file)"
            """, in: directory)
        try #require(result.status != 97, "\(result.stderr)")
        #expect(result.status == 0, "warcio check \(file): \(result.stdout) \(result.stderr)")
        return try result.stdout.split(separator: "\n").map { try JSONDecoder().decode(IndexEntry.self, from: Data($0.utf8)) }
    }

    /// For each response record in `file` (a name in `directory`), as warcio parses it: the target URI, the status, and
    /// the payload exactly as stored (warcio's raw stream: still chunked, still compressed), hex.
    static func payloads(_ file: String, in directory: URL) throws -> [(uri: String, status: String, payload: Data)] {
        let script = """
            import sys
            from warcio.archiveiterator import ArchiveIterator
            with open(sys.argv[1], 'rb') as stream:
                for record in ArchiveIterator(stream):
                    if record.rec_type == 'response':
                        print(record.rec_headers.get_header('WARC-Target-URI'), record.http_headers.get_statuscode(),
                              record.raw_stream.read().hex() or '-')
            """
        let result = try runShell("python3 -c \"$(cat <<'PY'\n\(script)\nPY\n)\" \"$D/\(file)\"", in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").map { line in
            let parts = line.split(separator: " ").map(String.init)
            let hex = parts[2] == "-" ? "" : parts[2]
            let bytes = stride(from: 0, to: hex.count, by: 2).map { offset -> UInt8 in
                let start = hex.index(hex.startIndex, offsetBy: offset)
                return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
            }
            return (parts[0], parts[1], Data(bytes))
        }
    }

    static func makeDirectory(_ name: String) throws -> URL {
        let directory = temporaryFile(name)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func everyURLIsArchivedWithItsStatusAndReadersAgree() throws {
        let nginx = try TestServers.nginx(), httpbin = try TestServers.httpbin()
        let directory = try Self.makeDirectory("warc-archive")
        defer { try? FileManager.default.removeItem(at: directory) }
        let refused = "http://127.0.0.1:\(try TestServers.freeLoopbackPort())/refused"
        let urls = [nginx.baseURL + "/hello", nginx.baseURL + "/chunked", nginx.baseURL + "/no-content",
                    nginx.baseURL + "/missing", httpbin.baseURL + "/gzip", httpbin.baseURL + "/stream/3",
                    httpbin.baseURL + "/redirect/2", refused]
        // --jsonl and --out-dir alongside, as a crawl would run.
        let result = try runShell("""
            "$UVFETCH" -q --warc "$D/crawl.warc.gz" --jsonl "$D/records.jsonl" --out-dir "$D/bodies" \(urls.joined(separator: " "))
            echo "status=$?"
            """, in: directory)
        #expect(result.stdout.contains("status=\(ExitStatus.someFailed)"), "\(result.stdout) \(result.stderr)")
        let records = try String(contentsOf: directory.appendingPathComponent("records.jsonl"), encoding: .utf8)
        #expect(records.split(separator: "\n").count == urls.count)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("bodies/hello").path))

        let index = try Self.checkAndIndex("crawl.warc.gz", in: directory)
        #expect(index.first?.type == "warcinfo")
        #expect(index.first?.offset == "0")
        // The warcinfo says who fetched and whether robots.txt was obeyed, as crawlers write it.
        let info = try runShell(#"zcat "$D/crawl.warc.gz" | head -c 2000; true"#, in: directory).stdout
        #expect(info.contains("http-header-user-agent: uvfetch\r\n") && info.contains("robots: ignore\r\n"), "\(info)")
        let responses = index.filter { $0.type == "response" }
        #expect(index.filter { $0.type == "request" }.map(\.uri) == responses.map(\.uri))
        let statuses = Dictionary(responses.map { ($0.uri ?? "", $0.status ?? "") }, uniquingKeysWith: { first, _ in first })
        #expect(statuses[nginx.baseURL + "/hello"] == "200")
        #expect(statuses[nginx.baseURL + "/chunked"] == "200")
        #expect(statuses[nginx.baseURL + "/no-content"] == "204")
        #expect(statuses[nginx.baseURL + "/missing"] == "404")
        #expect(statuses[httpbin.baseURL + "/gzip"] == "200")
        #expect(statuses[httpbin.baseURL + "/stream/3"] == "200")
        // The redirect chain: one pair per exchange.
        #expect(statuses[httpbin.baseURL + "/redirect/2"] == "302")
        #expect(statuses[httpbin.baseURL + "/get"] == "200")
        #expect(responses.count == urls.count - 1 + 2)
        // The refused URL got no response, so no records.
        #expect(!index.contains { $0.uri == refused })
        // Offsets increase: each record is a gzip member a reader can seek to.
        let offsets = index.compactMap { Int($0.offset) }
        #expect(offsets == offsets.sorted() && Set(offsets).count == offsets.count)

        let stored = try Self.payloads("crawl.warc.gz", in: directory)
        let gzip = try #require(stored.first { $0.uri == httpbin.baseURL + "/gzip" })
        #expect(gzip.payload.prefix(2) == Data([0x1f, 0x8b]), "kept compressed")
        let inflated = try gunzipped(gzip.payload)
        let json = try JSONSerialization.jsonObject(with: inflated) as? [String: Any]
        #expect(json?["gzipped"] as? Bool == true, "\(String(decoding: inflated, as: UTF8.self))")
        let chunked = try #require(stored.first { $0.uri == nginx.baseURL + "/chunked" })
        #expect(try dechunked(chunked.payload) == Data(NginxServer.helloBody.utf8))
        let stream = try #require(stored.first { $0.uri == httpbin.baseURL + "/stream/3" })
        #expect(try dechunked(stream.payload).split(separator: UInt8(ascii: "\n")).count == 3)
    }

    /// HTTP/2 exchanges are archived in HTTP/1.1 form with `WARC-Protocol: h2`, as web
    /// archives keep them; warcio reads them like any other.
    @Test func http2ExchangesAreArchivedInHTTP11FormMarkedH2() throws {
        let server = try TestServers.nghttpd()
        let directory = try Self.makeDirectory("warc-h2")
        defer { try? FileManager.default.removeItem(at: directory) }
        // Small bodies: `payloads` reads them back through hex.
        let urls = [server.url("/hello.txt").absoluteString, server.url("/missing").absoluteString]
        let result = try runShell("""
            "$UVFETCH" -q --http2-prior-knowledge --warc "$D/h2.warc.gz" \(urls.joined(separator: " "))
            echo "status=$?"
            """, in: directory)
        #expect(result.stdout.contains("status=\(ExitStatus.someFailed)"), "the 404: \(result.stdout) \(result.stderr)")
        let index = try Self.checkAndIndex("h2.warc.gz", in: directory)
        let responses = index.filter { $0.type == "response" }
        #expect(responses.map(\.uri) == urls.map(Optional.init) || Set(responses.compactMap(\.uri)) == Set(urls))
        #expect(responses.compactMap(\.status).sorted() == ["200", "404"])
        let stored = try Self.payloads("h2.warc.gz", in: directory)
        let hello = try #require(stored.first { $0.uri == urls[0] })
        #expect(hello.payload == Data("hello over h2\n".utf8))
        let marked = try runShell("""
            gzip -dc "$D/h2.warc.gz" | grep -c '^WARC-Protocol: h2'
            """, in: directory)
        #expect(marked.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "4", "request and response of each: \(marked.stdout)")
    }

    @Test func rotatedFilesAreEachValidAndTogetherHoldEveryURL() throws {
        let nginx = try TestServers.nginx()
        let directory = try Self.makeDirectory("warc-rotation")
        defer { try? FileManager.default.removeItem(at: directory) }
        let urls = (0..<12).map { _ in nginx.baseURL + "/hello" } + [nginx.baseURL + "/large"]
        let result = try runShell("""
            "$UVFETCH" -q --concurrency 2 --warc "$D/crawl.warc.gz" --warc-max-size 2K \(urls.joined(separator: " ")); echo "status=$?"
            """, in: directory)
        #expect(result.stdout.contains("status=0"), "\(result.stdout) \(result.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".warc.gz") }.sorted()
        #expect(files.count >= 3, "\(files)")
        #expect(files.first == "crawl-00000.warc.gz")
        #expect(!files.contains("crawl.warc.gz"))
        var responses = 0
        for (serial, file) in files.enumerated() {
            #expect(file == String(format: "crawl-%05d.warc.gz", serial))
            let index = try Self.checkAndIndex(file, in: directory)
            #expect(index.first?.type == "warcinfo", "\(file)")
            #expect(index.filter { $0.type == "warcinfo" }.count == 1)
            responses += index.filter { $0.type == "response" && $0.status == "200" }.count
        }
        #expect(responses == urls.count)
    }

    @Test func headIsArchivedAsItsHeadAlone() throws {
        let nginx = try TestServers.nginx()
        let directory = try Self.makeDirectory("warc-head")
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try runShell("""
            "$UVFETCH" -q -X HEAD --warc "$D/head.warc.gz" \(nginx.baseURL)/hello; echo "status=$?"
            """, in: directory)
        #expect(result.stdout.contains("status=0"), "\(result.stdout) \(result.stderr)")
        let index = try Self.checkAndIndex("head.warc.gz", in: directory)
        #expect(index.map(\.type) == ["warcinfo", "request", "response"])
        #expect(index.last?.status == "200")
        #expect(try Self.payloads("head.warc.gz", in: directory).first?.payload.isEmpty == true)
    }

    /// Every try is archived: a retried 503 and the 503 after it.
    @Test func retriedTriesAreEachArchived() throws {
        let httpbin = try TestServers.httpbin()
        let directory = try Self.makeDirectory("warc-retry")
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try runShell("""
            "$UVFETCH" -q --retries 1 --warc "$D/retry.warc.gz" \(httpbin.baseURL)/status/503; echo "status=$?"
            """, in: directory)
        #expect(result.stdout.contains("status=\(ExitStatus.someFailed)"), "\(result.stdout) \(result.stderr)")
        let index = try Self.checkAndIndex("retry.warc.gz", in: directory)
        #expect(index.filter { $0.type == "response" }.map(\.status) == ["503", "503"])
    }

    @Test(.enabled(if: WriteErrorTests.devFullRefusesWrites))
    func devFullEndsTheRunWithAWriteError() throws {
        let nginx = try TestServers.nginx()
        let result = try runShell("""
            "$UVFETCH" -q --warc /dev/full \(nginx.baseURL)/hello; echo "status=$?"
            """)
        #expect(result.stdout.contains("status=\(ExitStatus.writeError)"), "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("uvfetch: write error on /dev/full: No space left on device"), "\(result.stderr)")
        #expect(!result.stderr.contains("Fatal error"), "\(result.stderr)")
    }

    @Test func aFileThatCannotBeCreatedIsAUsageError() throws {
        let nginx = try TestServers.nginx()
        let result = try runShell("""
            "$UVFETCH" -q --warc "$D/no/such/dir/a.warc.gz" \(nginx.baseURL)/hello; echo "status=$?"
            "$UVFETCH" -q --warc - \(nginx.baseURL)/hello; echo "status=$?"
            "$UVFETCH" -q --warc-max-size 1M \(nginx.baseURL)/hello; echo "status=$?"
            "$UVFETCH" -q --warc "$D/a.warc.gz" --warc-max-size 12Q \(nginx.baseURL)/hello; echo "status=$?"
            """)
        let statuses = result.stdout.split(separator: "\n").filter { $0.hasPrefix("status=") }
        #expect(statuses == Array(repeating: "status=\(ExitStatus.usage)", count: 4), "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("cannot create"), "\(result.stderr)")
        #expect(result.stderr.contains("a WARC file cannot be standard output"), "\(result.stderr)")
        #expect(result.stderr.contains("--warc-max-size needs --warc"), "\(result.stderr)")
    }

    /// A read-only file system, and one that fills up mid-run: the archive written before the
    /// failure passes warcio's check, whole records only, and the run exits 23.
    @Test(.enabled(if: WriteErrorTests.canMountTmpfs))
    func aFullOrReadOnlyFileSystemKeepsWhatWasWrittenValid() throws {
        let nginx = try TestServers.nginx()
        let directory = try Self.makeDirectory("warc-full")
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = (0..<300).map { _ in nginx.baseURL + "/hello" }.joined(separator: "\n")
        let result = try runShell("""
            printf '%s\\n' "\(list)" > "$D/urls"; mkdir "$D/small" "$D/ro"
            unshare -m bash -c '
              mount -t tmpfs -o ro tmpfs "$D/ro" && { "$UVFETCH" -q --warc "$D/ro/a.warc.gz" \(nginx.baseURL)/hello; echo "ro=$?"; }
              mount -t tmpfs -o size=24k tmpfs "$D/small" &&
              "$UVFETCH" -q --concurrency 1 -i "$D/urls" --warc "$D/small/a.warc.gz"; echo "full=$?"
              cp "$D/small/a.warc.gz" "$D/kept.warc.gz"'
            """, in: directory)
        #expect(result.stdout.contains("ro=\(ExitStatus.usage)"), "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("cannot create \(directory.path)/ro/a.warc.gz: Read-only file system"), "\(result.stderr)")
        #expect(result.stdout.contains("full=\(ExitStatus.writeError)"), "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("a.warc.gz: No space left on device"), "\(result.stderr)")
        let index = try Self.checkAndIndex("kept.warc.gz", in: directory)
        let responses = index.filter { $0.type == "response" }
        #expect(responses.count > 5, "some exchanges before the disk filled: \(responses.count)")
        #expect(index.filter { $0.type == "request" }.count == responses.count)
    }

    /// --warc-dedup against nginx: its /chunked serves /hello's content in chunks, so with the
    /// payload digest taken without the chunking the content is archived once, at the first
    /// URL, and each later response of it (either URL, listed twice) is a revisit naming that
    /// first record, which warcio reads and checks.
    @Test func aPayloadArchivedBeforeIsARevisit() throws {
        let nginx = try TestServers.nginx()
        let directory = try Self.makeDirectory("warc-dedup")
        defer { try? FileManager.default.removeItem(at: directory) }
        let urls = [nginx.baseURL + "/hello", nginx.baseURL + "/chunked", nginx.baseURL + "/hello", nginx.baseURL + "/chunked"]
        let result = try runShell("""
            "$UVFETCH" -q --concurrency 1 --warc "$D/dedup.warc.gz" --warc-dedup \(urls.joined(separator: " ")) || exit 90
            python3 "$WARC_CHECK" "$D/dedup.warc.gz" || exit 98
            warcio index -f warc-type,warc-target-uri,warc-record-id,warc-refers-to,warc-refers-to-target-uri,warc-profile "$D/dedup.warc.gz"
            """, in: directory)
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        let entries = result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String]
        }
        let responses = entries.filter { $0["warc-type"] == "response" }
        let revisits = entries.filter { $0["warc-type"] == "revisit" }
        #expect(responses.count == 1 && revisits.count == 3, "\(entries)")
        #expect(responses.first?["warc-target-uri"] == nginx.baseURL + "/hello")
        for revisit in revisits {
            #expect(revisit["warc-refers-to"] == responses.first?["warc-record-id"])
            #expect(revisit["warc-refers-to-target-uri"] == nginx.baseURL + "/hello")
            #expect(revisit["warc-profile"] == "http://netpreserve.org/warc/1.1/revisits/identical-payload-digest")
        }
        #expect(revisits.map { $0["warc-target-uri"] } == urls.dropFirst().map { Optional($0) })
    }

    /// --cdxj: each file's index, beside it, is what cdxj-indexer (PyPI) writes for the same
    /// file, line for line: responses of every kind (gzip, chunked, redirects, a 404, an empty
    /// 204), revisits, and files rotated by --warc-max-size.
    @Test func theCDXJIndexIsWhatCdxjIndexerWrites() throws {
        let nginx = try TestServers.nginx(), httpbin = try TestServers.httpbin()
        let directory = try Self.makeDirectory("warc-cdxj")
        defer { try? FileManager.default.removeItem(at: directory) }
        let urls = [nginx.baseURL + "/hello", nginx.baseURL + "/chunked", nginx.baseURL + "/no-content", nginx.baseURL + "/missing",
                    httpbin.baseURL + "/gzip", httpbin.baseURL + "/redirect/2", httpbin.baseURL + "/anything?b=2&a=1",
                    httpbin.baseURL + "/stream/3", nginx.baseURL + "/hello"]
        let result = try runShell("""
            command -v cdxj-indexer >/dev/null || { echo "cdxj-indexer is missing: run scripts/install-deps.sh" >&2; exit 97; }
            "$UVFETCH" -q --concurrency 1 --warc "$D/c.warc.gz" --warc-max-size 4K --warc-dedup --cdxj \(urls.map { "'\($0)'" }.joined(separator: " "))
            for file in "$D"/c-*.warc.gz; do
              test -f "$file.cdxj" || { echo "no index beside $file" >&2; exit 96; }
              cdxj-indexer "$file" > "$file.theirs" || exit 95
              cmp "$file.cdxj" "$file.theirs" || { diff "$file.cdxj" "$file.theirs" >&2; exit 94; }
              cat "$file.cdxj"
            done
            """, in: directory)
        try #require(result.status != 97, "\(result.stderr)")
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        // The index lines (the run's summary is on the same standard output).
        let lines = result.stdout.split(separator: "\n").filter { $0.contains("{\"url\": ") }
        // A line per response or revisit: the URLs, the redirects' hops, nothing for requests.
        #expect(lines.count == urls.count + 2, "\(result.stdout)")
        #expect(lines.contains { $0.contains("\"mime\": \"warc/revisit\"") })
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".warc.gz") }
        #expect(files.count > 1, "rotated: \(files)")
    }

    /// --since with --warc: a 304 to an earlier run's validators is archived as a
    /// server-not-modified revisit of that run's capture, which the earlier record names.
    @Test func a304UnderSinceIsARevisitOfTheEarlierCapture() throws {
        // httpbin's /etag/v1 sends ETag "v1" and answers a matching If-None-Match with a 304.
        let httpbin = try TestServers.httpbin()
        let directory = try Self.makeDirectory("warc-since")
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = httpbin.baseURL + "/etag/v1"
        let result = try runShell("""
            "$UVFETCH" -q --warc "$D/first.warc.gz" --jsonl "$D/first.jsonl" '\(url)' || exit 90
            "$UVFETCH" -q --warc "$D/second.warc.gz" --since "$D/first.jsonl" --jsonl "$D/second.jsonl" '\(url)' || exit 91
            python3 "$WARC_CHECK" "$D/first.warc.gz" && python3 "$WARC_CHECK" "$D/second.warc.gz" || exit 98
            warcio index -f warc-type,warc-record-id,warc-date "$D/first.warc.gz"
            echo ---
            warcio index -f warc-type,warc-record-id,warc-profile,warc-refers-to,warc-refers-to-target-uri,warc-refers-to-date,http:status "$D/second.warc.gz"
            echo ---
            cat "$D/first.jsonl" "$D/second.jsonl"
            """, in: directory)
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        let parts = result.stdout.components(separatedBy: "---\n")
        try #require(parts.count == 3, "\(result.stdout)")
        func objects(_ text: String) -> [[String: Any]] {
            text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }
        let first = objects(parts[0]).first { $0["warc-type"] as? String == "response" }
        let revisit = objects(parts[1]).first { $0["warc-type"] as? String == "revisit" }
        let records = objects(parts[2])
        try #require(records.count == 2)
        let capture = records[0]["capture"] as? [String: Any]
        #expect(capture?["recordID"] as? String == first?["warc-record-id"] as? String)
        #expect(capture?["date"] as? String == first?["warc-date"] as? String)
        #expect(records[1]["notModified"] as? Bool == true)
        #expect(revisit?["warc-profile"] as? String == "http://netpreserve.org/warc/1.1/revisits/server-not-modified")
        #expect(revisit?["http:status"] as? String == "304")
        #expect(revisit?["warc-refers-to"] as? String == first?["warc-record-id"] as? String)
        #expect(revisit?["warc-refers-to-date"] as? String == first?["warc-date"] as? String)
        #expect(revisit?["warc-refers-to-target-uri"] as? String == url)
        // The second run's record names its own capture: the revisit.
        #expect((records[1]["capture"] as? [String: Any])?["recordID"] as? String == revisit?["warc-record-id"] as? String)
    }
}
