import HTTPTypes

extension ResponseHead {
    /// The head as a swift-http-types response. Built off the loop thread (on the worker pool, or
    /// when a caller asks a task for its response): validating every field name costs more than
    /// the loop can spare per request.
    var httpResponse: HTTPResponse {
        var fields: [HTTPField] = []
        fields.reserveCapacity(headers.count)
        for field in headers {
            // The decoder only lets tokens through as names, so this never drops a field.
            if let name = HTTPField.Name(field.name) { fields.append(HTTPField(name: name, value: field.value)) }
        }
        return HTTPResponse(status: .init(code: status, reasonPhrase: reason), headerFields: HTTPFields(fields))
    }

    /// The Content-Length value when the response has exactly one valid one.
    var contentLength: Int64? {
        var found: Int64?
        for field in headers where Self.isContentLength(field.name) {
            guard found == nil, let value = Int64(field.value), value >= 0 else { return nil }
            found = value
        }
        return found
    }

    /// ASCII case-insensitive "content-length", without making a lowercased copy per field.
    private static func isContentLength(_ name: String) -> Bool {
        let expected = "content-length".utf8
        guard name.utf8.count == expected.count else { return false }
        return zip(name.utf8, expected).allSatisfy { byte, lower in
            (byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) == lower
        }
    }
}
