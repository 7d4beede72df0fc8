import Foundation
import HTTPTypes
import Synchronization
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// Ranges, content codings and validators against servers nobody here wrote: Debian's
    /// apache2 (mod_deflate), h2o and lighttpd (mod_deflate), all compressing text
    /// (Support/ForeignServers.swift). What each one answered is in docs/conformance.md, "Foreign
    /// servers"; the per-server expectations below are those measurements, so a server that
    /// changes its answer fails here rather than going unnoticed.
    @Suite(.tags(.nginx)) struct ForeignServersTests {
        private static let text = Data(ForeignServer.textBody)

        /// The coding each server picks for `Accept-Encoding: gzip, deflate, br, zstd`.
        private static func codingPicked(by kind: ForeignServerKind) -> String {
            switch kind {
            case .apache: "gzip" // mod_deflate only; mod_brotli is not loaded
            case .h2o: "br" // h2o 2.2 prefers br to gzip and has no zstd
            case .lighttpd: "zstd" // the first of deflate.allowed-encodings the request accepts
            }
        }

        @Test(arguments: ForeignServerKind.allCases) func aPlainGetIsDecoded(_ kind: ForeignServerKind) throws {
            let server = try TestServers.foreign(kind)
            let harness = ClientHarness()
            defer { harness.finish() }
            // Undecoded first, to see which coding the server picked for our default field.
            let raw = ClientHarness { $0.decompressesResponses = false }
            let encoded = raw.fetch(server.url(ForeignServer.textPath), fields: [("Accept-Encoding", "gzip, deflate, br, zstd")])
            raw.finish()
            #expect(encoded.response?.headerFields[.contentEncoding] == Self.codingPicked(by: kind))
            let encodedSize = try #require(encoded.data?.count)
            #expect(encodedSize < Self.text.count / 2, "\(encodedSize) bytes of \(Self.codingPicked(by: kind))")

            let outcome = harness.fetch(server.url(ForeignServer.textPath))
            #expect(outcome.error == nil)
            #expect(outcome.status == 200)
            #expect(outcome.data == Self.text)
            let small = harness.fetch(server.url(ForeignServer.smallPath))
            #expect(small.text == ForeignServer.smallBody)
        }

        /// A Range gets no Accept-Encoding of ours, so every server answers with the bytes of the
        /// file. With ours, Apache answered a 206 of gzip bytes (contentDecodingFailed) and
        /// lighttpd a 200 of the whole file; that each answers a 206 without Content-Encoding
        /// here shows the field was not sent.
        @Test(arguments: ForeignServerKind.allCases) func aRangeGetsTheFilesBytes(_ kind: ForeignServerKind) throws {
            let server = try TestServers.foreign(kind)
            let harness = ClientHarness()
            defer { harness.finish() }
            let outcome = harness.fetch(server.url(ForeignServer.textPath), fields: [("Range", "bytes=100-1099")])
            #expect(outcome.error == nil)
            #expect(outcome.status == 206)
            #expect(outcome.data == Self.text[100..<1100])
            #expect(outcome.response?.headerFields[.contentEncoding] == nil)
            #expect(outcome.response?.headerFields[.contentRange] == "bytes 100-1099/\(Self.text.count)")
        }

        /// What each server answers a Range with `Accept-Encoding: gzip` of the caller's own.
        private enum CodedRangeAnswer {
            /// A 206 of the gzip representation's bytes (Content-Range over its length).
            case gzipSlice
            /// A 206 of the file's bytes: the coding was not applied to a range.
            case identitySlice
            /// A 200 of the whole gzip representation: the range was not applied to a coding.
            case wholeGzip
        }

        private static func codedRangeAnswer(of kind: ForeignServerKind) -> CodedRangeAnswer {
            switch kind {
            case .apache: .gzipSlice
            case .h2o: .identitySlice
            case .lighttpd: .wholeGzip
            }
        }

        /// The caller's own Accept-Encoding is kept with a Range; whatever the server does with
        /// both, the task succeeds: a 206 is delivered exactly as curl (which decodes nothing
        /// without --compressed) receives it, and a 200 is decoded like any other.
        @Test(arguments: ForeignServerKind.allCases) func aRangeWithTheCallersAcceptEncoding(_ kind: ForeignServerKind) throws {
            let server = try TestServers.foreign(kind)
            let url = server.url(ForeignServer.textPath)
            let curl = try curlGet(url, fields: ["Accept-Encoding: gzip", "Range: bytes=100-1099"])
            let harness = ClientHarness()
            defer { harness.finish() }
            let outcome = harness.fetch(url, fields: [("Range", "bytes=100-1099"), ("Accept-Encoding", "gzip")])
            #expect(outcome.error == nil)
            #expect(outcome.status == curl.status)
            let fields = outcome.response?.headerFields
            switch Self.codedRangeAnswer(of: kind) {
            case .gzipSlice:
                #expect(outcome.status == 206)
                #expect(fields?[.contentEncoding] == "gzip")
                #expect(outcome.data == curl.body)
                #expect(outcome.data?.count == 1000)
                // A slice of the compressed representation, which is far shorter than the file.
                let range = try #require(fields?[.contentRange])
                #expect(range == curl.header("Content-Range"))
                let total = try #require(range.split(separator: "/").last.flatMap { Int($0) })
                #expect(total < Self.text.count / 2, "\(range)")
            case .identitySlice:
                #expect(outcome.status == 206)
                #expect(fields?[.contentEncoding] == nil)
                #expect(outcome.data == curl.body)
                #expect(outcome.data == Self.text[100..<1100])
            case .wholeGzip:
                #expect(outcome.status == 200)
                #expect(curl.header("Content-Encoding") == "gzip")
                #expect(try gunzipped(curl.body) == Self.text)
                #expect(outcome.data == Self.text)
            }
        }

        /// If-None-Match with the ETag the server gave for the same request fields, and
        /// If-Modified-Since with its Last-Modified, get a 304; a stale ETag gets the body.
        @Test(arguments: ForeignServerKind.allCases) func conditionalRequests(_ kind: ForeignServerKind) throws {
            let server = try TestServers.foreign(kind)
            let url = server.url(ForeignServer.textPath)
            let harness = ClientHarness()
            defer { harness.finish() }
            let first = harness.fetch(url)
            #expect(first.status == 200)
            let etag = try #require(first.response?.headerFields[.eTag])
            let lastModified = try #require(first.response?.headerFields[.lastModified])
            #expect(lastModified == ForeignServer.lastModifiedField)
            #expect(!etag.hasPrefix("W/"), "\(etag)")
            // Apache and lighttpd tag a coded representation apart from the file (a "-gzip" or
            // "-zstd" suffix); h2o gives every representation the file's tag.
            switch kind {
            case .apache: #expect(etag.hasSuffix("-gzip\""), "\(etag)")
            case .h2o: #expect(!etag.contains("-br"), "\(etag)")
            case .lighttpd: #expect(etag.hasSuffix("-zstd\""), "\(etag)")
            }

            let byTag = harness.fetch(url, fields: [("If-None-Match", etag)])
            #expect(byTag.error == nil)
            #expect(byTag.status == 304)
            #expect(byTag.data?.isEmpty ?? true)
            // A 304 should carry the ETag a 200 would have (RFC 9110 §15.4.5). Apache's carries
            // the file's own tag: mod_deflate, which adds "-gzip", never sees a 304.
            let tagOf304 = kind == .apache ? etag.replacingOccurrences(of: "-gzip\"", with: "\"") : etag
            #expect(byTag.response?.headerFields[.eTag] == tagOf304)
            let byDate = harness.fetch(url, fields: [("If-Modified-Since", lastModified)])
            #expect(byDate.status == 304)
            let stale = harness.fetch(url, fields: [("If-None-Match", "\"stale\"")])
            #expect(stale.status == 200)
            #expect(stale.data == Self.text)
        }

        /// Apache as shipped (no mod_headers cure, see `TestServers.apacheConfig`): its own gzip
        /// ETag never matches, so the conditional GET gets a whole 200, which the client decodes
        /// like any; the file's own tag does match.
        @Test func apacheAsShippedAnswersItsOwnGzipETagWithTheBody() throws {
            let server = try TestServers.foreign(.apache)
            let url = server.url("/shipped/text.txt")
            let harness = ClientHarness()
            defer { harness.finish() }
            let etag = try #require(harness.fetch(url).response?.headerFields[.eTag])
            #expect(etag.hasSuffix("-gzip\""))
            let again = harness.fetch(url, fields: [("If-None-Match", etag)])
            #expect(again.status == 200)
            #expect(again.response?.headerFields[.contentEncoding] == "gzip")
            #expect(again.data == Self.text)
            let fileTag = etag.replacingOccurrences(of: "-gzip\"", with: "\"")
            #expect(harness.fetch(url, fields: [("If-None-Match", fileTag)]).status == 304)
        }

        /// A download cut off halfway (by a relay that passes on only part of the body), cancelled
        /// with resume data, then resumed: the resumed request carries Range and If-Range and no
        /// Accept-Encoding of ours, and the server's 206 completes the file byte for byte.
        @Test(arguments: ForeignServerKind.allCases) func aCancelledDownloadResumes(_ kind: ForeignServerKind) throws {
            let server = try TestServers.foreign(kind)
            let cut = 80_000
            let relay = try CuttingRelay(upstreamPort: server.port, cut: cut)
            defer { relay.stop() }
            let harness = ClientHarness()
            let first = DownloadProbe()
            let task = harness.manager.downloadTask(with: Request(url: URL(string: relay.url(ForeignServer.dataPath))!, timeoutInterval: 30),
                                                    completionHandler: first.completion)
            task.resume()
            // The relay passes on exactly `cut` body bytes and then holds the connection open.
            #expect(waitUntil(timeout: 20) { task.countOfBytesReceived == Int64(cut) })
            task.cancel(byProducingResumeData: first.resumeDataHandler)
            #expect(first.wait()?.code == .cancelled)
            #expect(first.resumeDataDelivered.wait(timeout: .now() + 10) == .success)
            let resumeData = try #require(first.resumeData.withLock { $0.data })
            let decoded = try DownloadResumeData.decode(resumeData)
            #expect(decoded.bytesReceived == Int64(cut))
            #expect(decoded.contentEncoding == nil)

            let second = DownloadProbe()
            try harness.manager.downloadTask(withResumeData: resumeData, completionHandler: second.completion).resume()
            let outcome = try #require(second.wait())
            #expect(outcome.error == nil)
            #expect(outcome.status == 206)
            #expect(outcome.contents == Data(ForeignServer.dataBody))
            harness.finish()

            let requests = relay.requests
            try #require(requests.count == 2)
            #expect(requests[0].header("Accept-Encoding") == "gzip, deflate, br, zstd")
            #expect(requests[1].header("Range") == "bytes=\(cut)-")
            #expect(requests[1].header("If-Range") == decoded.validator)
            #expect(requests[1].headerValues("Accept-Encoding") == [])
        }

        /// Resume data for the text every server compresses, validated by its ETag or by its date
        /// only: the rest comes as the file's bytes, never as a slice of a coding (which Apache
        /// would have sent, had the request accepted gzip: If-Range by date matches there).
        @Test(arguments: ForeignServerKind.allCases, [true, false])
        func resumingTheCompressibleTextCompletesIt(_ kind: ForeignServerKind, byETag: Bool) throws {
            let server = try TestServers.foreign(kind)
            let url = server.url(ForeignServer.textPath)
            let harness = ClientHarness()
            // The validators of the file itself: a Range asks for no coding.
            let probe = harness.fetch(url, fields: [("Range", "bytes=0-0")])
            #expect(probe.status == 206)
            let etag = try #require(probe.response?.headerFields[.eTag])
            let lastModified = try #require(probe.response?.headerFields[.lastModified])
            let partial = Self.text.prefix(50_000)
            let file = DownloadTemporaryFile.makeURL()
            try partial.write(to: file)
            var resume = try #require(DownloadResumeData(request: Request(url: URL(string: url)!, timeoutInterval: 30),
                                                         entityTag: byETag ? etag : nil, lastModified: lastModified,
                                                         temporaryFilePath: file.path))
            resume.bytesReceived = Int64(partial.count)

            let download = DownloadProbe()
            let task = try harness.manager.downloadTask(withResumeData: resume.encoded(), completionHandler: download.completion)
            #expect(task.currentRequest.value(forHTTPHeaderField: "If-Range") == (byETag ? etag : lastModified))
            task.resume()
            let outcome = try #require(download.wait())
            #expect(outcome.error == nil)
            #expect(outcome.status == 206)
            #expect(outcome.response?.headerFields[.contentEncoding] == nil)
            #expect(outcome.contents == Self.text)
            harness.finish()
        }
    }
}

