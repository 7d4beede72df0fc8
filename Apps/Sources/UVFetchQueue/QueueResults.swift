import Foundation
import PostgresNIO
import UVFetchCore

/// Why `uvfetch queue results` stopped.
public enum ResultsError: Error, Sendable {
    /// The database failed.
    case database(QueueError)
    /// Writing the lines failed (a full disk, a closed pipe).
    case write(WriteFailure)
}

extension QueueDatabase {
    /// Writes every stored result to `output` as JSON Lines, the lines `--jsonl` wrote, in the
    /// order the URLs were pushed: a page of `pageSize` at a time (keyset pagination on the
    /// URL's id), so a queue of millions never sits in memory. Returns the lines written.
    /// - Throws: `ResultsError`; the lines written before are whole.
    public func writeResults(to output: LineOutput, pageSize: Int = 5_000) throws(ResultsError) -> Int {
        var after: Int64 = 0
        var written = 0
        while true {
            let from = after
            let page: (lines: [UInt8], last: Int64?, count: Int)
            do throws(QueueError) {
                page = try run("queue results") { session in
                    let rows = try await session.query("""
                        SELECT url_id, record FROM uvfetch_results WHERE url_id > \(from) ORDER BY url_id LIMIT \(pageSize)
                        """)
                    var lines: [UInt8] = []
                    var last: Int64?
                    var count = 0
                    for try await (id, record) in rows.decode((Int64, String).self) {
                        lines.append(contentsOf: record.utf8)
                        lines.append(0x0A)
                        last = id
                        count += 1
                    }
                    return (lines, last, count)
                }
            } catch {
                throw .database(error)
            }
            guard let last = page.last else { return written }
            do throws(WriteFailure) { try output.writeLines(page.lines) } catch { throw .write(error) }
            written += page.count
            after = last
        }
    }
}
