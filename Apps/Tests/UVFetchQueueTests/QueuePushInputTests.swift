import Foundation
import Testing

/// `uvfetch queue push` reads its list as `uvfetch -i` does: a byte order mark that an editor put
/// at the start is no part of the first URL.
@Suite(.tags(.postgres), .serialized, .enabled(if: PostgresCluster.isInstalled, "PostgreSQL is not installed (scripts/install-deps.sh)"))
struct QueuePushInputTests {
    @Test func aLeadingByteOrderMarkIsSkipped() throws {
        let cluster = try SharedCluster.get()
        let db = try cluster.makeDatabase()
        #expect(try uvfetch(["queue", "init", "--db", db]).status == 0)
        let list = Data([0xEF, 0xBB, 0xBF] + Array("http://127.0.0.1:1/first\nhttp://127.0.0.1:1/second\n".utf8))
        let file = try temporaryFile("bom-urls.txt", list)
        for arguments in [["-i", file.path], ["-i", "-"]] {
            let push = try uvfetch(["queue", "push", "--db", db] + arguments, stdin: arguments.last == "-" ? file : nil)
            #expect(push.status == 0, "\(arguments): \(push.stderr)")
            #expect(!push.stderr.contains("not an http(s) URL"), "\(push.stderr)")
        }
        let stored = try cluster.psql(db, "SELECT convert_from(url, 'UTF8') FROM uvfetch_urls ORDER BY id")
        #expect(stored == "http://127.0.0.1:1/first\nhttp://127.0.0.1:1/second\n", "\(stored)")
    }
}
