#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
import UVNetworking
@testable import UVFetchCore

/// `NetworkWatch`: when uvfetch's progress line says "network unreachable", and that a run of
/// loopback hosts never even opens the manager's netlink socket. Nothing here needs a network:
/// the transitions themselves, and the line in a terminal, are tested end to end in network
/// namespaces (Tests/UVNetworkingTests/Reachability).
@Suite(.tags(.nginx), .serialized) struct NetworkWatchTests {
    private let queue = DispatchQueue(label: "NetworkWatchTests")

    @Test func onlyAKnownNotReachableForARunBeyondLoopback() {
        #expect(NetworkWatch.saysUnreachable(.notReachable, seesRemoteHost: true))
        #expect(!NetworkWatch.saysUnreachable(.notReachable, seesRemoteHost: false), "a loopback run never says it")
        #expect(!NetworkWatch.saysUnreachable(.unknown, seesRemoteHost: true), "no reading yet: the rate stays")
        for kind in [NetworkInterfaceKind.ethernet, .wifi, .cellular, .other] {
            #expect(!NetworkWatch.saysUnreachable(.reachable(kind), seesRemoteHost: true))
        }
    }

    @Test func loopbackURLsNeverStartTheManager() throws {
        let before = openNetlinkRouteSocketCount()
        let watch = NetworkWatch(loop: .shared, workers: .shared, queue: queue, loopback: LoopbackHosts(overrides: ["api.test": "127.0.0.1"]))
        for text in ["http://127.0.0.1:8080/a", "https://localhost/b", "http://[::1]:9/c", "http://127.1/d", "https://api.test/e"] {
            watch.note(try #require(URL(string: text)))
        }
        #expect(!watch.isMonitoring)
        #expect(!watch.isNetworkUnreachable)
        #expect(openNetlinkRouteSocketCount() == before, "no netlink socket for a loopback run")
        watch.stop()
    }

    @Test func theFirstRemoteHostStartsItAndTheEndOfTheRunClosesItsSocket() throws {
        let before = openNetlinkRouteSocketCount()
        let watch = NetworkWatch(loop: .shared, workers: .shared, queue: queue, loopback: LoopbackHosts())
        watch.note(try #require(URL(string: "http://127.0.0.1/")))
        #expect(!watch.isMonitoring)
        watch.note(try #require(URL(string: "http://192.0.2.1/")))
        #expect(watch.isMonitoring)
        watch.note(try #require(URL(string: "http://198.51.100.1/")))
        #expect(waitUntil(timeout: 5) { openNetlinkRouteSocketCount() == before + 1 }, "one netlink socket while monitoring")
        watch.stop()
        #expect(!watch.isMonitoring)
        #expect(!watch.isNetworkUnreachable, "unknown after the stop: the line never says it once the run ended")
        #expect(waitUntil(timeout: 5) { openNetlinkRouteSocketCount() == before }, "its socket closed at the end of the run")
    }

    /// The runner's wiring: with the progress line on, a host beyond loopback (an .invalid name:
    /// refused by the resolver itself, nothing leaves the machine) opens the manager's socket
    /// while the run goes on, and the end of the run closes it.
    @Test func aRunWithTheProgressLineHoldsTheSocketOnlyWhileItRuns() throws {
        let base = try TestServers.httpbin().baseURL
        let before = openNetlinkRouteSocketCount()
        var settings = FetchRunner.Settings()
        settings.concurrency = 1
        settings.printsLines = false
        settings.showsProgress = true
        let runner = FetchRunner(options: try RequestOptions.parse([]), settings: settings, writer: nil) { _ in }
        let seen = Mutex(0)
        let sampling = Atomic<Bool>(true)
        let sampler = Thread {
            while sampling.load(ordering: .relaxed) {
                let count = openNetlinkRouteSocketCount()
                seen.withLock { $0 = max($0, count) }
                usleep(10_000)
            }
        }
        sampler.start()
        let outcome = try runner.run(try URLInput(arguments: ["http://nothing.invalid/", "\(base)/delay/1"], inputPath: nil))
        sampling.store(false, ordering: .relaxed)
        #expect(outcome.statistics.succeeded == 1)
        #expect(seen.withLock { $0 } == before + 1, "the manager monitored during the run")
        #expect(waitUntil(timeout: 5) { openNetlinkRouteSocketCount() == before }, "and its socket closed once the run has ended")
    }

    /// Interrupted (^C) while a remote host's request is in flight, by a caller that does not
    /// exit the process: the run returns and its socket is closed all the same.
    @Test func anInterruptedRunClosesTheSocket() throws {
        let base = try TestServers.httpbin().baseURL
        let before = openNetlinkRouteSocketCount()
        var settings = FetchRunner.Settings()
        settings.concurrency = 1
        settings.printsLines = false
        settings.showsProgress = true
        let runner = FetchRunner(options: try RequestOptions.parse([]), settings: settings, writer: nil) { _ in }
        let returned = DispatchSemaphore(value: 0)
        let input = try URLInput(arguments: ["http://nothing.invalid/", "\(base)/delay/10"], inputPath: nil)
        Thread {
            _ = try? runner.run(input)
            returned.signal()
        }.start()
        #expect(waitUntil(timeout: 5) { openNetlinkRouteSocketCount() == before + 1 }, "the manager monitors during the run")
        let handled = DispatchSemaphore(value: 0)
        runner.interrupt(settleSeconds: 0.2) { _ in handled.signal() }
        #expect(handled.wait(timeout: .now() + 5) == .success)
        #expect(returned.wait(timeout: .now() + 5) == .success, "the run returned after the interrupt")
        #expect(waitUntil(timeout: 5) { openNetlinkRouteSocketCount() == before }, "its socket closed")
    }
}

/// NETLINK_ROUTE sockets open in this process: the descriptors that are sockets whose inode
/// /proc/self/net/netlink lists with protocol 0.
private func openNetlinkRouteSocketCount() -> Int {
    guard let table = try? String(contentsOfFile: "/proc/self/net/netlink", encoding: .utf8) else { return -1 }
    // Columns: sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode.
    let routeInodes = Set(table.split(separator: "\n").dropFirst().compactMap { line -> Substring? in
        let fields = line.split(separator: " ")
        return fields.count >= 10 && fields[1] == "0" ? fields[9] : nil
    })
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return descriptors.count { descriptor in
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)"),
              target.hasPrefix("socket:[") else { return false }
        return routeInodes.contains(target.dropFirst("socket:[".count).dropLast())
    }
}
