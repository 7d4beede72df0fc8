import NIOCore
import PostgresNIO
import UVFetchCore

/// What `uvfetch queue push` did.
public struct PushCounts: Sendable, Equatable {
    /// URLs added to the queue.
    public var pushed = 0
    /// URLs already there and finished that `--refetch` put back to pending.
    public var requeued = 0
    /// URLs already there (pushed before, or twice in this input) and left as they were.
    public var duplicates = 0
    /// Lines that are not http(s) URLs: reported, not pushed.
    public var malformed = 0

    /// "N pushed, N duplicates, N malformed", with "N requeued" after the first when some were.
    public var summary: String {
        "\(pushed) pushed, " + (requeued > 0 ? "\(requeued) requeued, " : "") + "\(duplicates) duplicates, \(malformed) malformed"
    }
}

extension QueueDatabase {
    /// Adds every URL of `input` to the queue as `pending`, `batchSize` a statement; a URL
    /// already in the queue is left as it is (whatever its state), unless `refetch`: then one
    /// that is finished (done or failed) goes back to pending, its claims counted afresh, to be
    /// fetched again, conditionally when its last response had validators (its result stays
    /// until the new one replaces it). One pending or leased is left. URLs are kept as the input
    /// gave them (trimmed of spaces and tabs), bytes that are not UTF-8 included; malformed
    /// lines go to `diagnostics` and are not pushed.
    /// - Throws: `QueueError`. What earlier statements pushed stays pushed: pushing the same
    ///   input again completes it (the rest count as duplicates).
    public func push(_ input: URLInput, batchSize: Int = 1_000, refetch: Bool = false,
                     diagnostics: (String) -> Void) throws(QueueError) -> PushCounts {
        var counts = PushCounts()
        var batch: [ByteBuffer] = []
        batch.reserveCapacity(batchSize)
        func send() throws(QueueError) {
            guard !batch.isEmpty else { return }
            let (added, requeued) = try insert(batch, refetch: refetch)
            counts.pushed += added
            counts.requeued += requeued
            counts.duplicates += batch.count - added - requeued
            batch.removeAll(keepingCapacity: true)
        }
        for entry in input {
            switch entry {
            case .malformed(let place, let text):
                counts.malformed += 1
                diagnostics("uvfetch: \(place): not an http(s) URL: \(text)")
            case .url(_, let text, let bytes):
                batch.append(bytes.map { ByteBuffer(bytes: $0) } ?? ByteBuffer(string: text))
                if batch.count >= batchSize { try send() }
            }
        }
        try send()
        return counts
    }

    /// Inserts `urls` in their order (ids follow it), and with `refetch` puts the finished ones
    /// among those already there back to pending; returns how many were new, and requeued.
    /// Both parts see the table as it was before the statement: a URL twice in one batch is new
    /// once, and one pushed by this statement is never requeued by it.
    private func insert(_ urls: [ByteBuffer], refetch: Bool) throws(QueueError) -> (added: Int, requeued: Int) {
        let query: PostgresQuery = """
            WITH added AS (
                INSERT INTO uvfetch_urls (url)
                SELECT u FROM unnest(\(urls)::bytea[]) WITH ORDINALITY AS t(u, n) ORDER BY n
                ON CONFLICT (url_digest) DO NOTHING
                RETURNING 1
            ), requeued AS (
                UPDATE uvfetch_urls SET state = 'pending', attempts = 0, last_error = NULL, updated_at = now()
                WHERE \(refetch)::boolean AND state IN ('done', 'failed')
                    AND url_digest IN (SELECT sha256(u) FROM unnest(\(urls)::bytea[]) AS t(u))
                RETURNING 1)
            SELECT (SELECT count(*) FROM added), (SELECT count(*) FROM requeued)
            """
        return try run("queue push") { session in
            var counts = (added: 0, requeued: 0)
            for try await (added, requeued) in try await session.query(query).decode((Int, Int).self) {
                counts = (added, requeued)
            }
            return counts
        }
    }
}
