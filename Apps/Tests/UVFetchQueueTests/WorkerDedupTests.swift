import Foundation
import Testing

/// `uvfetch worker --warc --warc-dedup` across the fleet: the queue's `uvfetch_payloads` holds
/// the originals each worker archived, so a payload one worker archived is a revisit in the
/// others' files, and in later runs (`queue push --refetch`). LoopbackHTTPServer ignores the
/// query, so `/items/N?copy=K` has `/items/N`'s body at another URL.
@Suite(.tags(.postgres), .serialized, .enabled(if: PostgresCluster.isInstalled, "PostgreSQL is not installed (scripts/install-deps.sh)"))
struct WorkerDedupTests {
    @Test func workersInTurnArchiveEachPayloadOnceAndReferToEachOther() throws {
        let fixture = try QueueFixture(count: 30)
        let directory = try temporaryFile("placeholder", Data()).deletingLastPathComponent()
        func worker(_ name: String, dedup: Bool = true) throws -> ArchiveRecords {
            let path = directory.appendingPathComponent("\(name).warc.gz").path
            let run = try uvfetch(["worker", "--db", fixture.db, "-q", "--warc", path] + (dedup ? ["--warc-dedup"] : []))
            #expect(run.status == 0, "\(name): \(run.stderr)")
            return try ArchiveRecords(path: path)
        }

        // The first worker: 30 payloads, all originals.
        let first = try worker("first")
        #expect(first.responses.count == 30 && first.revisits.isEmpty)
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_payloads") == 30)

        // The second: the same 30 payloads at other URLs, 10 new ones, and one of those again.
        let base = "http://127.0.0.1:\(fixture.port)"
        let copies = (0..<30).map { "\(base)/items/\($0)?copy=1" }
        let fresh = (30..<40).map { "\(base)/items/\($0)" } + ["\(base)/items/30?copy=1"]
        let more = try temporaryFile("more.txt", Data((copies + fresh).map { $0 + "\n" }.joined().utf8))
        #expect(try uvfetch(["queue", "push", "--db", fixture.db, "-i", more.path]).stdout == "41 pushed, 0 duplicates, 0 malformed\n")
        let second = try worker("second")
        #expect(second.responses.count == 10 && second.revisits.count == 31, "\(second.responses.count) \(second.revisits.count)")
        try Self.expectRevisits(second, referTo: [first, second])
        // Each copy refers to the first worker's record of its item, a record of another file.
        let firstByURI = Dictionary(uniqueKeysWithValues: first.responses.map { ($0["warc-target-uri"]!, $0) })
        for revisit in second.revisits where revisit["warc-target-uri"]!.contains("?copy=1") {
            let uri = revisit["warc-target-uri"]!
            let item = String(uri.prefix { $0 != "?" })
            if let original = firstByURI[item] {
                #expect(revisit["warc-refers-to"] == original["warc-record-id"], "\(uri)")
                #expect(revisit["warc-refers-to-target-uri"] == item)
                #expect(revisit["warc-refers-to-date"] == original["warc-date"])
            } else {
                // /items/30?copy=1: a revisit of the second worker's own /items/30.
                #expect(uri == "\(base)/items/30?copy=1")
                #expect(revisit["warc-refers-to-target-uri"] == "\(base)/items/30")
            }
        }

        // The first 30 URLs pushed again: all revisits of the first worker's records.
        let again = try uvfetch(["queue", "push", "--db", fixture.db, "-i", fixture.list.path, "--refetch"])
        #expect(again.stdout == "0 pushed, 30 requeued, 0 duplicates, 0 malformed\n", "\(again.stdout) \(again.stderr)")
        let third = try worker("third")
        #expect(third.responses.isEmpty && third.revisits.count == 30)
        try Self.expectRevisits(third, referTo: [first])

        // Across the three files, each payload is an original exactly once.
        let originals = (first.responses + second.responses + third.responses).map { $0["warc-payload-digest"]! }
        #expect(originals.count == 40 && Set(originals).count == 40)
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_payloads") == 40)

        // Without --warc-dedup, nothing changes: every response archived whole, the table untouched.
        #expect(try uvfetch(["queue", "push", "--db", fixture.db, "-i", fixture.list.path, "--refetch"]).status == 0)
        let plain = try worker("plain", dedup: false)
        #expect(plain.responses.count == 30 && plain.revisits.isEmpty)
        #expect(try fixture.count("SELECT count(*) FROM uvfetch_payloads") == 40)
        #expect(try fixture.states() == ["done": 71])
    }

