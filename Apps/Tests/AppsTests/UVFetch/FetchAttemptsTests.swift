import Foundation
import Synchronization
import Testing
import UVFetchCore

/// The records' `attempts` add up to the requests the server received: uvfetch's retries, and
/// the library's replays of a request whose reused connection the server closed as it arrived.
@Suite(.tags(.childProcess), .serialized) struct FetchAttemptsTests {
    @Test(arguments: [false, true])
    func attemptsSumToTheRequestsTheServerReceived(outDir: Bool) throws {
        let received = Atomic<Int>(0)
        // Each connection answers one request and closes as the next one arrives (the race
        // between a server's idle close and a client's reuse): the library replays that request
        // on a fresh connection. "/busy" is always 503, which --retries retries.
        let server = try ScriptedServer { connection in
            var answered = 0
            while true {
                guard let request = try? connection.readRequest(timeout: 10) else { return }
                received.add(1, ordering: .relaxed)
                if answered == 1 {
                    connection.close()
                    return
                }
                answered += 1
                let busy = request.target.hasPrefix("/busy")
                try connection.write(ScriptedResponse.text(busy ? "busy" : "ok", status: busy ? 503 : 200,
                                                           reason: busy ? "Service Unavailable" : "OK"))
            }
        }
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        let urls = (0..<16).map { $0 % 4 == 3 ? "\(base)/busy/\($0)" : "\(base)/ok/\($0)" }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("uvfetch-attempts-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let temporary = root.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = temporary.path
        var arguments = ["--concurrency", "1", "--retries", "2", "--jsonl", "-"]
        if outDir { arguments += ["--out-dir", root.appendingPathComponent("out").path] }
        let result = try runUVFetch(arguments + urls, environment: environment)
        // The 503 bodies of the tries retried and of the last ones are gone too.
        #expect((try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) == [])
        let records = result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(records.count == urls.count, "\(result.stdout) \(result.stderr)")
        let attempts = records.map { $0["attempts"] as? Int ?? 0 }
        #expect(attempts.reduce(0, +) == received.load(ordering: .relaxed), "attempts \(attempts)")
        // Every URL after the first went out twice on each try: once on the stale connection.
        #expect(attempts.dropFirst().allSatisfy { $0 >= 2 }, "attempts \(attempts)")
        let statuses = records.map { $0["status"] as? Int ?? 0 }
        #expect(statuses.filter { $0 == 503 }.count == 4 && statuses.filter { $0 == 200 }.count == 12)
    }
}
