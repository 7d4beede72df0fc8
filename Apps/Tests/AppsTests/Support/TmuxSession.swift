import Foundation

/// A detached tmux session on a private server and socket, so no user's tmux is touched: how
/// uvfetch tests give it a real pseudo-terminal for standard output (the progress line, and
/// what it does to the input), reading the screen with `capture-pane` as a person would see it.
final class TmuxSession {
    let server: SupervisedProcess
    let socket: String
    let name = "uvfetch"

    init(width: Int, command: String) throws {
        // The server runs in the foreground (-D) under the tests' supervisor, which stops it
        // even if the test dies. Started as a daemon by a client instead, it would inherit
        // that client's pipes and keep them open for its whole life.
        let directory = try TestServers.makeTemporaryDirectory(prefix: "tmux")
        socket = directory + "/tmux.sock"
        server = try SupervisedProcess.launch(["/usr/bin/tmux", "-S", socket, "-D"], directory: directory)
        let deadline = monotonicSeconds() + 10
        while !FileManager.default.fileExists(atPath: socket) && monotonicSeconds() < deadline { usleep(20_000) }
        try tmux(["new-session", "-d", "-x", "\(width)", "-y", "30", "-s", name, command])
    }

    deinit { server.release() }

    /// The screen as text, one line per row.
    func screen() throws -> String { try tmux(["capture-pane", "-p", "-t", name]) }

    /// Types keys into the pane, as a person would (`C-c` for ^C).
    func sendKeys(_ keys: String) throws { try tmux(["send-keys", "-t", name, keys]) }

    /// Appends everything the pane prints from now on to `file`, escapes included.
    func recordRawOutput(to file: String) throws { try tmux(["pipe-pane", "-o", "-t", name, "cat >> '\(file)'"]) }

    /// Polls the screen until `condition` holds, for up to `timeout` seconds.
    func waitForScreen(timeout: Double = 20, _ condition: (String) -> Bool) throws -> String {
        let deadline = monotonicSeconds() + timeout
        var last = ""
        while monotonicSeconds() < deadline {
            last = try screen()
            if condition(last) { return last }
            usleep(50_000)
        }
        return last
    }

    @discardableResult
    private func tmux(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/tmux")
        process.arguments = ["-S", socket] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
