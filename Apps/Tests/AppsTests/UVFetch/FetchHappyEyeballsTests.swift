import Foundation
import LoopbackHTTPServer
import Testing
import UVFetchCore

/// uvfetch's `--resolve` with two addresses, the first of which blackholes: the second serves
/// the URL (Happy Eyeballs) instead of the connect timeout failing it.
@Suite(.tags(.childProcess), .serialized) struct FetchHappyEyeballsTests {
    @Test func resolveWithABlackholedIPv6AddressStillFetches() throws {
        let server = try ScriptedServer { connection in
            try connection.serveKeepAlive { _ in ScriptedResponse.text("over IPv4") }
        }
        defer { server.stop() }
        let blackhole = try BlackholeListener(ipv6: true, port: server.port)
        defer { blackhole.close() }
        let url = "http://eyeballs.test:\(server.port)/"
        let result = try runUVFetch(["--resolve", "eyeballs.test:\(server.port):::1,127.0.0.1", url])
        #expect(result.status == ExitStatus.success, "\(result.stdout) \(result.stderr)")
    }
}
