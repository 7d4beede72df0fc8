import Foundation
import LoopbackHTTPServer
import Testing

/// `uvfetch queue init|push|status|results` against a real PostgreSQL cluster, each test in a
/// database of its own.
@Suite(.tags(.postgres), .serialized, .enabled(if: PostgresCluster.isInstalled, "PostgreSQL is not installed (scripts/install-deps.sh)"))
struct QueueCommandTests {
    @Test func initTwiceChangesNothing() throws {
        let cluster = try SharedCluster.get()
        let db = try cluster.makeDatabase()
        let first = try uvfetch(["queue", "init", "--db", db])
        #expect(first.status == 0, "\(first.stderr)")
        try cluster.psql(db, "INSERT INTO uvfetch_urls (url) VALUES ('http://127.0.0.1/x'::bytea)")
        let second = try uvfetch(["queue", "init", "--db", db])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try cluster.psql(db, "SELECT count(*) FROM uvfetch_urls") == "1\n")
        #expect(try cluster.psql(db, "SELECT version FROM uvfetch_schema ORDER BY version") == "1\n2\n3\n4\n")
        #expect(first.stdout.contains("queue ready in postgres://postgres@127.0.0.1:\(cluster.port)/"))
    }

    @Test func commandsBeforeInitSaySo() throws {
        let cluster = try SharedCluster.get()
        let db = try cluster.makeDatabase()
        let run = try uvfetch(["queue", "status", "--db", db])
        #expect(run.status == 69)
        #expect(run.stderr.contains("run `uvfetch queue init` first"), "\(run.stderr)")
    }

    @Test func pushSkipsDuplicatesAndReportsMalformedLines() throws {
        let cluster = try SharedCluster.get()
        let db = try cluster.makeDatabase()
        #expect(try uvfetch(["queue", "init", "--db", db]).status == 0)
        var list = Data("""
            # a comment, then a blank line

            http://127.0.0.1:1/a
            http://127.0.0.1:1/b
              http://127.0.0.1:1/a\t
            ftp://127.0.0.1/c
            not a url
            http://127.0.0.1:1/b

            """.utf8)
        // Not UTF-8: kept byte for byte.
        list.append(contentsOf: Array("http://127.0.0.1:1/caf".utf8) + [0xE9] + Array("\n".utf8))
        let file = try temporaryFile("urls.txt", list)
        // Batches of 3: a duplicate within a statement ([a, b, a]) and across them ([b, café]).
        let push = try uvfetch(["queue", "push", "--db", db, "-i", file.path, "--batch-size", "3"])
        #expect(push.status == 1, "malformed lines make exit 1: \(push.stderr)")
        #expect(push.stdout == "3 pushed, 2 duplicates, 2 malformed\n", "\(push.stdout)")
        #expect(push.stderr.contains("uvfetch: line 6: not an http(s) URL: ftp://127.0.0.1/c"), "\(push.stderr)")
        #expect(push.stderr.contains("uvfetch: line 7: not an http(s) URL: not a url"), "\(push.stderr)")
        let stored = try cluster.psql(db, "SELECT encode(url, 'hex') FROM uvfetch_urls ORDER BY id")
        let expected = ["http://127.0.0.1:1/a", "http://127.0.0.1:1/b"].map { Data($0.utf8) } + [Data(Array("http://127.0.0.1:1/caf".utf8) + [0xE9])]
        #expect(stored == expected.map { $0.map { String(format: "%02x", $0) }.joined() + "\n" }.joined())
        // Again from stdin: all duplicates now.
        let again = try uvfetch(["queue", "push", "--db", db, "-i", "-"], stdin: file)
        #expect(again.stdout == "0 pushed, 5 duplicates, 2 malformed\n", "\(again.stdout)")
        let status = try uvfetch(["queue", "status", "--db", db])
        #expect(status.stdout.hasPrefix("pending 3\nleased 0\ndone 0\nfailed 0\ntotal 3\n"), "\(status.stdout)")
        let json = try uvfetch(["queue", "status", "--db", db, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(object?["pending"] as? Int == 3 && object?["total"] as? Int == 3, "\(json.stdout)")
    }

    @Test func anUnreadableInputIsAUsageError() throws {
        let cluster = try SharedCluster.get()
        let db = try cluster.makeDatabase()
        let run = try uvfetch(["queue", "push", "--db", db, "-i", "/nonexistent/urls.txt"])
        #expect(run.status == 64)
        #expect(run.stderr.contains("cannot read /nonexistent/urls.txt"), "\(run.stderr)")
    }

    @Test func anUnreachableDatabaseFailsClearlyAndAtOnce() throws {
        // A port nothing listens on (the cluster's port + 1 would be a guess: take a fresh one).
        let closed = try ClosedPort()
        let started = Date()
        for arguments in [["queue", "status"], ["worker", "-q"]] {
            let run = try uvfetch(arguments + ["--db", "postgres://someone:topsecret@127.0.0.1:\(closed.port)/db"], timeout: 30)
            #expect(run.status == 69, "\(arguments): \(run.status) \(run.stderr)")
            #expect(run.stderr.contains("uvfetch: cannot connect to postgres://someone@127.0.0.1:\(closed.port)/db"), "\(run.stderr)")
            #expect(!run.stderr.contains("topsecret"))
        }
        #expect(Date().timeIntervalSince(started) < 30)
    }

    @Test func aBadURLIsAUsageErrorWithoutThePassword() throws {
        let run = try uvfetch(["queue", "status", "--db", "postgres://u:topsecret@h:notaport/db"])
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stderr.contains("invalid database port"), "\(run.stderr)")
        #expect(!run.stderr.contains("topsecret"))
    }
}

/// A TCP port on 127.0.0.1 that refuses connections: bound, never listened on, until released.
final class ClosedPort {
    let port: Int
    private let descriptor: Int32

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound else { throw ClusterError("bind failed") }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }
}
