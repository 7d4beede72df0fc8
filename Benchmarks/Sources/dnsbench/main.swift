// dnsbench: the resolvers UVNetworking could use, side by side against the scripted DNS server
// (LoopbackDNSServer on 127.0.0.1:53, so run it in a network namespace whose resolv.conf names
// 127.0.0.1: Benchmarks/dns-resolvers.sh does that). Each resolves host names with AF_UNSPEC (A and
// AAAA), as a connection does:
//   uv    uv_getaddrinfo on libuv's threadpool (UV_THREADPOOL_SIZE threads, 4 by default)
//   cares c-ares with its sockets polled by libuv (what UVNetworking does)
// Modes:
//   rate      N distinct names, C in flight: look-ups per second
//   slowfast  64 names answered after D seconds asked first, then 20 answered at once: how long
//             until the 20 are answered, and how many of the 64 were by then
// Usage: dnsbench RESOLVER MODE [N] [C] [D]

import CDNSBench
import Foundation
import Glibc
import LoopbackDNSServer

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    print("usage: dnsbench uv|cares rate|slowfast [names] [in-flight] [slow-delay]")
    exit(64)
}
nonisolated(unsafe) let resolver = arguments[1]
nonisolated(unsafe) let mode = arguments[2]
let count = arguments.count > 3 ? Int(arguments[3])! : 20_000
let inFlight = arguments.count > 4 ? Int(arguments[4])! : 64
let slowDelay = arguments.count > 5 ? Double(arguments[5])! : 5

nonisolated func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

nonisolated(unsafe) let server: LoopbackDNSServer
do { server = try LoopbackDNSServer(host: "127.0.0.1", port: 53) } catch {
    print("dnsbench: cannot listen on 127.0.0.1:53 (run it through Benchmarks/dns-resolvers.sh): \(error)")
    exit(1)
}

nonisolated(unsafe) var names: [String]
nonisolated(unsafe) var slowCount = 0
if mode == "rate" {
    names = (0..<count).map { "n\($0).bench.test" }
    for (index, name) in names.enumerated() {
        server.set(name, .init(addresses: ["127.0.\(index / 250 % 250).\(index % 250 + 1)", "::1"]))
    }
} else {
    let slow = (0..<64).map { "slow\($0).bench.test" }, fast = (0..<20).map { "fast\($0).bench.test" }
    for name in slow { server.set(name, .init(addresses: ["127.0.0.2"], delay: slowDelay)) }
    for name in fast { server.set(name, .init(addresses: ["127.0.0.3"])) }
    names = slow + fast
    slowCount = slow.count
}

/// Completion bookkeeping shared by every resolver: index -> done, the time the last fast name
/// finished and how many slow ones had by then.
final class Tally: @unchecked Sendable {
    let lock = NSLock()
    var done = 0, failed = 0, slowDone = 0, fastDone = 0
    var fastFinishedAt: Double?
    var slowDoneWhenFastFinished = 0
    let fastTotal: Int
    init(fastTotal: Int) { self.fastTotal = fastTotal }

    func finished(_ index: Int, ok: Bool, slowCount: Int) {
        lock.lock(); defer { lock.unlock() }
        done += 1
        if !ok { failed += 1 }
        if index < slowCount { slowDone += 1; return }
        fastDone += 1
        if fastDone == fastTotal, fastFinishedAt == nil {
            fastFinishedAt = now()
            slowDoneWhenFastFinished = slowDone
        }
    }
}

nonisolated(unsafe) let tally = Tally(fastTotal: names.count - slowCount)
nonisolated(unsafe) let window = mode == "rate" ? inFlight : names.count
// In the slowfast mode we stop once the fast ones are answered (the slow ones may take minutes
// behind a small thread pool).
nonisolated func allDone() -> Bool {
    tally.lock.lock(); defer { tally.lock.unlock() }
    return mode == "rate" ? tally.done == names.count : tally.fastDone == tally.fastTotal
}
let start = now()

switch resolver {
case "uv":
    for _ in 0..<window { uvStartOne() }
    uv_run(uv_default_loop(), UV_RUN_DEFAULT)
case "cares":
    caresStart()
    for _ in 0..<window { caresStartOne() }
    caresRearm()
    uv_run(uv_default_loop(), UV_RUN_DEFAULT)
default:
    print("unknown resolver \(resolver)")
    exit(64)
}

let elapsed = now() - start
if mode == "rate" {
    // CPU of the whole process, the scripted server's thread included (the same for every resolver).
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    print(String(format: "%@ rate: %d names, %d in flight: %.0f look-ups/s (%.2f s, %.1f µs CPU per look-up, server included, %d failed, %d queries)",
                 resolver, names.count, inFlight, Double(names.count) / elapsed, elapsed, cpu * 1e6 / Double(names.count), tally.failed, server.totalQueries))
} else {
    let fast = (tally.fastFinishedAt ?? now()) - start
    print(String(format: "%@ slowfast: 20 fast names answered after %.3f s, %d of 64 slow (%.1f s each) answered by then, %d failed",
                 resolver, fast, tally.slowDoneWhenFastFinished, slowDelay, tally.failed))
}
exit(0)
