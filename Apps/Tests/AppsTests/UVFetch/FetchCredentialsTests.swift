import Foundation
import Synchronization
import Testing
import UVFetchCore

/// `uvfetch http://user:password@host/` sends the credentials as Basic, as curl and wget do.
@Suite(.tags(.childProcess), .serialized) struct FetchCredentialsTests {
    @Test func userinfoInTheURLIsSentAsBasic() throws {
        let seen = Mutex<[String]>([])
        let server = try ScriptedServer { connection in
            try connection.serveKeepAlive { request in
                seen.withLock { $0.append("\(request.target) \(request.header("Authorization") ?? "-")") }
                return ScriptedResponse.text(request.head)
            }
        }
        defer { server.stop() }
        let result = try runUVFetch(["--concurrency", "1", "--quiet",
                                     "http://user:p%40ss%3Aword@127.0.0.1:\(server.port)/a",
                                     "http://127.0.0.1:\(server.port)/b"])
        #expect(result.status == ExitStatus.success, "\(result.stdout) \(result.stderr)")
        #expect(seen.withLock { $0 } == ["/a Basic \(Data("user:p@ss:word".utf8).base64EncodedString())", "/b -"])
        // Through a proxy (the same server, answering for any origin): the origin's
        // credentials go in the request, none in its absolute target.
        let proxied = try runUVFetch(["--quiet", "-x", "http://127.0.0.1:\(server.port)", "http://u:p@origin.test/d"])
        #expect(proxied.status == ExitStatus.success)
        #expect(seen.withLock { $0.last } == "http://origin.test/d Basic \(Data("u:p".utf8).base64EncodedString())")
        // -u, like -H Authorization, wins over the URL's.
        let explicit = try runUVFetch(["--quiet", "-u", "other:secret", "http://user:pass@127.0.0.1:\(server.port)/c"])
        #expect(explicit.status == ExitStatus.success)
        #expect(seen.withLock { $0.last } == "/c Basic \(Data("other:secret".utf8).base64EncodedString())")
    }
}
