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
        for field in headers where field.name.utf8.count == 14 && field.name.lowercased() == "content-length" {
            guard found == nil, let value = Int64(field.value), value >= 0 else { return nil }
            found = value
        }
        return found
    }
}
