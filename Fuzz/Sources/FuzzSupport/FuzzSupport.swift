// What every harness shares: running libFuzzer's driver on a Swift closure, and invariant checks
// that survive -O and end the run with the input saved (libFuzzer saves it on any abort).

import CFuzzerDriver
import Foundation

/// The harness's body; set once by `runFuzzer`, before libFuzzer starts calling it.
nonisolated(unsafe) private var harnessBody: ((UnsafeRawBufferPointer) -> Void)?

/// Hands control to libFuzzer, which calls `body` with each input; never returns. libFuzzer's
/// flags (`-max_total_time`, `-dict`, corpus directories, files to replay) come from the
/// command line as usual.
public func runFuzzer(_ body: @escaping (UnsafeRawBufferPointer) -> Void) -> Never {
    harnessBody = body
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    let status = LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        harnessBody!(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    }
    exit(status)
}

/// Ends the run when `condition` is false, saying which invariant broke; libFuzzer then saves the
/// input as a crash. Unlike `assert` it stays in optimised builds.
public func fuzzCheck(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                      file: StaticString = #fileID, line: UInt = #line) {
    guard !condition() else { return }
    FileHandle.standardError.write(Data("invariant violated (\(file):\(line)): \(message())\n".utf8))
    abort()
}

/// Reads an input front to back: option bytes first, the rest as the subject. Reading past the
/// end gives zeros, so every input is a valid one.
public struct FuzzInput {
    /// The bytes not read yet.
    public private(set) var rest: ArraySlice<UInt8>

    /// Wraps one input.
    public init(_ bytes: UnsafeRawBufferPointer) {
        rest = ArraySlice(bytes)
    }

    /// The next byte, or 0 at the end.
    public mutating func byte() -> UInt8 {
        guard let first = rest.first else { return 0 }
        rest = rest.dropFirst()
        return first
    }

    /// Whether the next byte is odd.
    public mutating func flag() -> Bool { byte() & 1 == 1 }

    /// The next `count` bytes (fewer at the end).
    public mutating func bytes(_ count: Int) -> ArraySlice<UInt8> {
        let taken = rest.prefix(count)
        rest = rest.dropFirst(taken.count)
        return taken
    }

    /// Everything not read yet; the input is then empty.
    public mutating func remaining() -> ArraySlice<UInt8> {
        defer { rest = rest.suffix(0) }
        return rest
    }
}

/// Cut points for feeding `count` bytes in pieces of pseudo-random sizes (1 to 64 bytes) drawn from
/// `seed`: the same seed gives the same cuts, so a failing split is reproducible from the input.
public func splitPoints(count: Int, seed: UInt8) -> [Int] {
    var state = UInt32(seed) &* 2_654_435_761 | 1
    var points: [Int] = []
    var offset = 0
    while offset < count {
        state ^= state << 13
        state ^= state >> 17
        state ^= state << 5
        offset = min(count, offset + 1 + Int(state % 64))
        points.append(offset)
    }
    return points
}

/// Appends `event` to `events`, joining a body piece to the body event before it, so that two
/// splits of one stream give equal lists. `body` reads an event's bytes (nil for any other
/// event) and `makeBody` makes a body event: the parsers' event types differ, the joining not.
public func appendJoiningBodies<Event>(_ event: Event, to events: inout [Event], body: (Event) -> [UInt8]?,
                                       makeBody: ([UInt8]) -> Event) {
    if let more = body(event), let last = events.last, let some = body(last) {
        events[events.count - 1] = makeBody(some + more)
    } else {
        events.append(event)
    }
}
