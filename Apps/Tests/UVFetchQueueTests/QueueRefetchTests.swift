import Foundation
import Testing

/// Conditional refetch across the fleet: the queue keeps each URL's validators, `queue push
/// --refetch` puts finished URLs back, and whichever worker claims one asks with
/// If-None-Match / If-Modified-Since, so an unchanged resource answers 304.
@Suite(.tags(.postgres), .serialized, .enabled(if: PostgresCluster.isInstalled, "PostgreSQL is not installed (scripts/install-deps.sh)"))
struct QueueRefetchTests {
    /// A python3 server: `/r/N` has ETag `"vN"` and a fixed Last-Modified, and answers 304 when
    /// If-None-Match names that ETag (or, without it, If-Modified-Since names that date);
    /// `/plain` has no validators. Each request's path and conditional fields go to the log.
    private final class ConditionalServer {
        let process = Process()
        let port: Int
        let log: URL

        static let script = #"""
        import http.server, sys
        log = open(sys.argv[2], "a")
        DATE = "Tue, 01 Dec 2026 10:00:00 GMT"
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *args): pass
            def do_GET(self):
                inm, ims = self.headers.get("If-None-Match"), self.headers.get("If-Modified-Since")
                log.write(f"{self.path}\t{inm}\t{ims}\n"); log.flush()
                if self.path.startswith("/r/"):
                    etag = '"v' + self.path[3:] + '"'
                    if inm == etag or (inm is None and ims == DATE):
                        self.send_response(304); self.send_header("ETag", etag); self.end_headers(); return
                    validators = [("ETag", etag), ("Last-Modified", DATE)]
                else:
                    validators = []
                body = b"body of " + self.path.encode()
                self.send_response(200)
                for name, value in validators: self.send_header(name, value)
                self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        with open(sys.argv[1], "w") as f: f.write(str(server.server_address[1]))
        server.serve_forever()
        """#

        init() throws {
            let portFile = try temporaryFile("port", Data())
            try FileManager.default.removeItem(at: portFile)
            log = try temporaryFile("requests.log", Data())
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = ["-c", Self.script, portFile.path, log.path]
            try process.run()
            var port: Int?
            _ = waitUntil(timeout: 10) {
                port = (try? String(contentsOf: portFile, encoding: .utf8)).flatMap { Int($0) }
                return port != nil
            }
            guard let port else { throw ClusterError("the conditional server did not start") }
            self.port = port
        }

        deinit {
            // SIGKILL: the test process may ignore SIGTERM, and its children inherit that.
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }

        /// (path, If-None-Match, If-Modified-Since) of every request so far; "None" for absent.
        func requests() throws -> [(path: String, ifNoneMatch: String, ifModifiedSince: String)] {
            try String(contentsOf: log, encoding: .utf8).split(separator: "\n").map { line in
                let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                return (fields[0], fields[1], fields[2])
            }
        }
    }

    @Test func aURLPushedAgainIsFetchedConditionallyByAnyWorker() throws {
        let server = try ConditionalServer()
        let cluster = try SharedCluster.get()
        let db = try cluster.makeDatabase()
        #expect(try uvfetch(["queue", "init", "--db", db]).status == 0)
        let paths = ["/r/1", "/r/2", "/r/3", "/plain"]
        let list = try temporaryFile("urls.txt", Data(paths.map { "http://127.0.0.1:\(server.port)\($0)\n" }.joined().utf8))
        #expect(try uvfetch(["queue", "push", "--db", db, "-i", list.path]).stdout == "4 pushed, 0 duplicates, 0 malformed\n")

        let first = try uvfetch(["worker", "--db", db, "-q"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try server.requests().allSatisfy { $0.ifNoneMatch == "None" && $0.ifModifiedSince == "None" })
        let kept = try cluster.psql(db, "SELECT convert_from(url, 'UTF8') || ' ' || coalesce(etag, '-') || ' ' || coalesce(last_modified, '-') FROM uvfetch_urls ORDER BY id")
        #expect(kept.split(separator: "\n").map { String($0.split(separator: " ", maxSplits: 1)[1]) }
                == ["\"v1\" Tue, 01 Dec 2026 10:00:00 GMT", "\"v2\" Tue, 01 Dec 2026 10:00:00 GMT",
                    "\"v3\" Tue, 01 Dec 2026 10:00:00 GMT", "- -"], "\(kept)")

        // Pushed again: without --refetch nothing changes; with it, the finished URLs go back.
        #expect(try uvfetch(["queue", "push", "--db", db, "-i", list.path]).stdout == "0 pushed, 4 duplicates, 0 malformed\n")
        let again = try uvfetch(["queue", "push", "--db", db, "-i", list.path, "--refetch"])
        #expect(again.stdout == "0 pushed, 4 requeued, 0 duplicates, 0 malformed\n", "\(again.stdout) \(again.stderr)")
        let states = try cluster.psql(db, "SELECT state || ' ' || attempts FROM uvfetch_urls ORDER BY id")
        #expect(states == "pending 0\npending 0\npending 0\npending 0\n", "\(states)")

        // Another worker (a new process, another owner) asks with what the queue kept.
        let second = try uvfetch(["worker", "--db", db, "-q"])
        #expect(second.status == 0, "304 to a conditional request is a success: \(second.stderr)")
        let asked = try server.requests().dropFirst(4)
        #expect(asked.count == 4)
        for request in asked {
            if request.path == "/plain" {
                #expect(request.ifNoneMatch == "None" && request.ifModifiedSince == "None")
            } else {
                #expect(request.ifNoneMatch == "\"v\(request.path.dropFirst(3))\"", "\(request)")
                #expect(request.ifModifiedSince == "Tue, 01 Dec 2026 10:00:00 GMT")
            }
        }
        // One result a URL, the new one: 304s, not modified, validators kept for the next time.
        #expect(try cluster.psql(db, "SELECT count(*) FROM uvfetch_results") == "4\n")
        let results = try uvfetch(["queue", "results", "--db", db]).stdout.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
        #expect(results.count == 4)
        for record in results {
            let plain = (record["url"] as? String)?.hasSuffix("/plain") == true
            #expect(record["status"] as? Int == (plain ? 200 : 304), "\(record)")
            #expect(record["notModified"] as? Bool == !plain, "\(record)")
        }
        #expect(try cluster.psql(db, "SELECT count(*) FROM uvfetch_urls WHERE state = 'done' AND etag IS NOT NULL") == "3\n")
    }
}
