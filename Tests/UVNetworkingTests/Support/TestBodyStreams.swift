// Request body streams for tests: bodies generated on the fly (never held in memory), with
// knobs for the faults a stream can have, and counters to see what the library did with them.

#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
@testable import UVNetworking

/// Why a `GeneratedBody` failed on purpose.
struct TestStreamError: Error, Equatable, CustomStringConvertible {
    var description: String { "the test stream failed on purpose" }
}

/// What the streams made from one `GeneratedBody.Spec` did, across every stream (attempt).
final class GeneratedBodyLog: Sendable {
    private struct Counts { var streamsMade = 0, reads = 0, bytes: Int64 = 0, peakResidentGrowth = 0, threadsOnLoop = 0 }
    private let counts = Mutex(Counts())
    let baselineResident = residentMemoryBytes()

    var streamsMade: Int { counts.withLock { $0.streamsMade } }
    var reads: Int { counts.withLock { $0.reads } }
    /// Bytes handed out by every stream.
    var bytes: Int64 { counts.withLock { $0.bytes } }
    /// The largest growth of resident memory over `baselineResident` seen at a read.
    var peakResidentGrowth: Int { counts.withLock { $0.peakResidentGrowth } }
    /// Reads that ran on the event loop's thread (must be 0).
    var readsOnLoop: Int { counts.withLock { $0.threadsOnLoop } }

    fileprivate func madeStream() { counts.withLock { $0.streamsMade += 1 } }
    fileprivate func read(_ count: Int, sampleMemory: Bool) {
        let growth = sampleMemory ? residentMemoryBytes() - baselineResident : 0
        let onLoop = EventLoop.onAnyLoopThread
        counts.withLock {
            $0.reads += 1
            $0.bytes += Int64(count)
            $0.peakResidentGrowth = max($0.peakResidentGrowth, growth)
            if onLoop { $0.threadsOnLoop += 1 }
        }
    }
}

/// A body of `produce` bytes made up as it is read: byte i is `i % 251` (or one repeated byte
/// with `fast`, for bodies of hundreds of MiB in debug builds). It can throw after `throwAfter`
/// bytes, and be read with `slowRead` seconds per read.
final class GeneratedBody: RequestBodyStream {
    struct Spec: Sendable {
        var produce: Int64
        var throwAfter: Int64? = nil
        var fast = false
        var slowRead: Double = 0
        var sampleMemoryEvery = 0
    }

    private let spec: Spec
    private let log: GeneratedBodyLog
    private var produced: Int64 = 0
    private var reads = 0

    init(_ spec: Spec, log: GeneratedBodyLog) {
        self.spec = spec
        self.log = log
        log.madeStream()
    }

    /// A streamed body whose every attempt is a new `GeneratedBody`.
    static func body(_ spec: Spec, declaredLength: Int64?, log: GeneratedBodyLog) -> StreamedBody {
        StreamedBody(length: declaredLength) { GeneratedBody(spec, log: log) }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if let limit = spec.throwAfter, produced >= limit { throw TestStreamError() }
        if spec.slowRead > 0 { usleep(UInt32(spec.slowRead * 1_000_000)) }
        var count = Int(min(Int64(buffer.count), spec.produce - produced))
        if let limit = spec.throwAfter { count = min(count, Int(limit - produced)) }
        if spec.fast {
            buffer.baseAddress!.initializeMemory(as: UInt8.self, repeating: UInt8(ascii: "x"), count: count)
        } else {
            let bytes = buffer.bindMemory(to: UInt8.self)
            var value = Int(produced % 251)
            for index in 0..<count {
                bytes[index] = UInt8(value)
                value = value == 250 ? 0 : value + 1
            }
        }
        produced += Int64(count)
        reads += 1
        log.read(count, sampleMemory: spec.sampleMemoryEvery > 0 && reads % spec.sampleMemoryEvery == 0)
        return count
    }

    /// The first `count` bytes every non-`fast` GeneratedBody yields.
    static func expected(_ count: Int) -> [UInt8] { NginxServer.largeBody(count: count) }
}

/// This process's resident set size in bytes, from /proc/self/statm.
func residentMemoryBytes() -> Int {
    let fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return 0 }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 128)
    let count = read(fd, &buffer, buffer.count)
    guard count > 0 else { return 0 }
    let fields = String(decoding: buffer[0..<count], as: UTF8.self).split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// A path in the temp directory for a test's file (the caller removes it).
func temporaryFile(_ name: String) -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("uvnetworking-\(UUID().uuidString)-\(name)")
}

/// A sparse file of `size` bytes (zeros that take no disk), for uploads larger than memory.
func makeSparseFile(_ name: String, size: Int64) throws -> URL {
    let file = temporaryFile(name)
    guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
        throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
    }
    let handle = try FileHandle(forWritingTo: file)
    try handle.truncate(atOffset: UInt64(size))
    try handle.close()
    return file
}

/// What a scripted server saw of an upload (the head, the body's size, the client's peak
/// resident growth), for the test to check after the exchange.
final class UploadObservations: Sendable {
    let bytes = Mutex(-1)
    let head = Mutex<ScriptedRequest?>(nil)
    let peakResidentGrowth = Mutex(0)
}

/// A server for large uploads: reads one request head, then reads and drops its Content-Length
/// bytes while recording into `seen` the head, the bytes read so far and this process's peak
/// resident growth; answers `reply` and waits for the client to close.
func memoryWatchingSink(_ seen: UploadObservations, reply: String) throws -> ScriptedServer {
    try ScriptedServer { connection in
        let head = try connection.readRequestHead()
        seen.head.withLock { $0 = head }
        let length = Int(head.header("Content-Length") ?? "") ?? 0
        let baseline = residentMemoryBytes()
        try connection.discard(length, timeout: 280) { done in
            let growth = residentMemoryBytes() - baseline
            seen.peakResidentGrowth.withLock { $0 = max($0, growth) }
            seen.bytes.withLock { $0 = done }
        }
        try connection.write(ScriptedResponse.text(reply))
        _ = connection.waitForPeerClose()
    }
}
