import Foundation
import Testing

/// The records of a worker's WARC file as warcio (PyPI, a reader no one here wrote) reads them,
/// after Apps/Tests/Scripts/warc_check.py has checked every digest.
struct ArchiveRecords {
    /// One record's WARC fields, by their lowercased names; absent fields left out.
    typealias Record = [String: String]

    /// The fields read: what a response and a revisit of it are matched by.
    static let fields = ["warc-type", "warc-target-uri", "warc-record-id", "warc-date", "warc-payload-digest", "warc-profile",
                         "warc-refers-to", "warc-refers-to-target-uri", "warc-refers-to-date"]

    /// The file's records, in order.
    let records: [Record]

    /// Checks and reads `path`; records the failure in the test (and reads nothing) when the
    /// archive does not pass.
    init(path: String) throws {
        let run = try shell("""
            command -v warcio >/dev/null || { echo "warcio is missing: run scripts/install-deps.sh (make test does)" >&2; exit 97; }
            python3 '\(Self.check)' '\(path)' || exit 98
            warcio index -f \(Self.fields.joined(separator: ",")) '\(path)'
            """)
        #expect(run.status == 0, "warcio on \(path): \(run.stderr)")
        records = try run.stdout.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
            return object.compactMapValues { $0 as? String }
        }
    }

    /// The `response` records.
    var responses: [Record] { records.filter { $0["warc-type"] == "response" } }
    /// The `revisit` records.
    var revisits: [Record] { records.filter { $0["warc-type"] == "revisit" } }

    /// `warcio check`, its complaint about chunked payloads aside.
    private static let check = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/warc_check.py").path
}

/// Runs `script` with /bin/sh; its status and output.
func shell(_ script: String) throws -> UVFetchRun {
    let child = try UVFetchChild(["-c", script], executable: "/bin/sh")
    let exited = child.wait(timeout: 120)
    return UVFetchRun(status: exited ? child.status : -1, stdout: child.stdout, stderr: child.stderr)
}
