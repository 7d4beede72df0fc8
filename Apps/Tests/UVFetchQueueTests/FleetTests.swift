import Foundation
import Testing

/// The fleet of docs/fleet.md on one machine: a database host, a web host and three worker
/// hosts, each a network namespace of the test's own joined by veth to one bridge
/// (`FleetNetwork`). The workers reach PostgreSQL and nginx only over those links, as three
/// machines in a rack would; one of them is SIGKILLed part way, and the other two finish its
/// URLs once its leases expire.
@Suite(.tags(.postgres), .serialized, .enabled(if: fleetUnavailableReason == nil, "\(fleetUnavailableReason ?? "")"))
struct FleetTests {
    static let urlCount = 20_000

    @Test func threeWorkersOnThreeHostsRecordEveryURLOnceThoughOneIsKilled() throws {
        let network = try FleetNetwork(workers: 3)
        defer { network.tearDown() }
        let cluster = try PostgresCluster(address: FleetNetwork.databaseAddress, port: 5432,
                                          namespace: network.execArguments(.database, []),
                                          trusting: "\(FleetNetwork.databaseAddress)/24")
        defer { cluster.stop() }
        let web = try FleetWebServer(network)
        defer { web.stop() }
        let db = try cluster.makeDatabase()
        let urls = (0..<Self.urlCount).map { "http://\(FleetNetwork.webAddress):\(FleetWebServer.port)/u/\($0)" }
        let list = try temporaryFile("fleet-urls.txt", Data(urls.map { $0 + "\n" }.joined().utf8))

        // Set up from a worker host: the database is reachable only over the bridge.
        for arguments in [["queue", "init", "--db", db], ["queue", "push", "--db", db, "-i", list.path]] {
            try network.run(in: .worker(1), [uvfetchPath] + arguments)
        }
        #expect(try count(cluster, db, "SELECT count(*) FROM uvfetch_urls WHERE state = 'pending'") == Self.urlCount)

        // A rate per worker keeps the run some seconds long, so that the kill lands in the
        // middle of it whatever the machine's speed; short leases, so that the killed
        // worker's URLs come back soon.
        func startWorker(_ n: Int) throws -> UVFetchChild {
            try UVFetchChild(["netns", "exec", network.name(.worker(n)), uvfetchPath, "worker", "--db", db, "-q",
                              "--batch-size", "100", "--concurrency", "32", "--rate-per-host", "800",
                              "--lease", "3", "--poll", "0.2"], executable: FleetNetwork.ip!)
        }
        let workers = try (1...3).map(startWorker)
        let doomed = workers[1]
        let doomedOwner = "%:\(doomed.process.processIdentifier):%"
        let recordedBeforeKill = try waitUntil(timeout: 120) {
            try count(cluster, db, "SELECT count(*) FROM uvfetch_results WHERE worker LIKE '\(doomedOwner)'") >= 300
        }
        #expect(recordedBeforeKill, "worker 2 recorded results before it was killed")
        doomed.signal(SIGKILL)
        doomed.wait(timeout: 10)
        let heldAtDeath = try count(cluster, db, "SELECT count(*) FROM uvfetch_urls WHERE state = 'leased' AND lease_owner LIKE '\(doomedOwner)'")
        #expect(heldAtDeath > 0, "the killed worker held leases")
        let remainingBeforeEnd = try count(cluster, db, "SELECT count(*) FROM uvfetch_urls WHERE state <> 'done'")
        #expect(remainingBeforeEnd > 0, "the kill came before the end of the run")

        for (index, worker) in workers.enumerated() where index != 1 {
            #expect(worker.wait(timeout: 300), "worker \(index + 1) finished")
            #expect(worker.status == 0, "worker \(index + 1): \(worker.stderr)")
        }

        // Every URL done and recorded exactly once, no lease left.
        #expect(try count(cluster, db, "SELECT count(*) FROM uvfetch_urls WHERE state = 'done'") == Self.urlCount)
        #expect(try count(cluster, db, "SELECT count(*) FROM uvfetch_results") == Self.urlCount)
        #expect(try count(cluster, db, "SELECT count(DISTINCT url_id) FROM uvfetch_results") == Self.urlCount)
        #expect(try count(cluster, db, "SELECT count(*) FROM uvfetch_urls WHERE lease_owner IS NOT NULL OR lease_expires_at IS NOT NULL") == 0)
        // All three recorded a share: the killed one before it died, the others the rest.
        let byWorker = try cluster.psql(db, "SELECT count(*) FROM uvfetch_results GROUP BY worker").split(separator: "\n")
        #expect(byWorker.count == 3, "\(byWorker)")
        // The results, as `queue results` gives them: one line per URL, each a 200.
        let results = try network.run(in: .worker(3), [uvfetchPath, "queue", "results", "--db", db], stdoutOnly: true)
        let recordedURLs = results.split(separator: "\n").compactMap { line -> String? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object["status"] as? Int == 200 else { return nil }
            return object["url"] as? String
        }
        // Sets compared by what is missing, not with ==: a failed == on 20,000 elements has
        // the testing library diff them, which takes minutes.
        #expect(recordedURLs.count == Self.urlCount)
        let unrecorded = Set(urls).subtracting(recordedURLs)
        #expect(unrecorded.isEmpty, "\(unrecorded.count) URLs without a 200 result, such as \(unrecorded.prefix(3))")

        // nginx saw every URL at least once; those the killed worker held and had not
        // recorded were fetched again (at-least-once fetch, exactly-once record).
        let fetched = web.requestedPaths()
        let unfetched = Set((0..<Self.urlCount).map { "/u/\($0)" }).subtracting(fetched)
        #expect(unfetched.isEmpty, "\(unfetched.count) URLs nginx never saw, such as \(unfetched.prefix(3))")
        #expect(fetched.count >= Self.urlCount)
        print("fleet: \(fetched.count - Self.urlCount) URLs fetched twice after the kill; \(heldAtDeath) leases held by the killed worker")
    }

