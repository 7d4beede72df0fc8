import Foundation
import Testing
import UVFetchCore

/// uvfetch's proxies, end to end through tinyproxy to nginx: `-x`, the environment as curl reads
/// it, loopback going direct, and `--noproxy`.
@Suite(.tags(.nginx), .serialized) struct FetchProxyTests {
    /// A port nothing listens on: a proxy there fails every request that tries it.
    private static let deadProxy = "http://127.0.0.1:1"

    private func environment(_ extra: [String: String]) -> [String: String] {
        var variables = ProcessInfo.processInfo.environment
        for name in ["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"] {
            variables[name] = nil
        }
        return variables.merging(extra) { _, new in new }
    }

    @Test func dashXSendsEvenLoopbackRequestsThroughTheProxy() throws {
        let proxy = try TestServers.tinyproxy()
        let url = "\(try TestServers.nginx().baseURL)/hello?via-x"
        let result = try runUVFetch(["-x", proxy.url().absoluteString, url], environment: environment([:]))
        #expect(result.status == ExitStatus.success, "\(result.stdout) \(result.stderr)")
        #expect(proxy.log().contains("GET \(url) HTTP/1.1"))
    }

    @Test func environmentProxiesAreUsed() throws {
        let proxy = try TestServers.tinyproxy()
        // 127.1 is 127.0.0.1 to the resolver but not the loopback literal the environment's
        // proxies skip, so the request must go through tinyproxy to reach nginx.
        let port = try TestServers.nginx().port
        let url = "http://127.1:\(port)/hello?via-env"
        let result = try runUVFetch([url], environment: environment(["http_proxy": proxy.url().absoluteString]))
        #expect(result.status == ExitStatus.success, "\(result.stdout) \(result.stderr)")
        #expect(proxy.log().contains("GET \(url) HTTP/1.1"))

        let refused = try runUVFetch([url], environment: environment(["http_proxy": Self.deadProxy]))
        #expect(refused.status == ExitStatus.someFailed)
        #expect(refused.stdout.contains("connectionRefused"))
    }

    @Test func loopbackAndNoProxyHostsGoDirect() throws {
        let nginx = try TestServers.nginx()
        let variables = environment(["http_proxy": Self.deadProxy])
        #expect(try runUVFetch(["\(nginx.baseURL)/hello"], environment: variables).status == ExitStatus.success)
        let noProxy = try runUVFetch(["--noproxy", "127.1", "http://127.1:\(nginx.port)/hello"], environment: variables)
        #expect(noProxy.status == ExitStatus.success, "\(noProxy.stdout)")
        let fromEnvironment = environment(["http_proxy": Self.deadProxy, "no_proxy": "example.com,127.1"])
        #expect(try runUVFetch(["http://127.1:\(nginx.port)/hello"], environment: fromEnvironment).status == ExitStatus.success)
    }
}
