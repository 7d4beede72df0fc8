import Glibc
import UVFetchCore

/// The per-record part of the gates: `uvfetch --jsonl` records as a run writes them, with no
/// request around them, so that the figure is the record's cost alone. As uvfetch's batch of
/// pending lines does (PendingLines, internal to UVFetchCore): each record encoded by
/// `RecordEncoder` straight into one buffer that keeps its capacity, its newline after it, and
/// the buffer written with `LineOutput.writeLines` (to /dev/null) once a pipe's worth waits. Four
/// shapes of record take turns: a success saved to a file, a failure with its error, a URL given
/// in base64, and a long URL whose characters need escaping.
enum RecordGate {
    static let records: [FetchRecord] = [
        FetchRecord(url: "http://127.0.0.1:8080/items/12345", status: 200, bytes: 12,
                    timings: .init(total: 0.000_912, connect: 0.000_101, firstByte: 0.000_655), error: nil, attempts: 1,
                    file: "copies/items-12345"),
        FetchRecord(url: "http://203.0.113.9/missing", status: nil, bytes: 0, timings: .init(total: 10.0),
                    error: .init(code: "connectTimeout", message: "connect to 203.0.113.9:80 timed out after 10 s", kind: "timeout"),
                    attempts: 3),
        FetchRecord(url: "http://example.test/caf\u{e9}", status: 404, bytes: 153, timings: .init(total: 0.002, connect: 0.001),
                    error: nil, attempts: 1, urlBase64: "aHR0cDovL2V4YW1wbGUudGVzdC9jYWbp"),
        FetchRecord(url: "https://search.example.test/q?text=%22tabs%09and%5Cslashes%22&page=2&lang=en-GB&sort=relevance",
                    status: 301, bytes: 0, timings: .init(total: 0.004, connect: 0.001, tls: 0.002, firstByte: 0.003),
                    error: nil, attempts: 2, effectiveURL: "https://search.example.test/q?text=%22tabs%09and%5Cslashes%22&page=2\u{1}"),
    ]

    /// Writes `count` records to `output`; the count of lines written, so that the work cannot
    /// be optimised away.
    static func run(count: Int, to output: LineOutput) -> Int {
        let encoder = RecordEncoder()
        var pending: [UInt8] = []
        var written = 0
        func flush() {
            do {
                try output.writeLines(pending)
            } catch {
                UVGate.fail("a record write failed: \(error)")
            }
            pending.removeAll(keepingCapacity: true)
        }
        for n in 0..<count {
            guard encoder.append(records[n % records.count], to: &pending) else { UVGate.fail("a record did not encode") }
            pending.append(UInt8(ascii: "\n"))
            written += 1
            if pending.count >= Int(PIPE_BUF) { flush() }
        }
        flush()
        return written
    }
}
