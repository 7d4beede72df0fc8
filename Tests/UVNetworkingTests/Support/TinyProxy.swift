// tinyproxy from Debian, as the HTTP proxy of the proxy tests: one that lets anyone through and
// one that wants Basic credentials. Started on first use, shared by the test process.

import Foundation

/// A running tinyproxy.
struct TinyProxyServer: Sendable {
    let port: Int
    let directory: String
    /// The credentials it wants, if any.
    let credentials: (user: String, password: String)?

    /// The proxy URL, with the credentials when `withCredentials`.
    func url(withCredentials: Bool = true) -> URL {
        if withCredentials, let credentials {
            return URL(string: "http://\(credentials.user):\(credentials.password)@127.0.0.1:\(port)")!
        }
        return URL(string: "http://127.0.0.1:\(port)")!
    }

    /// tinyproxy's log (connections, CONNECT requests, refusals).
    func log() -> String {
        (try? String(contentsOfFile: directory + "/tinyproxy.log", encoding: .utf8)) ?? ""
    }
}

extension TestServers {
    /// tinyproxy without authentication.
    static func tinyproxy() throws -> TinyProxyServer { try sharedTinyproxy.get() }
    /// tinyproxy that wants user "proxyuser", password "proxysecret".
    static func tinyproxyWithAuth() throws -> TinyProxyServer { try sharedTinyproxyWithAuth.get() }

    private static let sharedTinyproxy = Result { try startTinyproxy(credentials: nil) }
    private static let sharedTinyproxyWithAuth = Result { try startTinyproxy(credentials: ("proxyuser", "proxysecret")) }

    private static func startTinyproxy(credentials: (user: String, password: String)?) throws -> TinyProxyServer {
        let binary = "/usr/bin/tinyproxy"
        guard access(binary, X_OK) == 0 else { throw TestServerError(description: "\(binary) is missing: run `make test`, which installs tinyproxy") }
        var failures: [String] = []
        for _ in 1...5 {
            let directory = try makeTemporaryDirectory(prefix: "uvnetworking-tinyproxy")
            let port = try freeLoopbackPort()
            var config = """
                Port \(port)
                Listen 127.0.0.1
                Timeout 60
                MaxClients 200
                LogLevel Info
                LogFile "\(directory)/tinyproxy.log"
                PidFile "\(directory)/tinyproxy.pid"
                Allow 127.0.0.1

                """
            if let credentials { config += "BasicAuth \(credentials.user) \(credentials.password)\n" }
            try config.write(toFile: directory + "/tinyproxy.conf", atomically: false, encoding: .utf8)
            let server = try SupervisedProcess.launch([binary, "-d", "-c", directory + "/tinyproxy.conf"], directory: directory)
            let deadline = monotonicSeconds() + 10
            while monotonicSeconds() < deadline, server.exitStatus == nil {
                if (try? RawTCPClient(port: port, timeout: 1)) != nil {
                    return TinyProxyServer(port: port, directory: directory, credentials: credentials)
                }
                usleep(20_000)
            }
            let output = server.output()
            server.release()
            try? FileManager.default.removeItem(atPath: directory)
            failures.append("not listening on \(port): \(output)")
        }
        throw TestServerError(description: "tinyproxy did not start: " + failures.joined(separator: " | "))
    }
}
