import Foundation
import LoopbackHTTPServer
import Testing

/// A database with the queue's tables and `count` URLs of a LoopbackHTTPServer pushed
/// (`/items/N`; every `failEvery`-th one `/status/404` instead), for the worker's tests.
final class QueueFixture {
    let cluster: PostgresCluster
    let db: String
    let server = LoopbackHTTPServer()
    let port: Int
    /// The URLs pushed, in order.
    let urls: [String]
    /// The list as a file.
    let list: URL

    init(count: Int, failEvery: Int? = nil) throws {
        cluster = try SharedCluster.get()
        db = try cluster.makeDatabase()
        let port = try server.start()
        self.port = port
        urls = (0..<count).map { index in
            if let failEvery, index % failEvery == failEvery - 1 { return "http://127.0.0.1:\(port)/status/404?i=\(index)" }
            return "http://127.0.0.1:\(port)/items/\(index)"
        }
        list = try temporaryFile("urls.txt", Data(urls.map { $0 + "\n" }.joined().utf8))
        let initialized = try uvfetch(["queue", "init", "--db", db])
        guard initialized.status == 0 else { throw ClusterError("queue init: \(initialized.stderr)") }
        let pushed = try uvfetch(["queue", "push", "--db", db, "-i", list.path])
        guard pushed.status == 0 else { throw ClusterError("queue push: \(pushed.stderr)") }
    }

    deinit { server.stop() }

    /// One number from SQL.
    func count(_ sql: String) throws -> Int {
        Int(try cluster.psql(db, sql).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// URLs by state: pending, leased, done, failed.
    func states() throws -> [String: Int] {
        var states: [String: Int] = [:]
        for line in try cluster.psql(db, "SELECT state, count(*) FROM uvfetch_urls GROUP BY state").split(separator: "\n") {
            let parts = line.split(separator: "|")
            states[String(parts[0])] = Int(parts[1])
        }
        return states
    }

    /// `uvfetch queue results` as parsed objects, by URL; fails the test on a URL seen twice.
    func results() throws -> (lines: [String], byURL: [String: [String: Any]]) {
        let run = try uvfetch(["queue", "results", "--db", db])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        var byURL: [String: [String: Any]] = [:]
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            let url = object["url"] as! String
            #expect(byURL[url] == nil, "two results for \(url)")
            byURL[url] = object
        }
        return (lines, byURL)
    }

    /// The "db round trips: N (X per URL)" figure from a worker's standard error.
    static func roundTripsPerURL(_ stderr: String) -> Double? {
        guard let range = stderr.range(of: #"db round trips: \d+ \(([0-9.]+) per URL\)"#, options: .regularExpression) else { return nil }
        let text = stderr[range]
        let open = text.firstIndex(of: "(")!
        return Double(text[text.index(after: open)...].prefix { $0 != " " })
    }
}
