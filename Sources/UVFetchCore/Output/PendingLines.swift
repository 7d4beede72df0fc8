import Foundation

/// The lines a run has produced and not yet written: records (JSON Lines) and the lines for
/// standard output, gathered on the completion queue while a batch of results is handled and
/// written at its end (`FetchRunner` flushes from a block queued behind the batch), or as soon
/// as a pipe's worth is waiting. A write per batch instead of one per URL, and still only whole
/// lines written (`LineOutput.writeLines`).
///
/// Touched only on the runner's completion queue.
final class PendingLines: @unchecked Sendable {
    // @unchecked: confined to the completion queue.

    /// Where records go, if anywhere.
    private let records: LineOutput?
    private var recordBytes: [UInt8] = []
    private var standardBytes: [UInt8] = []
    /// A flush is queued behind the batch being handled.
    var flushQueued = false

    /// Bytes waiting before a flush happens at once: what a pipe takes in one write.
    static let threshold = Int(PIPE_BUF)

    init(records: LineOutput?) {
        self.records = records
    }

    /// Whether nothing waits.
    var isEmpty: Bool { recordBytes.isEmpty && standardBytes.isEmpty }

    /// Whether a pipe's worth waits: flush now.
    var isFull: Bool { recordBytes.count >= Self.threshold || standardBytes.count >= Self.threshold }

    /// Adds a record's line (ending with a newline).
    func addRecord(_ line: Data) {
        recordBytes.append(contentsOf: line)
    }

    /// Adds a line for standard output (ending with a newline).
    func addStandard(_ line: String) {
        var line = line
        line.withUTF8 { standardBytes.append(contentsOf: $0) }
    }

    /// Writes what waits, the records first; `beforeStandard` runs just before lines go to
    /// standard output (the progress line is cleared there). What waits is gone afterwards,
    /// written or not.
    /// - Throws: `WriteFailure` of the first write that failed; lines after it are dropped.
    func flush(beforeStandard: () -> Void) throws(WriteFailure) {
        defer {
            recordBytes.removeAll(keepingCapacity: true)
            standardBytes.removeAll(keepingCapacity: true)
        }
        if let records, !recordBytes.isEmpty { try records.writeLines(recordBytes) }
        if !standardBytes.isEmpty {
            beforeStandard()
            try LineOutput.standardOutput.writeLines(standardBytes)
        }
    }

    /// Drops what waits (after a failed write: the run is stopping).
    func drop() {
        recordBytes.removeAll()
        standardBytes.removeAll()
    }
}
