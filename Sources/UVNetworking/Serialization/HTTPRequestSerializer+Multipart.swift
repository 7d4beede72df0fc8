import Foundation
import HTTPTypes

/// The multipart body reader is the stream a multipart request sends: the session reads it on
/// its worker pool, one chunk at a time, so a form of any size uploads in bounded memory.
extension MultipartBodyReader: RequestBodyStream {}

extension HTTPRequestSerializer {
    /// A multipart/form-data request, like AFNetworking's
    /// multipartFormRequestWithMethod:URLString:parameters:constructingBodyWithBlock:error:.
    ///
    /// `parameters` become text fields first (flattened by the query-string rules; `Data` values
    /// are sent as they are, NSNull as an empty field), then `constructingBody` adds its parts.
    /// The body is streamed from the parts (files are read from disk on the worker pool) with an
    /// exact Content-Length. A form whose parts can all be read again (no InputStream part) is
    /// re-sent whole if the request is retried; a form with a stream part cannot be, and a retry
    /// then fails with `bodyStreamFailed`. An empty form sends no body, as in AFNetworking.
    /// Throttling (`throttleBandwidth`) sends one packet per `delay`, timed on the loop.
    public func multipartFormRequest(method: HTTPRequest.Method, urlString: String, parameters: [String: Any]? = nil,
                                     constructingBody: (MultipartFormData) throws -> Void) throws -> Request {
        precondition(method != .get && method != .head, "a GET or HEAD request cannot carry a multipart body")
        var request = try request(method: method, urlString: urlString, parameters: nil)
        let form = MultipartFormData()
        for (name, value) in QueryString.valuePairs(from: parameters ?? [:]) {
            form.appendPart(withForm: Self.formFieldData(value), name: name)
        }
        try constructingBody(form)
        guard !form.isEmpty else { return request }
        request.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
        var body = StreamedBody(length: form.contentLength) { () throws -> any RequestBodyStream in
            try form.makeBodyReader()
        }
        body.pacing = form.throttle
        request.bodyStream = body
        return request
    }

    /// A flattened parameter as a text field's bytes: `Data` as it is, nil or NSNull as nothing,
    /// anything else as the query string would write it.
    private static func formFieldData(_ value: Any?) -> Data {
        guard let value, !(value is NSNull) else { return Data() }
        if let data = value as? Data { return data }
        return Data(QueryString.text(of: value).utf8)
    }
}