    /// Two workers at once, each payload at two URLs: a worker learns the other's originals
    /// with its statements, so most second copies are revisits of the other's records; a
    /// payload both archive before either hears of the other's stays an original in both files.
    @Test func workersAtOnceReferOnlyToRecordsTheFleetHolds() throws {
        let fixture = try QueueFixture(count: 300)
        let base = "http://127.0.0.1:\(fixture.port)"
        let copies = try temporaryFile("copies.txt", Data((0..<300).map { "\(base)/items/\($0)?copy=1\n" }.joined().utf8))
        #expect(try uvfetch(["queue", "push", "--db", fixture.db, "-i", copies.path]).status == 0)
        let directory = try temporaryFile("placeholder", Data()).deletingLastPathComponent()
        let paths = ["a", "b"].map { directory.appendingPathComponent("\($0).warc.gz").path }
        // Held to 100 requests a second each, so that the two overlap.
        let workers = try paths.map { path in
            try UVFetchChild(["worker", "--db", fixture.db, "-q", "--batch-size", "20", "--rate-per-host", "100",
                              "--warc", path, "--warc-dedup"])
        }
        for worker in workers {
            #expect(worker.wait(timeout: 120))
            #expect(worker.status == 0, "\(worker.stderr)")
        }
        #expect(try fixture.states() == ["done": 600])
        let archives = try paths.map { try ArchiveRecords(path: $0) }
        let all = archives.flatMap(\.records).filter { $0["warc-type"] == "response" || $0["warc-type"] == "revisit" }
        #expect(all.count == 600)
        #expect(Set(all.map { $0["warc-target-uri"]! }).count == 600)
        for archive in archives {
            // Within a file, a payload is an original once.
            let digests = archive.responses.map { $0["warc-payload-digest"]! }
            #expect(Set(digests).count == digests.count)
            try Self.expectRevisits(archive, referTo: archives)
        }
        let crossFile = zip(archives, archives.reversed()).map { archive, other in
            let ids = Set(other.responses.map { $0["warc-record-id"]! })
            return archive.revisits.filter { ids.contains($0["warc-refers-to"]!) }.count
        }
        // Both took a share (a worker that started late on a loaded machine may find the queue
        // drained): then the copies, pushed last, reach one of them after the other's originals.
        if archives.allSatisfy({ $0.responses.count + $0.revisits.count >= 100 }) {
            #expect(crossFile.reduce(0, +) > 0, "no revisit refers to the other worker's file: \(crossFile)")
        }
        // The table holds one original per payload, each a response in one of the files.
        let responses = Dictionary(archives.flatMap(\.responses).map { ($0["warc-record-id"]!, $0) }) { first, _ in first }
        let rows = try fixture.cluster.psql(fixture.db, "SELECT digest || ' ' || record_id FROM uvfetch_payloads")
            .split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(rows.count == 300)
        for row in rows { #expect(responses[row[1]]?["warc-payload-digest"] == row[0], "\(row)") }
        let originals = archives.flatMap(\.responses).count
        print("two workers at once: \(originals) originals for 300 payloads, \(crossFile) revisits across files; per file \(archives.map { ($0.responses.count, $0.revisits.count) })")
    }

    /// Every revisit of `archive` is an identical-payload-digest one whose WARC-Refers-To is a
    /// response record of `originals` with the same payload, URI and date.
    private static func expectRevisits(_ archive: ArchiveRecords, referTo originals: [ArchiveRecords]) throws {
        let byID = Dictionary(originals.flatMap(\.responses).map { ($0["warc-record-id"]!, $0) }) { first, _ in first }
        for revisit in archive.revisits {
            #expect(revisit["warc-profile"] == "http://netpreserve.org/warc/1.1/revisits/identical-payload-digest")
            let original = try #require(byID[revisit["warc-refers-to"] ?? ""], "\(revisit) refers to no response")
            #expect(original["warc-payload-digest"] == revisit["warc-payload-digest"])
            #expect(original["warc-target-uri"] == revisit["warc-refers-to-target-uri"])
            #expect(original["warc-date"] == revisit["warc-refers-to-date"])
        }
    }
}