/// A loopback relay in front of a server: the first request's response goes on with its head
/// and only the first `cut` bytes of its body, after which the relay holds the connection until
/// the client closes it; later requests are relayed whole. It keeps every request it relayed.
/// Responses must be framed by Content-Length (static files are, on every server here).
final class CuttingRelay: Sendable {
    private let server: ScriptedServer
    private let seen = Recorder<ScriptedRequest>()

    init(upstreamPort: Int, cut: Int) throws {
        let seen = seen
        server = try ScriptedServer { connection in
            while let request = try? connection.readRequest(timeout: 30) {
                let isFirst = seen.count == 0
                seen.append(request)
                let upstream = try RawTCPClient(port: upstreamPort)
                try upstream.write(Array(request.head.utf8) + request.body)
                let response = try upstream.readResponse(timeout: 10)
                upstream.close()
                guard response.header("Transfer-Encoding") == nil else {
                    throw TestServerError(description: "the relay cannot cut a chunked body")
                }
                if isFirst {
                    try connection.write(Array(response.head.utf8) + response.body.prefix(cut))
                    _ = connection.waitForPeerClose(timeout: 30)
                    return
                }
                try connection.write(Array(response.head.utf8) + response.body)
            }
        }
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(server.port)\(path)" }
    var requests: [ScriptedRequest] { seen.all }
    func stop() { server.stop() }
}

/// What curl received: status, head fields and the body as sent (no `--compressed`).
struct CurlResponse {
    var status: Int
    var headers: [(String, String)]
    var body: Data

    func header(_ name: String) -> String? {
        headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
    }
}

/// GET `url` with Debian's curl and `fields` (as `-H` takes them).
func curlGet(_ url: String, fields: [String]) throws -> CurlResponse {
    let directory = try TestServers.makeTemporaryDirectory(prefix: "uvnetworking-curl")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = ["-s", "-S", "--max-time", "30", "-D", directory + "/head", "-o", directory + "/body"]
        + fields.flatMap { ["-H", $0] } + [url]
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw TestServerError(description: "curl \(url) exited \(process.terminationStatus)") }
    let head = try String(contentsOfFile: directory + "/head", encoding: .utf8)
    let lines = head.components(separatedBy: "\r\n").filter { !$0.isEmpty }
    guard let statusLine = lines.first, let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "") else {
        throw TestServerError(description: "curl's head: \(head)")
    }
    let headers = lines.dropFirst().compactMap { line -> (String, String)? in
        guard let colon = line.firstIndex(of: ":") else { return nil }
        return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }
    return CurlResponse(status: status, headers: headers, body: try Data(contentsOf: URL(fileURLWithPath: directory + "/body")))
}
