import Foundation

/// What `DownloadTask.cancel(byProducingResumeData:)` hands out, as JSON: enough to ask the
/// server for the rest of the body and append it to the partial file. Callers treat the bytes
/// as opaque and give them back to `downloadTask(withResumeData:)`.
///
/// Resuming relies on a validator (RFC 9110 §13.1.5): the request carries
/// `Range: bytes=N-` and `If-Range: <validator>`, so a server whose resource changed sends the
/// whole new body (200) instead of the rest of a different one. Only a strong ETag or a
/// Last-Modified date qualifies (If-Range must not carry a weak ETag).
struct DownloadResumeData: Codable, Equatable, Sendable {
    static let currentVersion = 1

    /// A request header field, in order.
    struct Field: Codable, Equatable, Sendable {
        var name: String
        var value: String
    }

    var version = Self.currentVersion
    /// The URL the body came from (after redirects: the one the validator belongs to).
    var url: URL
    /// The request's header fields, without Range and If-Range (credentials for another origin
    /// were already dropped by the redirect rules).
    var headerFields: [Field]
    /// The request's timeouts; nil where the request had none a JSON number can carry
    /// (infinite or NaN both mean "no timeout"; JSONEncoder refuses them).
    var timeoutInterval: TimeInterval?
    var totalTimeoutInterval: TimeInterval?
    /// The response's strong ETag, when it had one.
    var entityTag: String?
    /// The response's Last-Modified, when it had one.
    var lastModified: String?
    /// The response's Content-Encoding: the coding of the bytes in the file, which are kept as
    /// sent (nil for none). A range in another coding would not continue them.
    var contentEncoding: String?
    /// The request's settings that are not fields; nil in data made before they were kept,
    /// which then resumes with the defaults (Codable reads a missing optional key as nil, so
    /// the version stays 1).
    var httpShouldHandleCookies: Bool?
    var cachePolicy: Request.CachePolicy?
    var networkServiceType: NetworkServiceType?
    var httpShouldUsePipelining: Bool?
    var allowsCellularAccess: Bool?
    /// The partial file's size when the data was made.
    var bytesReceived: Int64
    /// The partial file, in the temporary directory.
    var temporaryFilePath: String

    /// What If-Range carries: the ETag, else the date.
    var validator: String? { entityTag ?? lastModified }

    /// A basis for resume data from `request` and the validators of a response being written to
    /// `temporaryFilePath`, or nil when nothing can validate a resumption.
    init?(request: Request, entityTag: String?, lastModified: String?, contentEncoding: String? = nil, temporaryFilePath: String) {
        let strongTag = entityTag.flatMap { $0.hasPrefix("W/") ? nil : $0 }
        guard strongTag != nil || lastModified != nil else { return nil }
        self.url = request.url
        self.headerFields = request.headerFields
            .filter { $0.name.caseInsensitiveCompare("Range") != .orderedSame && $0.name.caseInsensitiveCompare("If-Range") != .orderedSame }
            .map { Field(name: $0.name, value: $0.value) }
        self.timeoutInterval = request.timeoutInterval.isFinite ? request.timeoutInterval : nil
        self.totalTimeoutInterval = request.totalTimeoutInterval.flatMap { $0.isFinite ? $0 : nil }
        self.httpShouldHandleCookies = request.httpShouldHandleCookies
        self.cachePolicy = request.cachePolicy
        self.networkServiceType = request.networkServiceType
        self.httpShouldUsePipelining = request.httpShouldUsePipelining
        self.allowsCellularAccess = request.allowsCellularAccess
        self.entityTag = strongTag
        self.lastModified = lastModified
        self.contentEncoding = contentEncoding
        self.bytesReceived = 0
        self.temporaryFilePath = temporaryFilePath
    }

    /// The JSON bytes handed to the caller.
    func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Encoding these plain fields cannot fail.
        return (try? encoder.encode(self)) ?? Data()
    }

    /// Reads resume data back; throws `invalidResumeData` for bytes this library did not make
    /// (not JSON of this shape, another version, no validator, a negative count, a URL that is
    /// not http(s), a partial file outside `directory`: the session's download directory, nil for
    /// the temporary directory).
    static func decode(_ data: Data, directory: URL? = nil) throws(NetworkingError) -> DownloadResumeData {
        let decoded: DownloadResumeData
        do {
            decoded = try JSONDecoder().decode(DownloadResumeData.self, from: data)
        } catch {
            throw NetworkingError(.invalidResumeData, "the resume data does not decode: \(error)", underlyingError: error)
        }
        guard decoded.version == currentVersion else {
            throw NetworkingError(.invalidResumeData, "resume data version \(decoded.version) is not \(currentVersion)")
        }
        guard decoded.validator != nil, !(decoded.entityTag?.hasPrefix("W/") ?? false) else {
            throw NetworkingError(.invalidResumeData, "the resume data has no strong validator (ETag or Last-Modified)")
        }
        guard decoded.bytesReceived >= 0 else { throw NetworkingError(.invalidResumeData, "the resume data counts negative bytes") }
        guard let scheme = decoded.url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw NetworkingError(.invalidResumeData, "the resume data's URL \(decoded.url.absoluteString) is not http or https")
        }
        guard DownloadTemporaryFile.isDownloadFile(decoded.temporaryFilePath, in: directory) else {
            throw NetworkingError(.invalidResumeData, "the resume data names \(decoded.temporaryFilePath), which is not a download file of this library")
        }
        return decoded
    }

    /// The request for the whole body: GET with the original fields and settings.
    func wholeRequest() -> Request {
        var request = Request(url: url, method: .get, timeoutInterval: timeoutInterval ?? .infinity)
        request.totalTimeoutInterval = totalTimeoutInterval
        request.headerFields = headerFields.map { ($0.name, $0.value) }
        if let httpShouldHandleCookies { request.httpShouldHandleCookies = httpShouldHandleCookies }
        if let cachePolicy { request.cachePolicy = cachePolicy }
        if let networkServiceType { request.networkServiceType = networkServiceType }
        if let httpShouldUsePipelining { request.httpShouldUsePipelining = httpShouldUsePipelining }
        if let allowsCellularAccess { request.allowsCellularAccess = allowsCellularAccess }
        return request
    }

    /// The request for the rest of the body from byte `offset`, valid only if the resource is
    /// unchanged. Its Range keeps the session's Accept-Encoding off it (as curl's resumed
    /// transfers send none), and a 206 is never decoded: only a file of the bytes as sent is
    /// resumed (`captureResumeBasis`), so the range continues it byte for byte.
    func request(resumingAt offset: Int64) -> Request {
        var request = wholeRequest()
        request.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
        request.setValue(validator, forHTTPHeaderField: "If-Range")
        return request
    }
}
