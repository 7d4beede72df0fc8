import Foundation

extension MultipartFormData {
    /// Appends a file part named `name` with the file's last path component as its filename and
    /// a MIME type guessed from its extension (a built-in table of common types, else
    /// application/octet-stream).
    ///
    /// Throws `.multipartFormDataFailed` when `fileURL` is not a file URL, or names nothing, a
    /// directory, something other than a regular file, or a file this process cannot read. The
    /// file's size is taken now; the file is read only when the body is.
    public func appendPart(withFileURL fileURL: URL, name: String) throws {
        try appendPart(withFileURL: fileURL, name: name, fileName: fileURL.lastPathComponent,
                       mimeType: MIMETypes.forPathExtension(fileURL.pathExtension))
    }

    /// Appends a file part with the given filename and MIME type: the checks and the timing of
    /// `appendPart(withFileURL:name:)`; also throws when `mimeType` has control bytes.
    public func appendPart(withFileURL fileURL: URL, name: String, fileName: String, mimeType: String) throws {
        let file = try MultipartFile.probe(fileURL)
        let headers = try MultipartHeaders.filePart(name: name, fileName: fileName, mimeType: mimeType)
        append(MultipartPart(headers: headers, body: .file(path: file.path, size: file.size)))
    }

    /// Appends a part whose body is read from `stream`, which must deliver exactly `length`
    /// bytes: `contentLength` counts on it, and a read of the body fails if the stream ends
    /// sooner or has more.
    ///
    /// The stream is given up (`sending`: InputStream is not Sendable, and the reader that takes
    /// it may run on another thread), opened if it is not yet open, read once, and closed. A form
    /// with a stream part can therefore be read only once (`isReplayable` is false).
    /// Throws when `length` is negative or `mimeType` has control bytes.
    public func appendPart(with stream: sending InputStream, name: String, fileName: String, length: Int64,
                           mimeType: String) throws {
        guard length >= 0 else { throw NetworkingError.multipart("a multipart stream part cannot have a negative length (\(length))") }
        let headers = try MultipartHeaders.filePart(name: name, fileName: fileName, mimeType: mimeType)
        append(MultipartPart(headers: headers, body: .stream(MultipartStreamBox(stream), length: length)))
    }

    /// Appends a file part whose body is `data`. Throws when `mimeType` has control bytes.
    public func appendPart(withFileData data: Data, name: String, fileName: String, mimeType: String) throws {
        let headers = try MultipartHeaders.filePart(name: name, fileName: fileName, mimeType: mimeType)
        append(MultipartPart(headers: headers, body: .data(data)))
    }

    /// Appends a form field: `Content-Disposition: form-data; name="..."` and `data` as its value.
    public func appendPart(withForm data: Data, name: String) {
        append(MultipartPart(headers: MultipartHeaders.formField(name: name), body: .data(data)))
    }

    /// Appends a part with exactly the given header lines, in order, and `body`.
    ///
    /// The headers are sent as given, so each name must be an HTTP token and no value may hold
    /// CR, LF, NUL or another control byte (HTAB is fine); otherwise this throws
    /// `.multipartFormDataFailed` and appends nothing.
    public func appendPart(withHeaders headers: [(name: String, value: String)], body: Data) throws {
        append(MultipartPart(headers: try MultipartHeaders.custom(headers), body: .data(body)))
    }
}
