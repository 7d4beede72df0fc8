// uvfetch-test-world: the world around a uvfetch under test, run by the tests of Apps/ as a
// child process (often inside a network namespace of the test's own): an HTTP server on a given
// address, or a scripted DNS server and an HTTP server around a command. Chosen by argv[1];
// exits 64 for an unknown one.

import Foundation
import Glibc
import LoopbackDNSServer
import LoopbackHTTPServer

/// Ends the world with `status` after printing `message`.
func finish(_ status: Int32, _ message: String) -> Never {
    FileHandle.standardOutput.write(Data((message + "\n").utf8))
    exit(status)
}

let scenario = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : ""
switch scenario {
case "dns-namespace":
    // Inside a network namespace of a test's own (as root): the scripted DNS server on
    // 127.0.0.1:53 and an HTTP server on 127.0.0.1:8080, then the command after "--" (uvfetch),
    // then the DNS queries each name got. Arguments: options, NAME=ADDRESS[,ADDRESS][@DELAY]
    // (answered DELAY seconds late) or NAME=silent, "--", the command. Options: `--listen
    // ADDRESS` serves HTTP on that IPv4 address instead (0.0.0.0: every 127.x.y.z);
    // `--blackhole-ipv6` makes [::1]:8080 drop SYNs. Names not in the table get NXDOMAIN.
    // Prints the command's output, then "queries NAME N" per name; exits with the command's
    // status.
    var arguments = Array(CommandLine.arguments.dropFirst(2))
    var listenAddress = "127.0.0.1", blackholeIPv6 = false
    while let option = arguments.first, option.hasPrefix("--"), option != "--" {
        arguments.removeFirst()
        switch option {
        case "--listen" where !arguments.isEmpty: listenAddress = arguments.removeFirst()
        case "--blackhole-ipv6": blackholeIPv6 = true
        default: finish(64, "unknown option \(option)")
        }
    }
    guard let separator = arguments.firstIndex(of: "--"), separator + 1 < arguments.count else { finish(64, "usage: dns-namespace [options] NAME=ADDR... -- command") }
    // The server holds a descriptor per connection of a client that may use up its own limit.
    var limit = rlimit()
    getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = max(limit.rlim_cur, min(limit.rlim_max, 8192))
    setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    let dns: LoopbackDNSServer
    do { dns = try LoopbackDNSServer(host: "127.0.0.1", port: 53) } catch { finish(1, "cannot listen on 127.0.0.1:53: \(error)") }
    var names: [String] = []
    for spec in arguments[..<separator] {
        let parts = spec.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { finish(64, "not NAME=ADDRESS: \(spec)") }
        names.append(parts[0])
        let answer = parts[1].split(separator: "@", maxSplits: 1).map(String.init)
        let delay = answer.count == 2 ? Double(answer[1]) ?? 0 : 0
        dns.set(parts[0], answer[0] == "silent" ? .init(behavior: .silent)
                : .init(addresses: answer[0].split(separator: ",").map(String.init), delay: delay))
    }
    let http = LoopbackHTTPServer(address: listenAddress, port: 8080)
    do { try http.start() } catch { finish(1, "cannot listen on \(listenAddress):8080: \(error)") }
    let blackhole: BlackholeListener?
    do { blackhole = blackholeIPv6 ? try BlackholeListener(ipv6: true, port: 8080) : nil } catch { finish(1, "cannot blackhole [::1]:8080: \(error)") }
    let command = Process()
    command.executableURL = URL(fileURLWithPath: arguments[separator + 1])
    command.arguments = Array(arguments[(separator + 2)...])
    do { try command.run() } catch { finish(1, "cannot run \(arguments[separator + 1]): \(error)") }
    command.waitUntilExit()
    blackhole?.close()
    http.stop()
    dns.stop()
    let counts = names.map { "queries \($0) \(dns.queryCount(for: $0))" }.joined(separator: "\n")
    finish(command.terminationStatus, counts)

case "serve":
    // LoopbackHTTPServer on ADDRESS:PORT (an IPv4 literal, e.g. a router namespace's 192.0.2.1)
    // until standard input ends: prints "listening PORT" once it accepts.
    let arguments = Array(CommandLine.arguments.dropFirst(2))
    guard arguments.count == 2, let port = Int(arguments[1]) else { finish(64, "usage: serve ADDRESS PORT") }
    let server = LoopbackHTTPServer(address: arguments[0], port: port)
    do { try server.start() } catch { finish(1, "cannot listen on \(arguments[0]):\(port): \(error)") }
    FileHandle.standardOutput.write(Data("listening \(port)\n".utf8))
    while readLine() != nil {}
    server.stop()
    finish(0, "ok")

default:
    finish(64, "unknown scenario \(scenario)")
}
