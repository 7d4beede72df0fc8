import PostgresNIO
import UVFetchCore

extension QueueDatabase {
    /// Reads every payload of `uvfetch_payloads` into `payloads` (a worker starting with
    /// `--warc-dedup`), `pageSize` rows a statement in serial order, so that a payload archived
    /// by any earlier worker is a revisit in this one's archive. Returns the rows read.
    /// - Throws: `QueueError` with the server's message.
    public func loadPayloads(into payloads: FleetPayloads, pageSize: Int = 20_000) throws(QueueError) -> Int {
        var read = 0
        while true {
            let after = payloads.lastSerial
            let page = try run("reading the archived payloads") { session -> ([ArchivedPayload], Int64?) in
                let rows = try await session.query("""
                    SELECT serial, digest, record_id, target_uri, date FROM uvfetch_payloads
                    WHERE serial > \(after) ORDER BY serial LIMIT \(pageSize)
                    """)
                var found: [ArchivedPayload] = []
                var last: Int64?
                for try await (serial, digest, recordID, targetURI, date) in rows.decode((Int64, String, String, String, String).self) {
                    found.append(ArchivedPayload(digest: digest, recordID: recordID, targetURI: targetURI, date: date))
                    last = serial
                }
                return (found, last)
            }
            payloads.learn(page.0, through: page.1)
            read += page.0.count
            if page.0.count < pageSize { return read }
        }
    }
}
