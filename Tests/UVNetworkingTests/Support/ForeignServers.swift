// Web servers nobody here wrote, from Debian: apache2 (mod_deflate), h2o and lighttpd
// (mod_deflate), each serving the same files with compression on. They disagree where ranges,
// content codings and validators meet (docs/conformance.md, "Foreign servers"), which is what the
// ForeignServers suites check the client against. Each is started on first use on a free loopback
// port with a configuration, pid file and logs of its own in a temporary directory (never the
// system's instance or port 80), shared by the test process and stopped at its exit.

#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The foreign servers, as test arguments.
enum ForeignServerKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case apache, h2o, lighttpd

    var description: String { rawValue }
}

/// A running foreign server.
struct ForeignServer: Sendable {
    let kind: ForeignServerKind
    let port: Int
    /// Its temporary directory: configuration, logs, and the document root `www`.
    let directory: String

    var baseURL: String { "http://127.0.0.1:\(port)" }
    func url(_ path: String) -> String { baseURL + path }

    /// 200 KiB of text (text/plain, which every server here compresses).
    static let textPath = "/text.txt"
    /// A few bytes of text: what the start-up probe asks for.
    static let smallPath = "/small.txt"
    /// 200 KiB of random bytes (application/octet-stream, which none of them compresses).
    static let dataPath = "/data.bin"

    static let smallBody = "small file\n"

    /// The content of `/text.txt`: numbered lines of words drawn by a fixed seed, so that it
    /// compresses (to about a fifth) without being one repeated block.
    static let textBody: [UInt8] = {
        let words = ["range", "coding", "validator", "apache", "lighttpd", "h2o", "gzip", "brotli", "zstd",
                     "partial", "content", "entity", "tag", "modified", "since", "match", "bytes", "server"]
        var generator = SplitMix64(seed: 37)
        var text: [UInt8] = []
        var line = 0
        while text.count < 200 << 10 {
            var words8: [String] = []
            for _ in 0..<8 { words8.append(words[Int(generator.next() % UInt64(words.count))]) }
            text += Array("\(line) \(words8.joined(separator: " "))\n".utf8)
            line += 1
        }
        return Array(text.prefix(200 << 10))
    }()

    /// The content of `/data.bin`.
    static let dataBody: [UInt8] = {
        var generator = SplitMix64(seed: 38)
        return (0..<(200 << 10)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    }()

    /// When every file was last modified: 2026-01-01 00:00:00 UTC.
    static let lastModified = Date(timeIntervalSince1970: 1_767_225_600)
    /// `lastModified` as Last-Modified carries it.
    static let lastModifiedField = "Thu, 01 Jan 2026 00:00:00 GMT"

    /// Writes the files above into `docroot`, dated `lastModified`.
    static func populate(_ docroot: String) throws {
        try FileManager.default.createDirectory(atPath: docroot, withIntermediateDirectories: true)
        try write(textBody, to: docroot + textPath)
        try write(Array(smallBody.utf8), to: docroot + smallPath)
        try write(dataBody, to: docroot + dataPath)
    }

    /// Writes `bytes` to `path`, dated `lastModified`. A file modified within the second of a
    /// response has only weak validators (RFC 9110 §8.8.2.2: Apache then sends `W/` ETags and
    /// refuses If-Range by date), so the files get a date well in the past.
    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.modificationDate: lastModified], ofItemAtPath: path)
    }
}

extension TestServers {
    /// The foreign server `kind`, started on first use.
    static func foreign(_ kind: ForeignServerKind) throws -> ForeignServer {
        switch kind {
        case .apache: try sharedApache.get()
        case .h2o: try sharedH2O.get()
        case .lighttpd: try sharedLighttpd.get()
        }
    }

    private static let sharedApache = Result { try startApache() }
    private static let sharedH2O = Result { try startH2O() }
    private static let sharedLighttpd = Result { try startLighttpd() }

    static let foreignInstallHint = "run `make test`, which installs apache2, h2o and lighttpd (scripts/install-deps.sh)"

    /// Starts `binary` with the argv `write` returns after it wrote its configuration for `port`
    /// into a fresh temporary directory (whose `www` holds `ForeignServer.populate`'s files), and
    /// returns once GET /small.txt answers. A port taken between the probe and the bind means
    /// another try on a new port, up to five.
    static func launchForeign(_ kind: ForeignServerKind, binary: String, errorLog: String,
                              write: (_ directory: String, _ port: Int) throws -> [String]) throws -> ForeignServer {
        guard access(binary, X_OK) == 0 else { throw TestServerError(description: "\(binary) is missing: \(foreignInstallHint)") }
        var failures: [String] = []
        for _ in 1...5 {
            let directory = try makeTemporaryDirectory(prefix: "uvnetworking-\(kind)")
            // mkdtemp makes it 0700; Apache's children, as www-data, must read the files.
            chmod(directory, 0o755)
            try ForeignServer.populate(directory + "/www")
            let port = try freeLoopbackPort()
            let arguments = try write(directory, port)
            let server = try SupervisedProcess.launch(arguments, directory: directory)
            let outcome = waitUntilServing(server, port: port, path: ForeignServer.smallPath, timeout: 15) {
                $0 == ForeignServer.smallBody
            }
            if outcome == nil { return ForeignServer(kind: kind, port: port, directory: directory) }
            let log = (try? String(contentsOfFile: directory + "/" + errorLog, encoding: .utf8)) ?? ""
            let output = server.output()
            server.release()
            try? FileManager.default.removeItem(atPath: directory)
            failures.append("\(outcome!); \(errorLog): \(log)\(output.isEmpty ? "" : "; output: \(output)")")
            guard (log + output).contains("in use") else { break }
        }
        throw TestServerError(description: "\(kind) did not start: " + failures.joined(separator: " | "))
    }
}
