// The scripted HTTP/2 server (Tests/Scripts/h2_scripted_server.py, on Debian's python3-h2): one
// scenario per process, well-behaved or hostile, for the HTTP/2 fault tests.

import Foundation

/// A running scripted HTTP/2 server (h2c, prior knowledge) playing one scenario.
final class H2ScriptedServer: @unchecked Sendable {
    // @unchecked: immutable after init; the process handle is thread-safe.
    let port: Int
    let scenario: String
    private let process: SupervisedProcess

    /// This checkout's Tests/Scripts.
    static let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts")

    init(scenario: String) throws {
        let python = "/usr/bin/python3"
        guard access(python, X_OK) == 0 else { throw TestServerError(description: "\(python) is missing: run `make test`, which installs python3-h2") }
        let directory = try TestServers.makeTemporaryDirectory(prefix: "uvnetworking-h2scripted")
        let portFile = directory + "/port"
        let script = Self.scripts.appendingPathComponent("h2_scripted_server.py").path
        process = try SupervisedProcess.launch([python, script, "--port", "0", "--scenario", scenario, "--port-file", portFile], directory: directory)
        self.scenario = scenario
        // Generous: python's start-up on a machine busy compiling can take seconds.
        let deadline = monotonicSeconds() + 30
        var found: Int?
        while monotonicSeconds() < deadline, process.exitStatus == nil {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8), let value = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                found = value
                break
            }
            usleep(20_000)
        }
        guard let found else {
            let output = process.output()
            process.release()
            throw TestServerError(description: "the scripted HTTP/2 server (\(scenario)) did not start: \(output)")
        }
        port = found
    }

    func url(_ path: String = "/") -> String { "http://127.0.0.1:\(port)\(path)" }

    /// What the server wrote (its log and any Python traceback).
    func output() -> String { process.output() }

    func stop() { process.release() }

    deinit { process.release() }
}
