import Foundation
import Testing
@testable import UVNetworking

/// Resume data: what it keeps, what it refuses, and the request it makes.
@Suite(.tags(.loopback)) struct DownloadResumeDataTests {
    private func sample(etag: String? = "\"v1\"", lastModified: String? = nil,
                        path: String = DownloadTemporaryFile.makeURL().path) -> DownloadResumeData? {
        var request = Request(url: URL(string: "http://h/file")!, timeoutInterval: 42)
        request.addValue("token", forHTTPHeaderField: "Authorization")
        request.addValue("bytes=5-", forHTTPHeaderField: "Range")
        request.addValue("\"old\"", forHTTPHeaderField: "If-Range")
        return DownloadResumeData(request: request, entityTag: etag, lastModified: lastModified, temporaryFilePath: path)
    }

    private func decodingError(_ data: Data) -> NetworkingError.Code? {
        do {
            _ = try DownloadResumeData.decode(data)
            return nil
        } catch {
            return error.code
        }
    }

    @Test func roundTripsAndMakesARangeRequest() throws {
        var resume = try #require(sample())
        resume.bytesReceived = 123
        let decoded = try DownloadResumeData.decode(resume.encoded())
        #expect(decoded == resume)
        let request = decoded.request(resumingAt: 123)
        #expect(request.method == .get)
        #expect(request.url.absoluteString == "http://h/file")
        #expect(request.timeoutInterval == 42)
        #expect(request.value(forHTTPHeaderField: "Range") == "bytes=123-")
        #expect(request.value(forHTTPHeaderField: "If-Range") == "\"v1\"")
        #expect(request.value(forHTTPHeaderField: "Authorization") == "token")
        // No coding asked for: the Range keeps the session's Accept-Encoding off it too.
        #expect(request.value(forHTTPHeaderField: "Accept-Encoding") == nil)
        #expect(request.headerFields.filter { $0.name == "Range" }.count == 1)
        #expect(decoded.wholeRequest().value(forHTTPHeaderField: "Range") == nil)
        #expect(decoded.wholeRequest().value(forHTTPHeaderField: "If-Range") == nil)
    }

    /// The coding of the file's bytes is kept (a resumed range must be in the same one), and
    /// data made before it was recorded, without the key, still reads as "no coding".
    @Test func keepsTheFilesCodingAndReadsDataWithoutIt() throws {
        var request = Request(url: URL(string: "http://h/file")!)
        request.addValue("gzip", forHTTPHeaderField: "Accept-Encoding")
        let path = DownloadTemporaryFile.makeURL().path
        let resume = try #require(DownloadResumeData(request: request, entityTag: "\"v1\"", lastModified: nil,
                                                     contentEncoding: "gzip", temporaryFilePath: path))
        let decoded = try DownloadResumeData.decode(resume.encoded())
        #expect(decoded.contentEncoding == "gzip")
        // The caller's own Accept-Encoding goes with the range.
        #expect(decoded.request(resumingAt: 10).value(forHTTPHeaderField: "Accept-Encoding") == "gzip")
        var json = try #require(JSONSerialization.jsonObject(with: resume.encoded()) as? [String: Any])
        json["contentEncoding"] = nil
        let older = try DownloadResumeData.decode(JSONSerialization.data(withJSONObject: json))
        #expect(older.contentEncoding == nil)
    }

    /// Every timeout a request may carry survives the round trip: a total limit, and values JSON
    /// has no number for (infinity meant "no timeout" and made the data empty).
    /// The request's settings that are not fields go with it (a download that kept off
    /// cellular links resumes off them too); data made before they were kept resumes with the
    /// defaults.
    @Test func keepsTheRequestsSettingsAndReadsDataWithoutThem() throws {
        var request = Request(url: URL(string: "http://h/file")!)
        request.httpShouldHandleCookies = false
        request.cachePolicy = .reloadIgnoringLocalCacheData
        request.networkServiceType = .background
        request.httpShouldUsePipelining = true
        request.allowsCellularAccess = false
        let resume = try #require(DownloadResumeData(request: request, entityTag: "\"v1\"", lastModified: nil,
                                                     temporaryFilePath: DownloadTemporaryFile.makeURL().path))
        let decoded = try DownloadResumeData.decode(resume.encoded())
        for resumed in [decoded.request(resumingAt: 10), decoded.wholeRequest()] {
            #expect(!resumed.httpShouldHandleCookies)
            #expect(resumed.cachePolicy == .reloadIgnoringLocalCacheData)
            #expect(resumed.networkServiceType == .background)
            #expect(resumed.httpShouldUsePipelining)
            #expect(!resumed.allowsCellularAccess)
        }

        var json = try #require(JSONSerialization.jsonObject(with: resume.encoded()) as? [String: Any])
        #expect(json["networkServiceType"] as? String == "background")
        #expect(json["cachePolicy"] as? String == "reloadIgnoringLocalCacheData")
        for key in ["httpShouldHandleCookies", "cachePolicy", "networkServiceType", "httpShouldUsePipelining", "allowsCellularAccess"] {
            json[key] = nil
        }
        let older = try DownloadResumeData.decode(JSONSerialization.data(withJSONObject: json)).request(resumingAt: 10)
        #expect(older.httpShouldHandleCookies)
        #expect(older.cachePolicy == .useProtocolCachePolicy)
        #expect(older.networkServiceType == .default)
        #expect(!older.httpShouldUsePipelining)
        #expect(older.allowsCellularAccess)

        // A value this library does not know is not resume data of its making.
        json["networkServiceType"] = "carrierPigeon"
        #expect(decodingError(try JSONSerialization.data(withJSONObject: json)) == .invalidResumeData)
    }

    @Test func keepsEveryTimeout() throws {
        var request = Request(url: URL(string: "http://h/file")!, timeoutInterval: .infinity)
        request.totalTimeoutInterval = 30
        let path = DownloadTemporaryFile.makeURL().path
        let resume = try #require(DownloadResumeData(request: request, entityTag: "\"v1\"", lastModified: nil, temporaryFilePath: path))
        let decoded = try DownloadResumeData.decode(resume.encoded())
        #expect(decoded.wholeRequest().timeoutInterval == .infinity)
        #expect(decoded.request(resumingAt: 1).totalTimeoutInterval == 30)
        request.timeoutInterval = .nan
        request.totalTimeoutInterval = -.infinity
        let odd = try #require(DownloadResumeData(request: request, entityTag: "\"v1\"", lastModified: nil, temporaryFilePath: path))
        let oddRequest = try DownloadResumeData.decode(odd.encoded()).wholeRequest()
        // Both mean "none" (LoopDuration.timeout), whatever the value.
        #expect(LoopDuration.timeout(oddRequest.timeoutInterval) == .max)
        #expect(LoopDuration.timeout(oddRequest.totalTimeoutInterval ?? .infinity) == .max)
    }

    @Test func validators() {
        #expect(sample(etag: "W/\"weak\"", lastModified: nil) == nil)
        #expect(sample(etag: nil, lastModified: nil) == nil)
        let dated = sample(etag: "W/\"weak\"", lastModified: "Tue, 01 Jan 2030 00:00:00 GMT")
        #expect(dated?.entityTag == nil)
        #expect(dated?.validator == "Tue, 01 Jan 2030 00:00:00 GMT")
        #expect(sample(etag: "\"strong\"", lastModified: "Tue, 01 Jan 2030 00:00:00 GMT")?.validator == "\"strong\"")
    }

    @Test func refusesWhatItDidNotMake() throws {
        #expect(decodingError(Data("not json".utf8)) == .invalidResumeData)
        #expect(decodingError(Data("{}".utf8)) == .invalidResumeData)
        let good = try #require(sample())
        var other = good
        other.version = 99
        #expect(decodingError(other.encoded()) == .invalidResumeData)
        other = good
        other.temporaryFilePath = "/etc/passwd"
        #expect(decodingError(other.encoded()) == .invalidResumeData)
        other.temporaryFilePath = FileManager.default.temporaryDirectory.appendingPathComponent("someone-elses.bin").path
        #expect(decodingError(other.encoded()) == .invalidResumeData)
        other.temporaryFilePath = FileManager.default.temporaryDirectory
            .appendingPathComponent("sub/\(DownloadTemporaryFile.namePrefix)x.tmp").path
        #expect(decodingError(other.encoded()) == .invalidResumeData)
        other = good
        other.entityTag = nil
        #expect(decodingError(other.encoded()) == .invalidResumeData)
        other = good
        other.bytesReceived = -1
        #expect(decodingError(other.encoded()) == .invalidResumeData)
        other = good
        other.url = URL(string: "file:///etc/passwd")!
        #expect(decodingError(other.encoded()) == .invalidResumeData)
        #expect(decodingError(good.encoded()) == nil)
    }

    @Test func aManagerRefusesInvalidDataAndAMissingPartialFile() throws {
        let manager = SessionManager()
        #expect(throws: NetworkingError.self) { _ = try manager.downloadTask(withResumeData: Data("junk".utf8)) }
        let missing = try #require(sample())
        do {
            _ = try manager.downloadTask(withResumeData: missing.encoded())
            Issue.record("resume data whose partial file is gone was accepted")
        } catch {
            #expect(error.code == .invalidResumeData)
        }
        #expect(manager.tasks.isEmpty)
        manager.invalidateSessionCancelingTasks(true, resetSession: false)
    }
}
