import Foundation
import Synchronization
import Testing
import UVFetchCore

/// The JSON Lines record's `url` is the input line exactly as given (trimmed of the spaces and
/// tabs around it), whatever the URL parser makes of it; `requestURL` and `effectiveURL` say
/// what was requested.
@Suite(.tags(.childProcess), .serialized) struct FetchRecordURLTests {
    /// A proxy that answers everything itself, so hosts that exist nowhere (an IDN name) need no
    /// DNS; it redirects `/hop` to `final`, and keeps every request target it received.
    private final class Targets: Sendable {
        let list = Mutex<[String]>([])
    }

    private static func proxy(targets: Targets) throws -> ScriptedServer {
        try ScriptedServer { connection in
            try connection.serveKeepAlive { request in
                targets.list.withLock { $0.append(request.target) }
                if request.target.hasSuffix("/hop") {
                    return ScriptedResponse.text("", status: 302, reason: "Found", headers: [("Location", "final")])
                }
                return ScriptedResponse.text("ok")
            }
        }
    }

    private static func records(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    @Test func theRecordsURLIsTheLineAsGiven() throws {
        let targets = Targets()
        let proxy = try Self.proxy(targets: targets)
        defer { proxy.stop() }
        let lines = [
            "http://spaces.test/a b/c%20d?q=x y&r=%41",
            "http://bücher.test/straße?q=ü",
            "http://escapes.test/%7Euser/%41%2f?x=%2F&y=%e2%82%ac",
            "HTTP://Case.TEST:80/./x/../y",
            "http://hop.test/hop",
        ]
        var input = Data()
        for line in lines { input.append(Data(" \t\(line)\t \r\n".utf8)) }
        // Not UTF-8: 0xFF and a lone continuation byte in the path.
        let invalid: [UInt8] = Array("http://bytes.test/".utf8) + [0xFF, 0x80] + Array("z".utf8)
        input.append(Data(invalid + [0x0A]))
        let file = temporaryFile("record-urls.txt")
        try input.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let result = try runUVFetch(["--concurrency", "1", "-x", "http://127.0.0.1:\(proxy.port)", "--jsonl", "-", "-i", file.path])
        #expect(result.status == ExitStatus.success, "\(result.stdout) \(result.stderr)")
        let records: [[String: Any]] = Self.records(result.stdout)
        #expect(records.count == lines.count + 1)
        for (line, record) in zip(lines, records) {
            #expect(record["url"] as? String == line)
            #expect(record["urlBase64"] is NSNull)
        }
        var byURL: [String: [String: Any]] = [:]
        for record in records { byURL[record["url"] as? String ?? ""] = record }
        #expect(byURL[lines[0]]?["requestURL"] as? String == "http://spaces.test/a%20b/c%20d?q=x%20y&r=%41")
        #expect(byURL[lines[1]]?["requestURL"] as? String == "http://xn--bcher-kva.test/stra%C3%9Fe?q=%C3%BC")
        #expect(byURL[lines[2]]?["requestURL"] as? String == lines[2])
        #expect(byURL[lines[4]]?["effectiveURL"] as? String == "http://hop.test/final")
        #expect(byURL[lines[0]]?["effectiveURL"] as? String == byURL[lines[0]]?["requestURL"] as? String)

        // The line that is not UTF-8: U+FFFD in `url`, its exact bytes in `urlBase64`, and the
        // request sent with those bytes escaped, not with U+FFFD's.
        let last = records.last ?? [:]
        #expect(last["url"] as? String == "http://bytes.test/\u{FFFD}\u{FFFD}z")
        #expect((last["urlBase64"] as? String).flatMap { Data(base64Encoded: $0) } == Data(invalid))
        #expect(last["requestURL"] as? String == "http://bytes.test/%FF%80z")
        let received = targets.list.withLock { $0 }
        #expect(received.contains("http://bytes.test/%FF%80z"))
        // The escapes written beside a space are sent as written, not escaped again (%2520).
        #expect(received.contains("http://spaces.test/a%20b/c%20d?q=x%20y&r=%41"))
    }

    @Test func everyRecordHasEveryKey() throws {
        let result = try runUVFetch(["--jsonl", "-", "http://127.0.0.1:1/refused"])
        let record = Self.records(result.stdout).first ?? [:]
        for key in ["url", "urlBase64", "requestURL", "effectiveURL", "status", "bytes", "timings", "error", "attempts", "file",
                    "protocol", "etag", "lastModified", "notModified", "capture"] {
            #expect(record.keys.contains(key), "missing \(key) in \(result.stdout)")
        }
        #expect(record["url"] as? String == "http://127.0.0.1:1/refused")
        #expect(record["effectiveURL"] as? String == "http://127.0.0.1:1/refused")
    }

    /// An argument whose bytes are not UTF-8 is taken as bytes, as the same line from -i is:
    /// sent as `%FF`, not as U+FFFD's `%EF%BF%BD` (what Swift's decoding of argv made of it),
    /// and kept whole in `urlBase64`. A list that starts with a byte order mark loses no URL.
    @Test func argumentsAreTakenAsBytesAndAByteOrderMarkIsSkipped() throws {
        let targets = Targets()
        let proxy = try Self.proxy(targets: targets)
        defer { proxy.stop() }
        let result = try runShell("""
            printf '\\357\\273\\277http://bom.test/first\\nhttp://bom.test/second\\n' > "$D/list"
            "$UVFETCH" --concurrency 1 -x http://127.0.0.1:\(proxy.port) --jsonl - -i "$D/list" "$(printf 'http://bytes.test/arg\\377z')" http://plain.test/ok
            """)
        #expect(result.status == ExitStatus.success, "\(result.stdout) \(result.stderr)")
        #expect(!result.stderr.contains("not an http(s) URL"), "\(result.stderr)")
        let records = Self.records(result.stdout)
        #expect(records.count == 4, "\(result.stdout)")
        let bytes: [UInt8] = Array("http://bytes.test/arg".utf8) + [0xFF] + Array("z".utf8)
        let argument = records.first { ($0["url"] as? String)?.hasPrefix("http://bytes.test/") == true } ?? [:]
        #expect(argument["url"] as? String == "http://bytes.test/arg\u{FFFD}z")
        #expect((argument["urlBase64"] as? String).flatMap { Data(base64Encoded: $0) } == Data(bytes))
        #expect(argument["requestURL"] as? String == "http://bytes.test/arg%FFz")
        let received = targets.list.withLock { $0 }
        #expect(received.contains("http://bytes.test/arg%FFz"), "\(received)")
        #expect(!received.contains { $0.contains("%EF%BF%BD") }, "\(received)")
        #expect(received.contains("http://bom.test/first"), "\(received)")
        #expect(records.contains { $0["url"] as? String == "http://bom.test/first" })
    }
}
