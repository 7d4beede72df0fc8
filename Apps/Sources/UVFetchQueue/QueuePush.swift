import NIOCore
import PostgresNIO
import UVFetchCore

/// What `uvfetch queue push` did.
public struct PushCounts: Sendable, Equatable {
    /// URLs added to the queue.
    public var pushed = 0
    /// URLs already there (pushed before, or twice in this input).
    public var duplicates = 0
    /// Lines that are not http(s) URLs: reported, not pushed.
    public var malformed = 0

    /// "N pushed, N duplicates, N malformed".
    public var summary: String { "\(pushed) pushed, \(duplicates) duplicates, \(malformed) malformed" }
}

extension QueueDatabase {
    /// Adds every URL of `input` to the queue as `pending`, `batchSize` a statement; a URL
    /// already in the queue is left as it is (whatever its state). URLs are kept as the input
    /// gave them (trimmed of spaces and tabs), bytes that are not UTF-8 included; malformed
    /// lines go to `diagnostics` and are not pushed.
    /// - Throws: `QueueError`. What earlier statements pushed stays pushed: pushing the same
    ///   input again completes it (the rest count as duplicates).
    public func push(_ input: URLInput, batchSize: Int = 1_000, diagnostics: (String) -> Void) throws(QueueError) -> PushCounts {
        var counts = PushCounts()
        var batch: [ByteBuffer] = []
        batch.reserveCapacity(batchSize)
        func send() throws(QueueError) {
            guard !batch.isEmpty else { return }
            let added = try insert(batch)
            counts.pushed += added
            counts.duplicates += batch.count - added
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

    /// Inserts `urls` in their order (ids follow it); returns how many were new.
    private func insert(_ urls: [ByteBuffer]) throws(QueueError) -> Int {
        let query: PostgresQuery = """
            WITH added AS (
                INSERT INTO uvfetch_urls (url)
                SELECT u FROM unnest(\(urls)::bytea[]) WITH ORDINALITY AS t(u, n) ORDER BY n
                ON CONFLICT (url_digest) DO NOTHING
                RETURNING 1)
            SELECT count(*) FROM added
            """
        return try run("queue push") { session in
            var added = 0
            for try await count in try await session.query(query).decode(Int.self) { added = count }
            return added
        }
    }
}
