import Foundation
import Glibc

/// How a `uvfetch` whose standard output was a pipe ended.
struct PipedRun {
    /// The signal that killed it, or nil if it exited.
    var signal: Int32?
    /// Its exit status, or nil if a signal killed it.
    var exitStatus: Int32?
    /// What it wrote on standard error.
    var stderr: String
    /// The lines read from the pipe before it was closed.
    var lines: [String]
}

/// Runs `uvfetch arguments...` with standard output a pipe of which this process reads
/// `readingLines` lines (none: the read end is closed before the child starts writing) and
/// then closes the read end, as `uvfetch ... | head -1` does. The child starts with SIGPIPE at
/// its default, whatever this process does with it, or ignored (`ignoringSIGPIPE`, as a shell
/// after `trap '' PIPE` starts it). Killed after `timeout` seconds.
func runWithClosingPipe(_ arguments: [String], readingLines: Int, ignoringSIGPIPE: Bool, timeout: Double = 60) throws -> PipedRun {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { throw PipedChildError("pipe failed") }
    let (readEnd, writeEnd) = (fds[0], fds[1])
    let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("uvfetch-piped-\(UUID().uuidString).err")
    defer { try? FileManager.default.removeItem(at: errorFile) }

    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, writeEnd, STDOUT_FILENO)
    posix_spawn_file_actions_addclose(&actions, readEnd)
    posix_spawn_file_actions_addclose(&actions, writeEnd)
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errorFile.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    // SIGPIPE at its default and no signal blocked, whatever this test process has done.
    var defaults = sigset_t(), mask = sigset_t()
    sigemptyset(&defaults)
    sigaddset(&defaults, SIGPIPE)
    sigemptyset(&mask)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setsigmask(&attributes, &mask)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

    // A shell ignores it for the child as `trap '' PIPE` does: an ignored signal stays ignored
    // across exec.
    let argv = ignoringSIGPIPE ? ["/bin/sh", "-c", "trap '' PIPE; exec \"$0\" \"$@\"", uvfetchPath] + arguments : [uvfetchPath] + arguments
    var cArguments = argv.map { strdup($0) } + [nil]
    defer { cArguments.forEach { free($0) } }
    if readingLines == 0 { close(readEnd) }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, argv[0], &actions, &attributes, &cArguments, environ)
    close(writeEnd)
    guard spawned == 0 else {
        if readingLines > 0 { close(readEnd) }
        throw PipedChildError("posix_spawn failed: \(String(cString: strerror(spawned)))")
    }

    var lines: [String] = []
    if readingLines > 0 {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1)
        // A byte at a time, so that nothing past the lines wanted is taken from the pipe.
        while lines.count < readingLines, read(readEnd, &buffer, 1) == 1 {
            if buffer[0] == UInt8(ascii: "\n") {
                lines.append(String(decoding: pending, as: UTF8.self))
                pending = []
            } else {
                pending.append(buffer[0])
            }
        }
        close(readEnd)
    }

    var status: Int32 = 0
    let deadline = Date().addingTimeInterval(timeout)
    while waitpid(pid, &status, WNOHANG) == 0 {
        if Date() > deadline {
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
            throw PipedChildError("uvfetch \(arguments.joined(separator: " ")) did not end within \(timeout) s")
        }
        usleep(20_000)
    }
    let stderr = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
    // The wait status: the low 7 bits are the killing signal, or 0 with the exit status above.
    let signal = status & 0x7F
    return signal == 0 ? PipedRun(signal: nil, exitStatus: (status >> 8) & 0xFF, stderr: stderr, lines: lines)
                       : PipedRun(signal: signal, exitStatus: nil, stderr: stderr, lines: lines)
}

/// A piped child that could not be started, or did not end in time.
struct PipedChildError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
