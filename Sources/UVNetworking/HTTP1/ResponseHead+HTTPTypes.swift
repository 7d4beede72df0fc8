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
}
