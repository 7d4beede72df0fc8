import HTTPTypes
import OpenAPIRuntime
import UVNetworking

/// Turns a streamed response body into the `HTTPBody` the generated client reads.
enum ResponseBody {
    /// The body of `response` read from `stream`, or nil for a response that has none (to a
    /// HEAD request, or 1xx, 204, 304), whose stream is run to its end so that its connection
    /// goes back to the pool.
    static func make(for response: HTTPResponse, method: HTTPRequest.Method,
                     stream: AsyncBodyStream) async throws -> HTTPBody? {
        let code = response.status.code
        if method == .head || (100..<200).contains(code) || code == 204 || code == 304 {
            for try await _ in stream {}
            return nil
        }
        return HTTPBody(stream, length: length(of: response), iterationBehavior: .single)
    }

    /// The Content-Length, when the body arrives as it was sent: a decoded body (the session
    /// undoes gzip and deflate and keeps the Content-Encoding field) has another length.
    static func length(of response: HTTPResponse) -> HTTPBody.Length {
        let fields = response.headerFields
        if let coding = fields[.contentEncoding], coding.lowercased() != "identity" { return .unknown }
        guard let text = fields[.contentLength], let length = Int64(text), length >= 0 else { return .unknown }
        return .known(length)
    }
}
