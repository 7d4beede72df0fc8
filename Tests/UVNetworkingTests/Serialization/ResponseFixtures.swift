import Foundation
import HTTPTypes

/// A response as the session hands it to serializers.
func makeResponse(_ status: Int, reason: String = "", contentType: String? = nil) -> HTTPResponse {
    var fields = HTTPFields()
    if let contentType { fields[.contentType] = contentType }
    return HTTPResponse(status: .init(code: status, reasonPhrase: reason), headerFields: fields)
}

extension Data {
    /// The UTF-8 bytes of `text`.
    init(utf8 text: String) { self.init(text.utf8) }
}