    private func count(_ cluster: PostgresCluster, _ db: String, _ sql: String) throws -> Int {
        Int(try cluster.psql(db, sql).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }
}

/// Why the fleet cannot be set up here (not root, no PostgreSQL, nginx or `ip`), or nil.
let fleetUnavailableReason: String? = {
    if !PostgresCluster.isInstalled { return "PostgreSQL is not installed (scripts/install-deps.sh)" }
    if !FileManager.default.isExecutableFile(atPath: FleetWebServer.binary) { return "nginx is not installed (scripts/install-deps.sh)" }
    return FleetNetwork.unavailableReason
}()

/// nginx on the fleet's web host (192.0.2.20:8080), one foreground process: `/u/N` answers 200
/// with a short body, and every request's URI goes to an access log the test reads.
final class FleetWebServer {
    static let binary = "/usr/sbin/nginx"
    static let port = 8080
    private let directory: URL
    private let process = Process()

    init(_ network: FleetNetwork) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("uvfetch-fleet-web-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.path
        let config = """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(path)/nginx.pid;
            error_log \(path)/error.log warn;
            events { worker_connections 1024; }
            http {
                log_format uris '$request_uri';
                access_log \(path)/access.log uris;
                client_body_temp_path \(path)/body;
                proxy_temp_path \(path)/proxy;
                fastcgi_temp_path \(path)/fastcgi;
                uwsgi_temp_path \(path)/uwsgi;
                scgi_temp_path \(path)/scgi;
                keepalive_requests 100000;
                server {
                    listen \(FleetNetwork.webAddress):\(Self.port);
                    location /u/ { return 200 "fetched\\n"; }
                }
            }
            """
        try config.write(toFile: path + "/nginx.conf", atomically: true, encoding: .utf8)
        let arguments = network.execArguments(.web, [Self.binary, "-p", path + "/", "-c", path + "/nginx.conf"])
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Up once it answers from a worker host, over the bridge.
        let up = waitUntil(timeout: 20) {
            (try? network.run(in: .worker(1), ["/usr/bin/curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                                                "http://\(FleetNetwork.webAddress):\(Self.port)/u/probe"], stdoutOnly: true)) == "200"
        }
        guard up else {
            stop()
            throw FleetNetworkError("nginx did not come up on the web host: \((try? String(contentsOfFile: path + "/error.log", encoding: .utf8)) ?? "")")
        }
    }

    /// The paths requested so far, in order, the start-up probe left out.
    func requestedPaths() -> [String] {
        let log = (try? String(contentsOf: directory.appendingPathComponent("access.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").map(String.init).filter { $0 != "/u/probe" }
    }

    func stop() {
        if process.isRunning {
            // SIGKILL: nginx without a master process keeps SIGTERM blocked. Its access log is
            // unbuffered, so nothing it wrote is lost.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }
}
