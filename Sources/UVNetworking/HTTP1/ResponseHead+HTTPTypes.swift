import HTTPTypes

extension ResponseHead {
    /// The head as a swift-http-types response. Built off the loop thread (on the worker pool, or
    /// when a caller asks a task for its response): validating and lowercasing field names costs
    /// more than the loop can spare per request.
    var httpResponse: HTTPResponse {
        var fields = HTTPFields()
        // Without this, appending grows the storage several times for a typical head.
        fields.reserveCapacity(headers.count)
        for index in headers.indices {
            headers.withField(at: index) { name, value in
                // The decoder only lets tokens through as names, so this never drops a field.
                guard let name = HTTPField.Name.received(name) else { return }
                if value.allSatisfy({ $0 < 0x80 }) {
                    fields.append(HTTPField(name: name, value: String(decoding: value, as: UTF8.self)))
                } else {
                    // Bytes, not a String: a value with obs-text stays as received. (Slower:
                    // swift-http-types validates UTF-8 through unspecialised generic code.)
                    fields.append(HTTPField(name: name, value: value))
                }
            }
        }
        return HTTPResponse(status: .init(code: status, reasonPhrase: reason), headerFields: fields)
    }
}

extension HTTPField.Name {
    /// The names most responses carry, spelled as servers usually send them, grouped by length.
    private static let commonByLength: [[(spelling: [UInt8], name: HTTPField.Name)]] = {
        let names: [HTTPField.Name] = [
            .contentType, .contentLength, .date, .server, .connection, .eTag, .lastModified,
            .acceptRanges, .cacheControl, .transferEncoding, .location, .vary, .expires,
            .contentEncoding, .contentDisposition, .setCookie, .age, .retryAfter, .wwwAuthenticate,
            .strictTransportSecurity, .accessControlAllowOrigin,
        ]
        var table = Array(repeating: [(spelling: [UInt8], name: HTTPField.Name)](), count: 33)
        for name in names {
            let spelling = Array(name.rawName.utf8)
            table[spelling.count].append((spelling, name))
        }
        return table
    }()

    /// The name for bytes received from a peer, or nil if they are not a token.
    ///
    /// A name spelled exactly like a common one reuses its value: no validation, no lowercasing
    /// and no allocation. Any other spelling goes through the checking initializer, so `rawName`
    /// always keeps the peer's spelling.
    static func received(_ bytes: UnsafeBufferPointer<UInt8>) -> HTTPField.Name? {
        let table = commonByLength
        if bytes.count < table.count {
            for candidate in table[bytes.count] where candidate.spelling.withUnsafeBufferPointer({ $0.elementsEqual(bytes) }) {
                return candidate.name
            }
        }
        return HTTPField.Name(String(decoding: bytes, as: UTF8.self))
    }
}
